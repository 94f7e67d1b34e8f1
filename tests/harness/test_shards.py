"""`kcts run --shards N` (harness/reporting/shards.py): modules weighed by duration, never split, and the
shards' reports joined into the one run folder a serial run writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import KctsError
from harness.reporting.schema import problems
from harness.reporting.shards import deal, durations, exit_code, join, modules_of, split_args, units

REPO = Path(__file__).resolve().parents[2]


def test_modules_are_dealt_longest_first_to_the_lightest_shard() -> None:
    known = {"suites/a/test_x.py": 90.0, "suites/a/test_y.py": 50.0, "suites/a/test_z.py": 40.0}
    modules = [f"/r/suites/a/test_{m}.py" for m in ("x", "y", "z", "new")]
    shards = deal(modules, known, 2)
    # x (90) to shard 0, y (50) and the unknown module (the median, 50) to shard 1, then z (40) to shard 0
    assert [s.modules for s in shards] == [("/r/suites/a/test_x.py", "/r/suites/a/test_z.py"),
                                           ("/r/suites/a/test_y.py", "/r/suites/a/test_new.py")]
    assert [s.weight for s in shards] == [130.0, 100.0]


def test_modules_dealt_together_go_to_one_shard_as_one() -> None:
    known = {"tests/t/test_a.py": 10.0, "tests/t/test_b.py": 10.0, "tests/t/test_c.py": 15.0, "tests/t/test_d.py": 1.0}
    modules = [f"tests/t/test_{m}.py" for m in "abcd"]
    shards = deal(modules, known, 2, together=[["tests/t/test_a.py", "tests/t/test_b.py"]])
    assert [s.modules for s in shards] == [("tests/t/test_a.py", "tests/t/test_b.py"),
                                           ("tests/t/test_c.py", "tests/t/test_d.py")]
    assert [s.weight for s in shards] == [20.0, 16.0]


def test_a_folder_is_its_modules_and_a_node_id_stays_whole() -> None:
    found = modules_of([str(REPO / "suites" / "smoke"), "suites/kip320/test_truncation_clients.py::test_x"])
    assert found[0].endswith("suites/smoke/test_smoke.py") and found[-1].endswith("::test_x")


def test_the_run_options_are_taken_out_and_the_rest_kept() -> None:
    assert split_args(["--shards", "2", "--target", "kfake", "-m", "not heavy", "--run-id=r1"]) == (
        2, "r1", None, ["--target", "kfake", "-m", "not heavy"])
    with pytest.raises(KctsError, match="--shards 0"):
        split_args(["--shards", "0"])


def _shard(folder: Path, checks: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True)
    (folder / "allure-results").mkdir()
    (folder / "allure-results" / f"{folder.name}-result.json").write_text("{}")
    (folder / "results.json").write_text(json.dumps({
        "schema_version": 4, "kcts": {"version": "0.1.0", "commit": None, "dirty": False}, "target": "4.4.0",
        "environment": {"target": "4.4.0"}, "fingerprint": None, "summary": {}, "checks": checks, "defects": []}))
    suite = f'<testsuite name="{folder.name}" tests="{len(checks)}"/>'
    (folder / "junit.xml").write_text(f"<testsuites>{suite}</testsuites>")


def _check(nodeid: str, cell: str, evidence: str | None = None) -> dict[str, object]:
    outcome = "failed" if cell == "fail" else "passed"
    return {"nodeid": nodeid, "area": "kip320", "promise": "kip320.x", "outcome": outcome,
            "cell": cell, "reason": "FENCED_LEADER_EPOCH where the KIP says ..." if cell == "fail" else "",
            "duration_s": 1.5, "evidence": evidence, "wire_evidence": None, "promises": ["kip320.x"], "apis": [],
            "history": [], "defect": None}


def test_the_shards_join_into_one_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "r1"
    _shard(run / "shards" / "shard-0", [_check("suites/kip320/test_a.py::t1", "pass")])
    _shard(run / "shards" / "shard-1", [_check("suites/kip320/test_b.py::t2", "fail", "evidence/t2.txt")])
    join(run, [run / "shards" / "shard-0", run / "shards" / "shard-1"])
    data = json.loads((run / "results.json").read_text())
    assert [c["nodeid"] for c in data["checks"]] == ["suites/kip320/test_a.py::t1", "suites/kip320/test_b.py::t2"]
    assert data["checks"][1]["evidence"] == "shards/shard-1/evidence/t2.txt" and data["checks"][1]["defect"]
    assert data["summary"]["total"] == 2 and data["summary"]["defects"] == 1
    assert problems(data) == []
    assert sorted(p.name for p in (run / "allure-results").iterdir()) == ["shard-0-result.json", "shard-1-result.json"]
    assert (run / "junit.xml").read_text().count("<testsuite ") == 2
    weights = durations(tmp_path, "4.4.0")
    assert weights["suites/kip320/test_a.py"] == weights["suites/kip320/test_b.py"] == 1.5


def test_a_module_the_newest_run_lacks_weighs_its_shipped_time_not_the_median(tmp_path: Path) -> None:
    """The newest run was the gate's selection, without the integrity area: the whole suite is dealt
    next, and its longest module must still weigh what it takes, to be taken first."""
    _shard(tmp_path / "gate", [_check("suites/kip320/test_a.py::t1", "pass")])
    weights = durations(tmp_path, "4.4.0")
    shipped = durations(tmp_path / "none", "4.4.0")
    longest = max(shipped, key=shipped.__getitem__)
    assert weights["suites/kip320/test_a.py"] == 1.5
    assert weights[longest] == shipped[longest] > 60, (longest, weights[longest])
    first = units(sorted(weights), weights)[0]
    assert first.modules == (longest,)


def test_with_no_earlier_run_the_shipped_durations_weigh_every_suite_module(tmp_path: Path) -> None:
    """A fresh machine deals by the durations kcts ships, which name every module of the suites but the
    heavy-only ones (a run of `-m "not heavy"`): a module missing there weighs the median."""
    shipped = durations(tmp_path, "4.4.0")
    suites = {str(p.relative_to(REPO)) for p in (REPO / "suites").rglob("test_*.py")}
    assert shipped and set(shipped) <= suites
    assert len(suites - set(shipped)) <= 8, sorted(suites - set(shipped))


def test_a_shard_ended_by_a_signal_fails_the_run() -> None:
    """A shard killed mid-run (exit -9) leaves its tests unrun: the run's exit code is not a pass."""
    assert exit_code([0, -9]) == 137
    assert exit_code([1, -15]) == 143
    assert exit_code([0, 0]) == 0 and exit_code([5, 5]) == 5 and exit_code([0, 5]) == 0 and exit_code([1, 0]) == 1
