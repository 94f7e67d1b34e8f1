"""The runner image: kcts itself, installed from its wheel, for running the suites without a checkout.

    kcts image --runner      ->  kcts-runner:<version> (and kcts-runner:latest)
    docker run --rm --network host -v "$PWD/reports:/reports" kcts-runner kcts run -m smoke

It is built on the base image like the others (harness.containers.images), from `docker/runner/Dockerfile`
and a context made here: the checkout's wheel, built from a copy of its files (tracked and untracked,
git's ignored ones left out, so a stale build/ never ships); its dependencies as wheels, built once by
pip on this machine (from PyPI, at the versions this kcts runs with) and kept under the user cache; the
default Kafka release's jars as `harness.kafka.dist` resolved them. The build itself downloads only
Debian packages (the JDK, Python, Maven), and a run needs no download at all.

The wheels are built here for the image's Python, Debian bookworm's 3.11: this kcts must run on 3.11 too.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness import layout
from harness.containers import images
from harness.errors import SetupError
from harness.kafka.dist import KafkaDistribution, cache_root

if TYPE_CHECKING:
    import docker

REPO = "kcts-runner"
IMAGE_PYTHON = (3, 11)  # Debian bookworm's python3, which the image installs
PIP_TIMEOUT = 1800
# A fixed wheel timestamp: the same files make the same wheel, so the image's tag is reused.
SOURCE_DATE_EPOCH = "315532800"


@dataclass(frozen=True)
class Wheels:
    """What goes into the image's Python: the checkout's wheel and its dependencies' wheels."""

    kcts: Path
    deps: Path  # a folder of wheels, the dependency closure (kcts itself excluded)


def _pip(*args: str, cwd: Path | None = None, what: str) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    try:
        proc = subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=PIP_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SetupError(f"{what} took over {PIP_TIMEOUT} s (pip); is PyPI reachable?") from None
    if proc.returncode != 0:
        raise SetupError(f"{what} failed (pip exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-1500:]}")


def _checkout() -> Path:
    if layout.CHECKOUT is None:
        raise SetupError("kcts image --runner builds kcts's wheel from a checkout; this kcts was installed from a "
                         "wheel. Run it from a checkout (git clone, then pip install -e .)")
    if sys.version_info[:2] != IMAGE_PYTHON:
        wanted = ".".join(map(str, IMAGE_PYTHON))
        raise SetupError(f"kcts image --runner builds the image's Python wheels here, for its Python {wanted} "
                         f"(Debian bookworm); this kcts runs on {sys.version.split()[0]}. Run it from a Python "
                         f"{wanted} environment")
    return layout.CHECKOUT


def _source_files(root: Path) -> list[str]:
    """The checkout's files as a user's clone would hold them, with this working tree's changes."""
    proc = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          capture_output=True, timeout=60)
    if proc.returncode != 0:
        raise SetupError(f"cannot list the checkout's files (git ls-files in {root}): "
                         f"{proc.stderr.decode(errors='replace').strip()[:300]}")
    return sorted({n for n in proc.stdout.decode().split("\0") if n and (root / n).is_file()})


def build_wheel(out: Path) -> Path:
    """The checkout's wheel, built from a clean copy of its files into `out`."""
    root = _checkout()
    with tempfile.TemporaryDirectory(prefix="kcts-runner-src-") as tmp:
        src = Path(tmp) / "kcts"
        for name in _source_files(root):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, src / name)
        _pip("wheel", "--no-deps", "-q", "-w", str(out), str(src), what="building kcts's wheel")
    (wheel,) = out.glob("kcts-*.whl")
    return wheel


def _constraints() -> str:
    """The versions this kcts runs with (pip freeze), so that the image judges with the same libraries."""
    proc = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"], capture_output=True,
                          text=True, timeout=120)
    if proc.returncode != 0:
        raise SetupError(f"pip freeze failed: {proc.stderr.strip()[:300]}")
    # `name @ url` lines (kcts's own editable wheel) pin a file of this machine, not a version.
    return "".join(f"{line}\n" for line in sorted(proc.stdout.splitlines()) if "==" in line and " @ " not in line)


def dependency_wheels(kcts_wheel: Path) -> Path:
    """The wheels of kcts's dependency closure at this environment's versions, built once per set of
    requirements and versions and kept in the user cache (pyspark alone is 450 MB)."""
    constraints = _constraints()
    requires = subprocess.run([sys.executable, "-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); "
                               "print(*(l for n in z.namelist() if n.endswith('.dist-info/METADATA') "
                               "for l in z.read(n).decode().splitlines() if l.startswith('Requires-Dist:')), "
                               "sep='\\n')", str(kcts_wheel)], capture_output=True, text=True, timeout=60).stdout
    key = hashlib.sha256(f"{requires}\0{constraints}".encode()).hexdigest()[:12]
    folder = cache_root() / "docker" / "runner-wheels" / key
    if (folder / "complete").is_file():
        return folder
    with _lock(folder.parent / f"{key}.lock"):
        if (folder / "complete").is_file():
            return folder
        staging = folder.with_name(f"{key}.tmp{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            (staging / "constraints.txt").write_text(constraints)
            _pip("wheel", "-q", "-w", str(staging), "-c", str(staging / "constraints.txt"), str(kcts_wheel),
                 what="building the wheels of kcts's dependencies")
            for own in staging.glob("kcts-*.whl"):
                own.unlink()
            (staging / "constraints.txt").unlink()
            (staging / "complete").write_text(json.dumps(sorted(p.name for p in staging.glob("*.whl"))))
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        # Only the current set is worth keeping.
        for old in folder.parent.iterdir():
            if old.is_dir() and old != folder:
                shutil.rmtree(old, ignore_errors=True)
    return folder


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _revision(root: Path | None) -> str:
    """The checkout's commit, `+dirty` when its tracked files differ from it: a wheel knows no commit,
    so the image's label is where a user finds which checkout it came from."""
    if root is None:
        return "unknown"
    git = ["git", "-C", str(root)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    if head.returncode != 0:
        return "unknown"
    status = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                            timeout=30)
    return head.stdout.strip() + ("+dirty" if status.stdout.strip() else "")


def runner_tag(base: str, version: str, wheels: Wheels, dist: KafkaDistribution) -> str:
    """`kcts-runner:<version>-<hash>` of everything that goes in: a changed input builds a new image."""
    dockerfile = images.DOCKER_DIR / "runner" / "Dockerfile"
    jars = "\n".join(f"{j.name}:{j.stat().st_size}" for j in sorted(dist.jars))
    return f"{REPO}:{version}-" + images._digest(
        base, dockerfile.read_bytes(), images._file_digest(wheels.kcts), (wheels.deps / "complete").read_text(),
        dist.version, jars)


def ensure_runner(c: docker.DockerClient, dist: KafkaDistribution, version: str, scratch: Path) -> images.Built:
    """kcts-runner:<version> on the base image, with the checkout's wheel, its dependencies and the
    jars of `dist` in the image's cache; reused when nothing that goes in changed."""
    kcts_wheel = build_wheel(scratch)
    wheels = Wheels(kcts_wheel, dependency_wheels(kcts_wheel))
    base = images.ensure_base(c)

    def fill(ctx: Path) -> None:
        shutil.copy2(images.DOCKER_DIR / "runner" / "Dockerfile", ctx / "Dockerfile")
        (ctx / "kcts").mkdir()
        shutil.copy2(wheels.kcts, ctx / "kcts" / wheels.kcts.name)
        (ctx / "wheels").mkdir()
        for wheel in sorted(wheels.deps.glob("*.whl")):
            images._link_or_copy(wheel, ctx / "wheels" / wheel.name)
        (ctx / "kafka" / "libs").mkdir(parents=True)
        shutil.copy2(dist.home / "manifest.json", ctx / "kafka" / "manifest.json")
        for jar in dist.jars:
            images._link_or_copy(jar, ctx / "kafka" / "libs" / jar.name)

    built = images._ensure_on_base(c, base, runner_tag(base.tag, version, wheels, dist), fill,
                                   {"KCTS_VERSION": version, "KAFKA_VERSION": dist.version,
                                    "KCTS_REVISION": _revision(layout.CHECKOUT)}, f"{REPO}:{version}")
    c.images.get(built.tag).tag(REPO, "latest")
    return built
