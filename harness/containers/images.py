"""The images the docker backend runs, built offline and reused.

- the base: a Debian root file system with a JRE 17, made by `docker/base/build.sh` (debootstrap
  from the machine's Debian mirror, then `docker import`), so that no registry is needed;
- Apache Kafka of one release: the Maven-resolved jars (harness.kafka.dist) on that base, with
  `docker/kafka/Dockerfile` and its entry point;
- a binary kcts builds (kfake, Tansu) on that base, with `docker/<name>/Dockerfile`.

Every image is tagged `<version>-<content hash>`: the hash covers what went in (the base's build
script, the Dockerfile and entry point, the jars' names and sizes, the binary's bytes), so a
changed input builds a new image and an unchanged one is reused. Kafka images are also tagged with
the bare version (`kcts/kafka:4.4.0`), which docker/compose.yaml names.

A user's own image (`--image apache/kafka:4.4.0`, or a profile's `image`) is used as it is: taken
from the local engine, or pulled if a registry answers within `PULL_TIMEOUT`.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness import layout
from harness.errors import SetupError
from harness.kafka.dist import KafkaDistribution, cache_root
from harness.kafka.log4j import LOG4J1_PROPERTIES, LOG4J2_PROPERTIES

if TYPE_CHECKING:
    import docker

DOCKER_DIR = layout.DOCKER
BASE_REPO, KAFKA_REPO = "kcts/base", "kcts/kafka"
PULL_TIMEOUT = 40.0
BUILD_TIMEOUT = 900


@dataclass(frozen=True)
class Built:
    """An image ready in the local engine, and how long making it took (0 when it was reused)."""

    tag: str
    seconds: float = 0.0


def _digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()[:12]


def exists(c: docker.DockerClient, tag: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        c.images.get(tag)
        return True
    except ImageNotFound:
        return False


@contextmanager
def _build_lock(name: str) -> Iterator[None]:
    """One build of an image at a time across processes (a matrix runs targets side by side)."""
    path = cache_root() / "docker" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def base_tag() -> str:
    """The tag `docker/base/build.sh` gives the image it builds (the hash of the script)."""
    script = DOCKER_DIR / "base" / "build.sh"
    return f"{BASE_REPO}:bookworm-jre17-{hashlib.sha256(script.read_bytes()).hexdigest()[:12]}"


def ensure_base(c: docker.DockerClient) -> Built:
    """The base image, built by `docker/base/build.sh` (which locks) if this engine does not hold it yet."""
    tag = base_tag()
    if exists(c, tag):
        return Built(tag)
    started = time.monotonic()
    try:
        proc = subprocess.run([str(DOCKER_DIR / "base" / "build.sh")], capture_output=True, text=True,
                              timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SetupError(f"building the base image {tag} took over {BUILD_TIMEOUT} s (debootstrap); "
                         "is the Debian mirror reachable?") from None
    if proc.returncode != 0 or not exists(c, tag):
        raise SetupError(f"building the base image {tag} failed (exit {proc.returncode}): "
                         f"{(proc.stderr or proc.stdout).strip()[-1500:]}")
    return Built(tag, time.monotonic() - started)


def _build(c: docker.DockerClient, context: Path, tag: str, buildargs: dict[str, str], also: str | None) -> None:
    from docker.errors import BuildError

    try:
        # KCTS_IMAGE_NOCACHE=1 builds every layer again (the random-kill test needs a build that lasts).
        image, _ = c.images.build(path=str(context), tag=tag, buildargs=buildargs, rm=True, forcerm=True,
                                  pull=False, labels={"kcts.image": tag},
                                  nocache=os.environ.get("KCTS_IMAGE_NOCACHE") == "1")
    except BuildError as exc:
        log = "".join(str(x.get("stream", x.get("error", ""))) for x in exc.build_log)
        raise SetupError(f"building the image {tag} failed: {exc.msg}\n{log.strip()[-1500:]}") from None
    if also:
        image.tag(*also.split(":", 1))


def _context(name: str) -> Path:
    ctx = cache_root() / "docker" / "contexts" / f"{name}.{os.getpid()}.{threading.get_ident()}"
    shutil.rmtree(ctx, ignore_errors=True)
    ctx.mkdir(parents=True)
    return ctx


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def kafka_tag(dist: KafkaDistribution, base: str) -> str:
    folder = DOCKER_DIR / "kafka"
    jars = "\n".join(f"{j.name}:{j.stat().st_size}" for j in sorted(dist.jars))
    digest = _digest(base, (folder / "Dockerfile").read_bytes(), (folder / "kcts-entrypoint").read_bytes(),
                     LOG4J2_PROPERTIES, LOG4J1_PROPERTIES, jars)
    return f"{KAFKA_REPO}:{dist.version}-{digest}"


def _ensure_on_base(c: docker.DockerClient, base: Built, tag: str, fill: Callable[[Path], None],
                    buildargs: dict[str, str], also: str) -> Built:
    """`tag` on `base`: reused if the engine holds it, else built (once across processes) from a
    context that `fill` writes; the seconds include the base's own build."""
    if exists(c, tag):
        return Built(tag, base.seconds)
    repo, _, version_hash = tag.partition(":")
    with _build_lock(f"{repo.rpartition('/')[2]}-{version_hash.rpartition('-')[0]}"):
        if exists(c, tag):
            return Built(tag, base.seconds)
        started = time.monotonic()
        ctx = _context(tag.replace("/", "_").replace(":", "_"))
        try:
            fill(ctx)
            _build(c, ctx, tag, {"BASE": base.tag, **buildargs}, also)
        finally:
            shutil.rmtree(ctx, ignore_errors=True)
        return Built(tag, base.seconds + time.monotonic() - started)


def ensure_kafka(c: docker.DockerClient, dist: KafkaDistribution) -> Built:
    """Apache Kafka `dist.version` on the base image (both built here if missing)."""
    base = ensure_base(c)

    def fill(ctx: Path) -> None:
        for name in ("Dockerfile", "kcts-entrypoint"):
            shutil.copy2(DOCKER_DIR / "kafka" / name, ctx / name)
        (ctx / "log4j2.properties").write_text(LOG4J2_PROPERTIES)
        (ctx / "log4j.properties").write_text(LOG4J1_PROPERTIES)
        (ctx / "libs").mkdir()
        for jar in dist.jars:
            _link_or_copy(jar, ctx / "libs" / jar.name)

    return _ensure_on_base(c, base, kafka_tag(dist, base.tag), fill, {"KAFKA_VERSION": dist.version},
                           f"{KAFKA_REPO}:{dist.version}")


def ensure_binary(c: docker.DockerClient, name: str, version: str, binary: Path) -> Built:
    """A binary kcts built (kfake, Tansu) on the base image, from `docker/<name>/Dockerfile`."""
    dockerfile = DOCKER_DIR / name / "Dockerfile"
    if not dockerfile.is_file():
        raise SetupError(f"no Dockerfile for {name}: expected {dockerfile}")
    if not binary.is_file():
        raise SetupError(f"the {name} binary {binary} does not exist; build it first")
    base = ensure_base(c)

    def fill(ctx: Path) -> None:
        shutil.copy2(dockerfile, ctx / "Dockerfile")
        _link_or_copy(binary, ctx / binary.name)

    tag = f"kcts/{name}:{version}-{_digest(base.tag, dockerfile.read_bytes(), _file_digest(binary))}"
    return _ensure_on_base(c, base, tag, fill, {"BINARY": binary.name}, f"kcts/{name}:{version}")


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def require(c: docker.DockerClient, ref: str, timeout: float = PULL_TIMEOUT) -> Built:
    """A user's image: the local engine's, or pulled within `timeout`; else a `SetupError` saying so."""
    if exists(c, ref):
        return Built(ref)
    from docker.errors import DockerException

    outcome: list[BaseException | None] = []

    def pull() -> None:
        try:
            c.images.pull(ref)
            outcome.append(None)
        except (DockerException, OSError) as exc:
            outcome.append(exc)

    started = time.monotonic()
    t = threading.Thread(target=pull, daemon=True, name=f"pull {ref}")
    t.start()
    t.join(timeout)
    if not outcome:
        why = f"no registry answered within {timeout:.0f} s"
    elif outcome[0] is not None:
        why = str(outcome[0]).strip()[:300]
    else:
        return Built(ref, time.monotonic() - started)
    raise SetupError(f"the image {ref} is not in the local Docker engine and could not be pulled ({why}). "
                     "Check its name, `docker load` or build it here, or leave --image out to have kcts build "
                     "Apache Kafka offline")
