"""`kcts diff` across a rename: a check whose node id changed (harness/reporting/renamed.py) is paired
with its new id, its verdict compared, not listed as one check removed and another new."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.reporting.diff import diff, to_markdown
from harness.reporting.renamed import RENAMED, current_id

OLD = "suites/kip1319/test_franz_go.py::test_franz_go_retries_unknown_topic_id_then_commits"
NEW = "suites/kip1319/test_client_error_handling.py::test_client_retries_unknown_topic_id_then_commits[franz-go]"
KEPT = "suites/kip1319/test_broker_v6.py::test_broker_advertises_txn_offset_commit_v6"


def results(tmp_path: Path, name: str, cells: dict[str, str]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    checks = [{"nodeid": n, "cell": c, "reason": ""} for n, c in cells.items()]
    (folder / "results.json").write_text(json.dumps({"target": "4.4.0", "checks": checks}))
    return folder


def test_a_renamed_check_keeping_its_verdict_is_the_same(tmp_path: Path) -> None:
    old = results(tmp_path, "before", {OLD: "fail", KEPT: "pass"})
    new = results(tmp_path, "after", {NEW: "fail", KEPT: "pass"})
    (d,) = diff(old, new)
    assert (d.same, d.changed, d.added, d.removed) == (2, [], [], [])
    assert d.renamed == [f"{OLD} -> {NEW}"]
    assert f"- `{OLD} -> {NEW}`" in to_markdown([d])


def test_a_renamed_check_that_changed_its_verdict_is_a_change_under_its_new_id(tmp_path: Path) -> None:
    old = results(tmp_path, "before", {OLD: "pass"})
    new = results(tmp_path, "after", {NEW: "fail"})
    (d,) = diff(old, new)
    assert [(c.nodeid, c.old, c.new, c.regression) for c in d.changed] == [(NEW, "pass", "fail", True)]


def test_without_the_table_the_rename_would_be_a_removal_and_an_addition(tmp_path: Path) -> None:
    """The table is what pairs them: an id it does not list stays as it is."""
    assert current_id(OLD) == NEW
    assert current_id(NEW) == NEW and current_id(KEPT) == KEPT
    assert current_id("a", {"a": "b", "b": "c"}) == "c"
    with pytest.raises(ValueError, match="loops"):
        current_id("a", {"a": "b", "b": "a"})


def test_every_kip1319_client_check_of_the_old_modules_has_a_new_id_that_exists() -> None:
    """Each new id names a test of the suites as collected (module and function; the parameter is the
    stack), and no two old ids map to one new id."""
    suites = Path(__file__).resolve().parents[2] / "suites"
    assert len(set(RENAMED.values())) == len(RENAMED)
    for new in RENAMED.values():
        path, test = new.split("::")
        function = test.split("[")[0]
        assert f"def {function}(" in (suites.parent / path).read_text(), new
