"""A container runs in the CPU class of the run that started it (harness/containers/cpu_class.py):
the cgroup file it finds on each layout, and on a real engine a container an idle-class thread starts,
and starts again, has its cgroup idle, while one a normal-class thread starts does not."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness import docker_engine
from harness.containers import cpu_class, images
from harness.containers.container import ContainerNode
from harness.containers.cpu_class import cpu_idle_file, make_idle
from harness.containers.network import ClusterNetwork
from harness.errors import SetupError
from harness.process.service import ProcessState

# /proc/self/mountinfo lines of the three layouts (fields cut down to what the parser reads).
V1_MOUNTS = """31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw"""
V2_MOUNTS = """22 1 0:5 / /proc rw - proc proc rw
30 22 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate"""


def test_on_cgroup_v1_the_file_is_in_the_cpu_hierarchy_not_the_unified_one() -> None:
    cgroup = "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/docker/abc"
    assert cpu_idle_file(cgroup, V1_MOUNTS) == Path("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.idle")


def test_on_cgroup_v2_the_file_is_in_the_containers_own_cgroup() -> None:
    cgroup = "0::/system.slice/docker-abc.scope"
    assert cpu_idle_file(cgroup, V2_MOUNTS) == Path("/sys/fs/cgroup/system.slice/docker-abc.scope/cpu.idle")


def test_without_a_hierarchy_holding_the_cpu_controller_there_is_no_file() -> None:
    assert cpu_idle_file("2:cpu,cpuacct:/docker/abc", V2_MOUNTS.splitlines()[0]) is None


def test_a_process_gone_is_not_made_idle_and_says_why(tmp_path: Path) -> None:
    outcome = make_idle(4242, proc=tmp_path)
    assert not outcome.applied and "not readable" in outcome.why, outcome


# -- on a real engine ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_image() -> str:
    try:
        return images.ensure_base(docker_engine.client()).tag  # type: ignore[arg-type]
    except SetupError as exc:
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture
def sleeper(base_image: str, tmp_path: Path) -> Iterator[Callable[[], ContainerNode]]:
    """Containers that sleep, on a network of their own; each removed at the end."""
    network = ClusterNetwork()
    made: list[ContainerNode] = []

    def make() -> ContainerNode:
        node = ContainerNode(f"{network.name}-{len(made)}", base_image, network=network.network or network.create(),
                             alias=f"sleeper-{len(made)}", labels=network.labels,
                             log_path=tmp_path / f"{len(made)}.log", command=["sleep", "300"])
        made.append(node)
        return node

    try:
        yield make
    finally:
        for node in made:
            node.remove()
        assert not network.remove_all()


def idle(path: Path) -> str:
    return path.read_text().strip()


def in_class(policy: int, action: Callable[[], None]) -> None:
    """Run `action` in a thread of scheduling class `policy`: SCHED_IDLE as every thread of a run under
    `chrt --idle 0` is, SCHED_OTHER as a run started plainly (whatever class this test process runs in)."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            try:
                os.sched_setscheduler(0, policy, os.sched_param(0))
            except PermissionError as exc:
                failure.append(exc)
                return
            action()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the container's start did not end within 120 s"
    if failure and isinstance(failure[0], PermissionError):
        pytest.skip(f"this process may not run a thread in class {policy}: {failure[0]}")
    if failure:
        raise failure[0]


@pytest.mark.docker
@pytest.mark.live
def test_a_container_an_idle_run_starts_is_idle_and_stays_so_across_a_restart(
        sleeper: Callable[[], ContainerNode]) -> None:
    node = sleeper()
    in_class(os.SCHED_IDLE, node.start)
    outcome = node.cpu_class
    assert outcome is not None, "an idle-class thread started the container, and its class was never set"
    if not outcome.applied:
        pytest.skip(f"this host does not let kcts set a container's cgroup idle: {outcome.why}")
    assert idle(Path(outcome.why)) == "1", f"{outcome.why} after the first start"
    node.kill()
    in_class(os.SCHED_IDLE, node.start)
    assert node.cpu_class is not None and node.cpu_class.applied, node.cpu_class
    assert idle(Path(node.cpu_class.why)) == "1", f"{node.cpu_class.why} after a restart"


@pytest.mark.docker
@pytest.mark.live
def test_a_container_a_normal_run_starts_keeps_the_normal_class(sleeper: Callable[[], ContainerNode]) -> None:
    node = sleeper()
    in_class(os.SCHED_OTHER, node.start)
    assert node.cpu_class is None
    node.container.reload()
    pid = node.container.attrs["State"]["Pid"]
    where = cpu_idle_file(Path(f"/proc/{pid}/cgroup").read_text(), Path("/proc/self/mountinfo").read_text())
    if where is None or not where.exists():
        pytest.skip(f"this host has no cpu.idle for the container's cgroup ({where})")
    assert idle(where) == "0", f"{where} of a container a normal-class thread started"


@pytest.mark.docker
@pytest.mark.live
def test_a_host_that_refuses_the_idle_class_starts_the_container_and_says_so(
        sleeper: Callable[[], ContainerNode], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Not root, a read-only /sys or an older kernel: the container still starts, at the normal class."""
    monkeypatch.setattr(cpu_class, "make_idle", lambda pid: cpu_class.ClassSetting(False, "refused here (test)"))
    node = sleeper()
    in_class(os.SCHED_IDLE, node.start)
    assert node.state is ProcessState.RUNNING
    assert "containers run at the normal CPU class, not the idle class of this run: refused here (test)" in (
        capsys.readouterr().err)
