"""harness.procfs: a process's state letter and CPU time from /proc/<pid>/stat, None once gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

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
