"""A process as Linux's /proc/<pid>/stat shows it: its state letter and the CPU it has used; and the
machine's CPU time from /proc/stat.

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


@dataclass(frozen=True)
class MachineCpu:
    """Core-seconds the machine's cores spent since boot, summed over the cores (/proc/stat's first line)."""

    busy: float  # user, nice, system, irq and softirq
    idle: float  # idle and iowait: no runnable task
    steal: float  # the hypervisor ran something else on the core

    def since(self, earlier: MachineCpu) -> MachineCpu:
        return MachineCpu(self.busy - earlier.busy, self.idle - earlier.idle, self.steal - earlier.steal)

    @property
    def busy_share(self) -> float:
        """The share of the cores' time that went to this machine's own work."""
        total = self.busy + self.idle + self.steal
        return self.busy / total if total else 0.0


def parse_machine_cpu(text: str) -> MachineCpu:
    """The `cpu` line of /proc/stat's text: user nice system idle iowait irq softirq steal ... in ticks."""
    fields = text.splitlines()[0].split()
    if fields[0] != "cpu" or len(fields) < 9:
        raise ValueError(f"not /proc/stat's first line: {text.splitlines()[0]!r}")
    user, nice, system, idle, iowait, irq, softirq, steal = (int(f) / _TICK for f in fields[1:9])
    return MachineCpu(user + nice + system + irq + softirq, idle + iowait, steal)


def machine_cpu() -> MachineCpu:
    with open("/proc/stat") as f:
        return parse_machine_cpu(f.read())
