"""A container runs in the CPU scheduling class of the run that started it.

A run started with `chrt --idle 0` (the gate starts its docker run and the harness's tests that way:
.ci/gate.env) passes SCHED_IDLE on to every process it starts. A container's processes are not its
children but the engine's, so they would run at the normal class and take the cores from the work
the class was meant to leave them to (the gate's conformance run). The scheduler's weights are per
cgroup, so setting SCHED_IDLE on the container's own processes would change nothing; the container's
cgroup is set idle instead (`cpu.idle`, Linux 5.15 and later, cgroup v1 and v2).

Where that cannot be done (not root, a read-only /sys, an older kernel, an engine on another
host), the container runs at the normal class. That changes how soon a run ends, never a verdict.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class ClassSetting:
    applied: bool
    why: str  # the file written, or why it could not be


def runner_is_idle() -> bool:
    """Whether the calling thread runs in the idle class (threads take their creator's class)."""
    return os.sched_getscheduler(0) == os.SCHED_IDLE


def cpu_idle_file(cgroup: str, mountinfo: str) -> Path | None:
    """The `cpu.idle` file of a process's cgroup, from its /proc/<pid>/cgroup and our
    /proc/self/mountinfo: in the hierarchy holding the cpu controller (cgroup v1), else in the
    unified one (v2). None when neither is mounted here."""
    v1: dict[str, str] = {}
    v2: str | None = None
    for line in cgroup.splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        if hierarchy == "0" and not controllers:
            v2 = path
        for controller in controllers.split(","):
            v1[controller] = path
    for line in mountinfo.splitlines():
        fields, _, tail = line.partition(" - ")
        mount_point = fields.split()[4]
        fstype, _source, options = tail.split()[:3]
        if "cpu" in v1 and fstype == "cgroup" and "cpu" in options.split(","):
            return Path(mount_point) / v1["cpu"].lstrip("/") / "cpu.idle"
        if "cpu" not in v1 and v2 is not None and fstype == "cgroup2":
            return Path(mount_point) / v2.lstrip("/") / "cpu.idle"
    return None


def make_idle(pid: int, proc: Path = PROC) -> ClassSetting:
    """Set the cgroup of process `pid` (a container's first process, as the engine reports it) idle."""
    try:
        where = cpu_idle_file((proc / str(pid) / "cgroup").read_text(), (proc / "self" / "mountinfo").read_text())
    except (OSError, ValueError, IndexError) as exc:
        return ClassSetting(False, f"its cgroup is not readable here ({exc})")
    if where is None:
        return ClassSetting(False, "no cgroup hierarchy with the cpu controller is mounted here")
    try:
        where.write_text("1")
    except OSError as exc:
        return ClassSetting(False, f"{where} is not writable ({exc.strerror}; Linux 5.15 or later and root are needed)")
    return ClassSetting(True, str(where))
