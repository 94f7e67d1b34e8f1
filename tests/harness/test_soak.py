"""kcts soak's reckoning: pass k/n, duration spread, and both sides of every flip (results.json fixtures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.errors import KctsError
from harness.reporting.soak import SoakRun, aggregate, render_md, report, run_soak

STEADY = "suites/kip320/test_a.py::test_steady"
FLAKY = "suites/kip320/test_b.py::test_flaky"


def _results(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": 2, "checks": list(checks)}


def _check(nodeid: str, cell: str, seconds: float, reason: str = "", evidence: str | None = None) -> dict[str, Any]:
    return {"nodeid": nodeid, "cell": cell, "outcome": "passed" if cell == "pass" else "failed", "reason": reason,
            "duration_s": seconds, "evidence": evidence, "wire_evidence": None}


RUNS = [
    SoakRun("soak-x-1", 0, 60.0, _results(_check(STEADY, "pass", 2.0), _check(FLAKY, "pass", 5.0))),
    SoakRun("soak-x-2", 1, 70.0, _results(_check(STEADY, "pass", 3.0),
                                      _check(FLAKY, "fail", 45.0, "timed out after 45 s waiting", "evidence/b.txt"))),
    SoakRun("soak-x-3", 0, 65.0, _results(_check(STEADY, "pass", 4.0), _check(FLAKY, "pass", 6.0))),
]


def test_a_check_that_gave_two_verdicts_is_a_flip_with_each_sides_evidence() -> None:
    doc = report("soak-x", ["-m", "kip320"], RUNS, aggregate(RUNS))
    by = {c["nodeid"]: c for c in doc["checks"]}
    assert by[STEADY] == {**by[STEADY], "pass": 3, "n": 3, "flipped": False, "sides": {}}
    assert by[STEADY]["durations_s"] == {"min": 2.0, "median": 3.0, "max": 4.0}
    flaky = by[FLAKY]
    assert (flaky["pass"], flaky["n"], flaky["flipped"], flaky["cells"]) == (2, 3, True, {"pass": 2, "fail": 1})
    assert flaky["sides"]["fail"] == {"run": "soak-x-2", "reason": "timed out after 45 s waiting",
                                      "evidence": "evidence/b.txt", "wire_evidence": None}
    assert flaky["sides"]["pass"]["run"] == "soak-x-1"
    assert doc["summary"] == {**doc["summary"], "checks": 2, "flipped": 1, "always_pass": 1, "wall_s": 195.0}


def test_the_markdown_puts_flips_first_with_their_evidence() -> None:
    text = render_md(report("soak-x", ["-m", "kip320"], RUNS, aggregate(RUNS)))
    flipped, table = text.split("## Every check")
    assert f"`{FLAKY}`: pass 2/3" in flipped and "evidence `evidence/b.txt`" in flipped and STEADY not in flipped
    assert f"| `{STEADY}` | 3/3 | pass 3 | 2.0 / 3.0 / 4.0 |" in table


def test_a_run_that_wrote_no_results_leaves_its_checks_short() -> None:
    runs = [*RUNS[:1], SoakRun("soak-x-2", 3, 4.0, None)]
    doc = report("soak-x", [], runs, aggregate(runs))
    assert doc["summary"]["not_in_every_run"] == 2 and doc["runs"][1]["results"] is False


@pytest.mark.parametrize(("repeat", "args", "says"), [
    (0, [], "--repeat must be at least 1"),
    (2, ["--run-id", "mine"], "drop --run-id"),
])
def test_bad_soak_arguments_are_one_clear_error(tmp_path: Path, repeat: int, args: list[str], says: str) -> None:
    with pytest.raises(KctsError, match=says):
        run_soak(repeat, args, tmp_path)
