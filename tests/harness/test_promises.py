"""The promise catalogue and its coverage: every promise of the four KIPs is judged by a check, or says
why not; every check names what it judges; `kcts coverage` reports versions and verdicts from runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import KctsError
from harness.promises import Promise, catalogue, load
from harness.reporting import coverage

REPO = Path(__file__).resolve().parents[2]
KIPS = ("KIP-320", "KIP-359", "KIP-1094", "KIP-1319")


def test_the_catalogue_lists_at_least_60_promises_of_the_four_kips() -> None:
    promises = catalogue()
    of_kips = [p for p in promises.values() if p.kip in KIPS]
    assert len(of_kips) >= 60, f"{len(of_kips)} promises of {KIPS}"
    assert {p.kip for p in of_kips} == set(KIPS)
    for p in promises.values():
        assert p.text.endswith(".") and p.section, f"{p.id}: a promise is one sentence and cites its section"


def test_every_promise_is_judged_by_a_check_or_says_why_not() -> None:
    """A promise with no check fails here unless it is unobservable or pending, each with its reason."""
    by_promise = coverage.checks_by_promise()
    orphans = [p.id for p in catalogue().values() if p.expects_checks and not by_promise.get(p.id)]
    assert not orphans, f"promises with no check, neither unobservable nor pending: {orphans}"


def test_a_pending_or_unobservable_promise_that_gained_a_check_must_say_so() -> None:
    """The reasons cannot rot: once a check judges a pending promise, its `pending` line goes."""
    by_promise = coverage.checks_by_promise()
    stale = [f"{p.id} ({by_promise[p.id]})" for p in catalogue().values()
             if not p.expects_checks and by_promise.get(p.id)]
    assert not stale, f"pending or unobservable promises that checks judge: {stale}"


def test_every_check_names_promises_of_the_catalogue() -> None:
    by_promise = coverage.checks_by_promise()
    unknown = sorted(set(by_promise) - set(catalogue()))
    assert not unknown, f"checks name promises the catalogue lacks: {unknown}"
    named = {c for checks in by_promise.values() for c in checks}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "suites"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    collected = {line.split("[", 1)[0] for line in out.stdout.splitlines() if line.startswith("suites/")}
    assert collected, out.stdout[-2000:] + out.stderr[-2000:]
    assert not collected - named, f"checks that name no promise: {sorted(collected - named)}"


def test_a_check_naming_an_unknown_promise_is_a_usage_error(tmp_path: Path) -> None:
    check = tmp_path / "test_unknown.py"
    check.write_text('import pytest\n\n@pytest.mark.promise("kip320.no-such-promise")\ndef test_x():\n    pass\n')
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"), str(check)],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    said = out.stdout + out.stderr
    assert out.returncode != 0 and "promises.toml does not list: ::test_x: kip320.no-such-promise" in said, said


def test_a_malformed_catalogue_entry_is_one_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "promises.toml"
    bad.write_text('[[promise]]\nid = "x.y"\nkip = "KIP-320"\nsection = "s"\nside = "server"\ntext = "t."\n')
    with pytest.raises(KctsError, match=r"promise x\.y has side 'server'"):
        load(bad)


@pytest.mark.parametrize(("spec", "version", "expected"), [
    ("9+", 9, True), ("9+", 8, False), ("0-5", 5, True), ("0-5", 6, False), ("6", 6, True), ("any", 0, True),
])
def test_a_promise_concerns_the_versions_its_range_names(spec: str, version: int, expected: bool) -> None:
    p = Promise("a.b", "KIP-320", "s", "broker", "t.", apis={"Fetch": spec})
    assert p.concerns("Fetch", version) is expected
    assert not p.concerns("ListOffsets", version)


def _run(checks: list[dict]) -> dict:
    return {"target": "4.4.0", "checks": checks}


def test_coverage_takes_versions_from_judged_checks_and_the_worst_verdict_per_target() -> None:
    promises = {"kip320.fetch.x": Promise("kip320.fetch.x", "KIP-320", "s", "broker", "t.", apis={"Fetch": "9+"})}
    by_promise = {"kip320.fetch.x": ["suites/kip320/test_a.py::test_one", "suites/kip320/test_a.py::test_two"]}
    runs = {
        "4.4.0": _run([
            {"nodeid": "suites/kip320/test_a.py::test_one[v]", "cell": "pass",
             "apis": ["Fetch v9", "Fetch v10", "Fetch v12", "Fetch v4", "Metadata v12"]},
            {"nodeid": "suites/kip320/test_a.py::test_two", "cell": "pass", "apis": ["Fetch v17"]},
        ]),
        "kfake": _run([
            {"nodeid": "suites/kip320/test_a.py::test_one[v]", "cell": "pass", "apis": []},
            {"nodeid": "suites/kip320/test_a.py::test_two", "cell": "fail", "apis": ["Fetch v11"]},
        ]),
    }
    (cov,) = coverage.build(runs, promises, by_promise)
    assert cov.versions == {"Fetch": {9, 10, 11, 12, 17}}, "v4 is outside the promise, Metadata not its API"
    assert cov.versions_text() == "Fetch v9-12,17"
    assert cov.targets == {"4.4.0": "pass", "kfake": "fail"}
    assert cov.status == "judged"


def test_kcts_coverage_prints_the_summary_and_json(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(_run([
        {"nodeid": "suites/kip320/test_epoch_validation.py::test_fetch_on_the_leader_fences_an_older_epoch",
         "cell": "pass", "apis": ["Fetch v16", "Fetch v17", "Metadata v13"], "promises": []},
    ])))
    out = subprocess.run([sys.executable, "-m", "harness.cli", "coverage", str(run), "--json"], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    data = json.loads(out.stdout)
    assert data["summary"]["promises"] == len(catalogue())
    fenced = next(p for p in data["promises"] if p["id"] == "kip320.fetch.older-epoch-fenced")
    assert fenced["versions_judged"] == {"Fetch": [16, 17]} and fenced["targets"] == {"4.4.0": "pass"}
    text = subprocess.run([sys.executable, "-m", "harness.cli", "coverage", str(run)], cwd=REPO,
                          capture_output=True, text=True, timeout=60).stdout
    assert text.startswith(f"{len(catalogue())} promises: ") and "NO CHECK" not in text
