"""`kcts bench idle` reads a process's CPU time from /proc: user and system, never its children's."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from harness.bench.idle import cpu_seconds


def test_cpu_seconds_count_the_process_own_work_and_not_its_children() -> None:
    before = cpu_seconds(os.getpid())
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:  # the work measured: 0.3 s of this process's CPU
        pass
    child = "import time\nt = time.process_time() + 0.5\nwhile time.process_time() < t: pass"
    subprocess.run([sys.executable, "-c", child], check=True)
    spent = cpu_seconds(os.getpid()) - before
    assert 0.25 <= spent < 0.75, f"{spent:.2f} CPU-s counted for 0.3 s of own work and a child's 0.5 s"
