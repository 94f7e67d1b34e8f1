"""Ctrl-C or kill -9 at a random moment leaves nothing behind: no process of the session, no scratch
folder, no container, network or volume, no cgroup or link rule, no half-built binary.

Each scene is a real run (a cluster starting and clients at work, a Java driver, a Spark job, a kfake
build, a docker-backend run) stopped by SIGINT or SIGKILL at a moment drawn from the scene's window.
The draws come from KCTS_KILL_SEED (default: a fresh seed); a failure names the seed, the scene, the
signal and the moment, so it can be replayed. Heavy (tox -e reliability).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.waiting import wait_until
from tests.harness.holder import interruptible

REPO = Path(__file__).resolve().parents[2]
KFAKE_SOURCE = REPO / "harness" / "kfake"
SEED = int(os.environ.get("KCTS_KILL_SEED") or random.SystemRandom().randrange(1 << 30))
pytestmark = [pytest.mark.live, pytest.mark.heavy]


@dataclass(frozen=True)
class Scene:
    name: str
    argv: list[str]
    window: tuple[float, float]  # seconds after the start in which the signal falls
    env: dict[str, str] | None = None
    needs: str | None = None  # a tool without which the scene cannot run


IMAGE_VERSION = "4.3.1"
KFAKE_BUILD = (
    "from harness import session\n"
    "from harness.cluster.kfake import ensure_binary\n"
    "session.current()\n"
    "print(ensure_binary(), flush=True)\n"
)

SCENES = [
    Scene("cluster-start-and-clients", ["-m", "harness.cli", "run", "-m", "smoke", "--brokers", "3"], (0.5, 20)),
    Scene("java-drivers", ["-m", "harness.cli", "run", "suites/kip1094/test_committed_offsets.py",
                           "suites/kip1319/test_client_version_choice.py", "-k", "java"], (5, 25)),
    Scene("spark-job", ["-m", "pytest", "-p", "no:cacheprovider", "tests/integrity/test_integrity_checker.py", "-k",
                        "correct_pipeline"], (3, 30)),
    Scene("kfake-build", ["-c", KFAKE_BUILD], (0.5, 30), needs="go"),
    Scene("docker-run", ["-m", "harness.cli", "run", "--backend", "docker", "-m", "smoke"], (1, 25), needs="docker"),
    # An image of a release the gate does not use, removed before and after, every layer built again
    # (KCTS_IMAGE_NOCACHE): so that the build really runs.
    Scene("image-build", ["-m", "harness.cli", "image", "--kafka-version", IMAGE_VERSION], (0.5, 3.5),
          env={"KCTS_IMAGE_NOCACHE": "1"}, needs="docker"),
]


def sessions_of(pid: int) -> set[str]:
    """The session ids a process made: its reapers name them (`harness.reaper <pid>-<hex> ...`)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"harness.reaper" in args and len(args) > 3 and args[args.index(b"harness.reaper") + 1].startswith(
                    f"{pid}-".encode()):
                found.add(args[args.index(b"harness.reaper") + 1].decode())
    return found


def remove_image(version: str) -> None:
    for image in set(subprocess.run(["docker", "images", "-q", f"kcts/kafka:{version}*"], capture_output=True,
                                    text=True, timeout=30).stdout.split()):
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True, timeout=60)


def containers() -> set[str]:
    if shutil.which("docker") is None:
        return set()
    return set(subprocess.run(["docker", "ps", "-aq"], capture_output=True, text=True, timeout=30).stdout.split())


def leftovers(pid: int, sessions: set[str], tmp: Path, cache: Path, before: set[str] = frozenset()) -> list[str]:
    """What of the killed run is still on this machine (`before`: the containers there before it)."""
    from harness.network import links

    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if f"kcts.session={pid}-".encode() in cmdline and b"harness.reaper" not in cmdline:
            left.append(f"process {entry.name}: {cmdline[:120]!r}")
        elif cwd == str(KFAKE_SOURCE) and b"go" in cmdline.split(b"\0")[0]:
            left.append(f"go build process {entry.name}: {cmdline[:120]!r}")
    left += [f"scratch {p}" for p in tmp.glob(f"kcts-{pid}-*")]
    left += [f"half-built binary {p}" for p in cache.glob("kfake/*/kcts-kfake.tmp*")]
    for s in sessions:
        left += links.leftovers(s)
    if shutil.which("docker"):
        for s in sessions:
            for kind in (["ps", "-aq"], ["network", "ls", "-q"], ["volume", "ls", "-q"]):
                out = subprocess.run(["docker", *kind, "--filter", f"label=kcts.session={s}"],
                                     capture_output=True, text=True, timeout=30).stdout.split()
                left += [f"docker {kind[0]} {x}" for x in out]
    # A build's containers carry no label: any container that was not there before is the run's.
    left += [f"container {c}, made during the run" for c in containers() - before]
    return left


@pytest.mark.parametrize("scene", SCENES, ids=lambda s: s.name)
def test_a_random_stop_leaves_nothing_behind(scene: Scene, tmp_path: Path) -> None:
    if scene.needs and shutil.which(scene.needs) is None:
        pytest.skip(f"{scene.name} needs {scene.needs}, which this machine lacks")
    rng = random.Random(f"{SEED}-{scene.name}")
    moment = rng.uniform(*scene.window)
    sig = rng.choice([signal.SIGINT, signal.SIGKILL])
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cache = Path(os.environ.get("KCTS_CACHE", Path.home() / ".cache" / "kcts"))
    env = {**os.environ, "KCTS_TMP": str(tmp), "KCTS_NO_LATEST": "1"}
    if scene.name == "kfake-build":  # caches of its own, so that the build really runs (about a minute)
        cache = tmp_path / "cache"
        env.update(KCTS_CACHE=str(cache), GOCACHE=str(tmp_path / "gocache"))
    replay = f"KCTS_KILL_SEED={SEED}: {scene.name}, {sig.name} at {moment:.1f} s"
    env.update(scene.env or {})
    if scene.name == "image-build":
        remove_image(IMAGE_VERSION)
    before = containers()
    with open(tmp_path / "run.log", "wb") as log:
        reports = [] if scene.argv[0] == "-c" or "image" in scene.argv else ["--reports-dir", str(tmp_path / "reports")]
        proc = subprocess.Popen([sys.executable, *scene.argv, *reports],
                                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                preexec_fn=interruptible)
    sessions: set[str] = set()
    deadline = time.monotonic() + moment
    while time.monotonic() < deadline and proc.poll() is None:
        sessions |= sessions_of(proc.pid)
        time.sleep(0.1)
    tail = (tmp_path / "run.log").read_text(errors="replace")[-2000:]
    assert proc.poll() is None, f"{replay}: the scene ended (exit {proc.returncode}) before the signal\n{tail}"
    sessions |= sessions_of(proc.pid)
    proc.send_signal(sig)
    try:
        proc.wait(90 if sig is signal.SIGINT else 10)
    except subprocess.TimeoutExpired:
        proc.kill()
        tail = (tmp_path / "run.log").read_text(errors="replace")[-3000:]
        raise AssertionError(f"{replay}: still running 90 s after SIGINT\n{tail}") from None

    def clean() -> bool:
        return not leftovers(proc.pid, sessions, tmp, cache, before)

    wait_until(clean, 30, lambda: f"{replay}: sessions {sessions}, "
               f"left: {leftovers(proc.pid, sessions, tmp, cache, before)}\n"
               f"{(tmp_path / 'run.log').read_text(errors='replace')[-2000:]}")
    if scene.name == "image-build":
        remove_image(IMAGE_VERSION)
