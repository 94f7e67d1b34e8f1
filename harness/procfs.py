"""A process as Linux's /proc/<pid>/stat shows it: its state letter and the CPU it has used.

Standard library only: the reaper (harness/reaper.py) imports it too, and runs on its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcStat:
    state: str  # R, S, D, T (stopped), t (traced), Z (zombie), ...
    cpu_seconds: float  # user and system time


def stat(pid: int) -> ProcStat | None:
    """The process's state and CPU time, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            # The command name in parentheses may hold spaces and ')': the fields follow the last ')'.
            fields = f.read().rpartition(")")[2].split()
        return ProcStat(fields[0], (int(fields[11]) + int(fields[12])) / _TICK)
    except (OSError, IndexError, ValueError):
        return None
