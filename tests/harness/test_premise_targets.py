"""Targets that lack a premise get verdicts, never errors: the suites against a one-broker kfake
(no second broker to move a leader to, no follower), against Tansu in memory (one broker, no
replicas of its own, and whatever of transactions it lacks) and against Nisshi in memory (no
transactions at all: InitProducerId refused; a Fetch of MaxWaitMs 0 answered with no topics, so its
profile has the harness's Fetches wait 500 ms)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cluster.builds import build_root

REPO = Path(__file__).resolve().parents[2]
# Runs of the KIP suites against vendor targets: tox -e vendor runs them, not the gate.
pytestmark = pytest.mark.heavy
TANSU = build_root("tansu", "0.6.0") / "bin" / "tansu"
NISSHI = build_root("nisshi", "0.8.1") / "bin" / "nisshi"
KIPS = "kip320 or kip359 or kip1094 or kip1319"


def _run(tmp_path: Path, *target: str) -> dict[str, object]:
    """`kcts run` over the KIP suites against `target`; its results.json."""
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *target, "-m", KIPS, "-q",
         "--reports-dir", str(tmp_path), "--run-id", "premises"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )
    results = tmp_path / "premises" / "results.json"
    assert results.exists(), (f"kcts run wrote no results (rc {proc.returncode}): "
                              f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return json.loads(results.read_text())


def _errors(results: dict[str, object]) -> list[str]:
    checks = results["checks"]
    assert isinstance(checks, list) and checks, "no check ran"
    return [f"{c['nodeid']}: {c['reason'][:300]}" for c in checks if c["cell"] == "error"]


@pytest.mark.live
def test_a_one_broker_target_gets_verdicts_and_no_error(tmp_path: Path) -> None:
    results = _run(tmp_path, "--backend", "kfake", "--brokers", "1")
    assert not _errors(results), "\n".join(_errors(results))
    cells = {c["nodeid"].split("::")[-1]: c for c in results["checks"]}  # type: ignore[union-attr]
    moved = cells["test_fetch_on_the_leader_fences_an_older_epoch"]
    assert moved["cell"] == "target-refused" and "1 broker" in moved["reason"], moved
    current = cells["test_fetch_on_the_leader_serves_the_current_epoch_and_refuses_a_newer_one"]
    assert current["cell"] in ("pass", "fail"), f"the cases that need no leader move are judged: {current}"


@pytest.mark.live
@pytest.mark.tansu
@pytest.mark.skipif(not TANSU.exists(), reason=f"Tansu 0.6.0 is not built ({TANSU} is missing): "
                    "`kcts run --target tansu` builds it once with cargo")
def test_tansu_in_memory_gets_verdicts_and_no_error(tmp_path: Path) -> None:
    results = _run(tmp_path, "--target", "tansu-memory")
    assert not _errors(results), "\n".join(_errors(results))


@pytest.mark.live
@pytest.mark.tansu
@pytest.mark.skipif(not NISSHI.exists(), reason=f"Nisshi 0.8.1 is not built ({NISSHI} is missing): "
                    "`kcts run --target nisshi-memory` builds it once with cargo")
def test_nisshi_in_memory_gets_verdicts_and_no_error(tmp_path: Path) -> None:
    results = _run(tmp_path, "--target", "nisshi-memory")
    assert not _errors(results), "\n".join(_errors(results))
    refused = [c["reason"] for c in results["checks"] if c["cell"] == "target-refused"]  # type: ignore[union-attr]
    assert any("TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in r for r in refused), (
        f"Nisshi refuses every transactional id: some check's premise is refused with that answer; refused: {refused}")
    cells = {c["nodeid"].split("::")[-1]: c for c in results["checks"]}  # type: ignore[union-attr]
    fetched = cells["test_fetch_on_the_leader_serves_the_current_epoch_and_refuses_a_newer_one"]
    assert fetched["cell"] in ("pass", "fail"), f"the harness's Fetches wait 500 ms on Nisshi and are judged: {fetched}"
