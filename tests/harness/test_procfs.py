"""harness.procfs: a process's state letter and CPU time from /proc/<pid>/stat, None once gone; the
machine's busy, idle and stolen core-seconds from /proc/stat."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from harness import procfs


def test_a_running_process_shows_its_cpu_time_and_a_stopped_one_state_t() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        deadline = time.monotonic() + 10
        while (seen := procfs.stat(proc.pid)) is not None and seen.cpu_seconds < 0.2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen is not None and seen.state == "R" and seen.cpu_seconds >= 0.2, seen
        os.kill(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while (seen := procfs.stat(proc.pid)) is not None and seen.state != "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert seen is not None and seen.state == "T", seen
    finally:
        proc.kill()
        proc.wait()


def test_an_unreaped_child_is_a_zombie_and_a_reaped_one_is_gone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while (seen := procfs.stat(proc.pid)) is not None and seen.state != "Z" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen is not None and seen.state == "Z", seen
    proc.wait()
    assert procfs.stat(proc.pid) is None


# /proc/stat's first lines on a 2-core machine (clock ticks of 1/100 s).
STAT = """cpu  10000 200 3000 50000 400 0 300 100 0 0
cpu0 5000 100 1500 25000 200 0 150 50 0 0
"""


def test_the_machine_cpu_splits_busy_idle_and_steal_as_proc_stat_counts_them() -> None:
    seen = procfs.parse_machine_cpu(STAT)
    tick = os.sysconf("SC_CLK_TCK")
    assert seen == procfs.MachineCpu(busy=13500 / tick, idle=50400 / tick, steal=100 / tick)
    later = procfs.parse_machine_cpu(STAT.replace("10000 200 3000 50000 400", "10900 200 3100 50000 400"))
    assert later.since(seen) == procfs.MachineCpu(busy=1000 / tick, idle=0.0, steal=0.0)
    assert later.since(seen).busy_share == 1.0
    assert round(seen.busy_share, 3) == round(13500 / 64000, 3)


def test_a_text_that_is_not_proc_stat_is_refused() -> None:
    with pytest.raises(ValueError, match="not /proc/stat's first line"):
        procfs.parse_machine_cpu("intr 1 2 3\n")


def test_the_machine_cpu_of_this_machine_grows_while_a_core_is_busy() -> None:
    before = procfs.machine_cpu()
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        pass
    assert procfs.machine_cpu().since(before).busy >= 0.2
