"""Starting a child process that cannot outlive the harness.

Every child the harness starts gets PR_SET_PDEATHSIG: the kernel kills it when the thread that
started it ends, however it ends. The session marker (see harness.session) goes on the child's own
command line, where each program takes it differently (a JVM property, an argument, a flag), so the
caller puts it there; the reaper finds whatever PDEATHSIG did not reach by that marker.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the thread that spawned it dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spawn(cmd: Sequence[str], cgroup: Path | None = None, **popen_kwargs: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(cmd, **popen_kwargs)` for a child that dies with the calling thread.

    PDEATHSIG is tied to the thread, not the process: start and stop a child from one thread that
    lives as long as the child should. With `cgroup` (a v2 cgroup folder) the child joins it before
    it execs, so that its every socket belongs to that cgroup (harness.network.links).
    """
    if cgroup is None:
        return subprocess.Popen(cmd, preexec_fn=die_with_parent, **popen_kwargs)
    procs = str(cgroup / "cgroup.procs")

    def join_cgroup() -> None:
        die_with_parent()
        fd = os.open(procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    return subprocess.Popen(cmd, preexec_fn=join_cgroup, **popen_kwargs)
