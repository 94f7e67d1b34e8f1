"""The checker on a non-local Spark master: a standalone cluster on loopback, started here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.integrity.standalone import SparkStandalone
from harness.layout import ROOT as REPO


def _can_fail_run(master: str, reports: Path) -> dict[str, tuple[bool, frozenset[str]]]:
    """The integrity can-fail suite with its checker on `master`: per report (each damaged output, and
    the undamaged baseline), whether it was clean and the anomaly classes it found."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
         "suites/integrity/test_checker_can_fail.py", "--spark-master", master, "--reports-dir", str(reports),
         "--run-id", "run"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, f"{master}: exit {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-2000:]}"
    assert "2 passed" in run.stdout, run.stdout[-2000:]
    found: dict[str, tuple[bool, frozenset[str]]] = {}
    for path in sorted((reports / "run" / "integrity").glob("*/report.json")):
        report = json.loads(path.read_text())
        assert report["meta"]["spark_master"] == master, f"{path}: checked on {report['meta']['spark_master']}"
        found[path.parent.name] = (report["ok"], frozenset(k for k, n in report["counts"].items() if n))
    return found


def _anomaly_checks(master: str) -> subprocess.CompletedProcess[str]:
    """The anomaly checks' can-fail tests (every anomaly class on a small history) on `master`."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/integrity/test_anomaly_checks.py",
         "--spark-master", master],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )


@pytest.mark.live
@pytest.mark.heavy  # 150 s of Spark and two clusters: tox -e integrity runs it, not the gate
def test_integrity_checks_give_their_verdicts_on_a_standalone_spark_master(tmp_path: Path) -> None:
    """`--spark-master spark://...`: the suite whose checks must flag real damage runs with its
    reads and checks on a standalone cluster's executor (the connector shipped to it by the driver),
    and gives the same findings as on local[2]: every report (the undamaged baseline and each damaged
    output) clean or not alike, with the same anomaly classes."""
    local = _can_fail_run("local[2]", tmp_path / "local")
    with SparkStandalone() as standalone:
        remote = _can_fail_run(standalone.url, tmp_path / "standalone")
        anomalies = _anomaly_checks(standalone.url)
        master, worker = standalone.log("master"), standalone.log("worker")
    assert "Registering app kcts-integrity" in master, master[-2000:]
    assert "Asked to launch executor" in worker, worker[-2000:]
    assert len(remote) >= 3 and any(ok for ok, _ in remote.values()) and not all(ok for ok, _ in remote.values()), (
        f"expected the undamaged baseline clean and each damaged output flagged: {remote}")
    assert remote == local, f"standalone {remote} != local[2] {local}"
    # The anomaly checks judge partitions in the executors' Python workers: on the standalone
    # cluster too, every class of the can-fail histories is found exactly as expected (as on local[2]
    # in the gate), from JSON lines and from the Parquet layout read in place.
    assert anomalies.returncode == 0 and " passed" in anomalies.stdout and "failed" not in anomalies.stdout, (
        f"anomaly checks on {standalone.url}: exit {anomalies.returncode}\n{anomalies.stdout[-3000:]}\n"
        f"{anomalies.stderr[-2000:]}")
