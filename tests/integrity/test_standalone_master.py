"""The checker on a non-local Spark master: a standalone cluster on loopback, started here."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from harness.integrity.standalone import SparkStandalone
from harness.layout import ROOT as REPO


@pytest.mark.live
@pytest.mark.heavy  # 75 s of Spark: tox -e integrity runs it, not the gate
def test_integrity_checks_give_their_verdicts_on_a_standalone_spark_master() -> None:
    """`--spark-master spark://...`: the suite whose checks must flag real damage runs with its
    reads and checks on a standalone cluster's executor (the connector shipped to it by the driver),
    and gives the same verdicts as on local[2]."""
    run_id = f"tests-standalone-{time.strftime('%Y%m%d-%H%M%S')}"
    with SparkStandalone() as standalone:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
             "suites/integrity/test_checker_can_fail.py", "--spark-master", standalone.url, "--run-id", run_id],
            cwd=REPO, capture_output=True, text=True, timeout=900,
        )
        master, worker = standalone.log("master"), standalone.log("worker")
    assert run.returncode == 0, f"exit {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-2000:]}"
    assert "2 passed" in run.stdout, run.stdout[-2000:]
    assert "Registering app kcts-integrity" in master, master[-2000:]
    assert "Asked to launch executor" in worker, worker[-2000:]
    reports = sorted((REPO / "reports" / run_id / "integrity").glob("*/report.json"))
    masters = {json.loads(r.read_text())["meta"]["spark_master"] for r in reports}
    assert len(reports) == 2 and masters == {standalone.url}, f"{reports}: {masters}"
