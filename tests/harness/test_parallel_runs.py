"""Two `kcts run` at once on one machine never collide: not on ports, scratch folders, report folders,
topic and group names, nor in the reaper (each run's reaper removes only its own session)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.live, pytest.mark.heavy]


def _sessions() -> set[str]:
    """The kcts.session tags of every process on the machine."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            found |= {part.split("kcts.session=", 1)[1].split()[0] for part in cmdline.split("\0")
                      if "kcts.session=" in part and "harness.reaper" not in cmdline}
    return found


def test_two_runs_at_once_each_judge_their_own_cluster_and_leave_nothing(tmp_path: Path) -> None:
    """Both runs of the smoke suite start together (no --run-id: each names its own report folder),
    each on a cluster of its own; both pass, their reports are apart, and once both ended no process
    of either session is left."""
    before = _sessions()
    reports = tmp_path / "reports"
    procs = [subprocess.Popen([sys.executable, "-m", "harness.cli", "run", "-m", "smoke", "--brokers", "2",
                               "--reports-dir", str(reports)], cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env={**os.environ, "KCTS_NO_LATEST": "1"})
             for _ in range(2)]
    outputs = [p.communicate(timeout=600)[0].decode(errors="replace") for p in procs]
    for p, out in zip(procs, outputs, strict=True):
        assert p.returncode == 0, f"a run exited {p.returncode}:\n{out[-3000:]}"
    runs = sorted(d for d in reports.iterdir() if (d / "results.json").exists())
    assert len(runs) == 2, f"two report folders expected, found {[d.name for d in reports.iterdir()]}"
    results = [json.loads((d / "results.json").read_text()) for d in runs]
    for r in results:
        assert r["summary"]["counts"]["pass"] >= 1 and not r["summary"]["counts"]["fail"], r["summary"]
    wait_until(lambda: not (_sessions() - before), 30, lambda: f"sessions still running: {_sessions() - before}")
