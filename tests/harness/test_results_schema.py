"""results.json is a published format: what the suite writes validates against
harness/reporting/results.schema.json, and the schema refuses a file that breaks it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.reporting.schema import main as validate
from harness.reporting.schema import problems

RECORDED = Path(__file__).with_name("data") / "results-4.4.0-smoke.json"  # a real run's file (kcts run -m smoke)


def recorded() -> dict[str, Any]:
    return json.loads(RECORDED.read_text())


def test_a_real_runs_results_match_the_schema() -> None:
    data = recorded()
    assert problems(data) == []
    assert data["fingerprint"]["api_versions"]["TxnOffsetCommit"] == [0, 6]


def test_a_file_the_plugin_writes_now_matches_the_schema(tmp_path: Path) -> None:
    """The plugin's own output, from a session of three checks that need no cluster."""
    (tmp_path / "test_tiny.py").write_text(
        "import pytest\n"
        "def test_passes():\n    '''A promise kept.'''\n"
        "def test_fails():\n    '''A promise broken.'''\n    assert 1 == 2\n"
        "def test_skipped():\n    pytest.skip('NOT_SUPPORTED: x is not supported by this target (v0-1)')\n")
    cmd = [sys.executable, "-m", "pytest", "-p", "harness.pytest_plugin", "-p", "no:cacheprovider", "-q",
           "--reports-dir", str(tmp_path / "reports"), "--run-id", "tiny", str(tmp_path / "test_tiny.py")]
    subprocess.run(cmd, cwd=tmp_path, capture_output=True, timeout=120, check=False)
    written = tmp_path / "reports" / "tiny" / "results.json"
    data = json.loads(written.read_text())
    assert problems(data) == [], data
    assert {c["cell"] for c in data["checks"]} == {"pass", "fail", "not-supported"}
    assert validate([str(written)]) == 0


@pytest.mark.parametrize(("alter", "complaint"), [
    (lambda d: d.pop("schema_version"), "'schema_version' is a required property"),
    (lambda d: d["checks"][0].update(cell="green"), "'green' is not one of"),
    (lambda d: d["checks"][0].update(duration_s="3s"), "'3s' is not of type 'number'"),
    (lambda d: d["fingerprint"]["api_versions"].update(Fetch=[4]), "is too short"),
    (lambda d: d.update(extra=1), "Additional properties are not allowed"),
    (lambda d: d["summary"]["counts"].pop("fail"), "'fail' is a required property"),
    (lambda d: d["checks"][0].update(history=[{"name": "h", "operations": 3, "counts": {"lost-write": "1"},
                                               "report": "h.anomalies.json", "plot": None}]), "'1' is not of type"),
    (lambda d: d["checks"][0].update(history=[{"name": "h", "operations": 3, "counts": {}}]),
     "'report' is a required property"),
])
def test_an_altered_file_is_refused(alter: Any, complaint: str, tmp_path: Path) -> None:
    data = copy.deepcopy(recorded())
    alter(data)
    found = problems(data)
    assert any(complaint in p for p in found), found
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    assert validate([str(path)]) == 1
