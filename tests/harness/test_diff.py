"""`kcts diff OLD NEW`: exactly the checks whose verdict changed, with what the evidence says, the
new and removed checks, the fingerprint's changes, and a non-zero exit on a pass that became a FAIL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as kcts
from harness.errors import KctsError
from harness.reporting.diff import diff
from harness.reporting.fingerprint import with_digest

FP_440 = with_digest({"version": "4.4.0", "brokers": 3, "features": {"supported": {}, "finalized": {}},
                      "api_versions": {"Fetch": [4, 17], "TxnOffsetCommit": [0, 6]}})
FP_431 = with_digest({"version": "4.3.1", "brokers": 3, "features": {"supported": {}, "finalized": {}},
                      "api_versions": {"Fetch": [4, 17], "TxnOffsetCommit": [0, 5]}})


def run(tmp_path: Path, name: str, cells: dict[str, str], fingerprint: dict[str, Any] = FP_440,
        wire: dict[str, int] | None = None) -> Path:
    """A run folder; `wire` gives a check the error code its wire evidence shows (TxnOffsetCommit v6)."""
    folder = tmp_path / name
    (folder / "evidence").mkdir(parents=True)
    checks = []
    for nodeid, cell in cells.items():
        check = {"nodeid": nodeid, "cell": cell, "reason": "" if cell == "pass" else f"{nodeid} was {cell}"}
        if wire and nodeid in wire:
            path = folder / "evidence" / f"{nodeid}.wire.json"
            answer = {"Topics": [{"Partitions": [{"PartitionIndex": 0, "ErrorCode": wire[nodeid]}]}]}
            path.write_text(json.dumps({"exchanges": [{"api": "TxnOffsetCommit", "version": 6, "response": answer}]}))
            check["wire_evidence"] = f"evidence/{nodeid}.wire.json"
        checks.append(check)
    (folder / "results.json").write_text(json.dumps({"target": name, "fingerprint": fingerprint, "checks": checks}))
    return folder


def test_only_the_checks_whose_verdict_changed_are_listed(tmp_path: Path) -> None:
    old = run(tmp_path, "4.4.0", {"t1": "pass", "t2": "pass", "t3": "not-supported", "gone": "pass"})
    new = run(tmp_path, "4.3.1", {"t1": "pass", "t2": "not-supported", "t3": "not-supported", "new": "pass"},
              fingerprint=FP_431)
    (d,) = diff(old, new)
    assert [(c.nodeid, c.old, c.new) for c in d.changed] == [("t2", "pass", "not-supported")]
    assert d.added == ["new"] and d.removed == ["gone"] and d.same == 2
    assert d.fingerprint == ["version: 4.4.0 -> 4.3.1", "TxnOffsetCommit: v0-6 -> v0-5"]
    assert not d.regressions


def test_the_error_the_target_answered_is_named_on_both_sides(tmp_path: Path) -> None:
    old = run(tmp_path, "old", {"t1": "fail"}, wire={"t1": 74})
    new = run(tmp_path, "new", {"t1": "error"}, wire={"t1": 6})
    (d,) = diff(old, new)
    assert d.changed[0].evidence.startswith("answered NOT_LEADER_OR_FOLLOWER(6) to TxnOffsetCommit v6, "
                                             "was FENCED_LEADER_EPOCH(74) to TxnOffsetCommit v6")


def test_a_pass_that_became_a_fail_exits_non_zero_and_the_reverse_does_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = run(tmp_path, "good", {"t1": "pass", "t2": "pass"})
    bad = run(tmp_path, "bad", {"t1": "pass", "t2": "fail"})
    md, js = tmp_path / "diff.md", tmp_path / "diff.json"
    assert kcts(["diff", str(good), str(bad), "--markdown", str(md), "--json", str(js)]) == 1
    assert "| `t2` | pass | fail **regression** |" in md.read_text()
    assert json.loads(js.read_text())["regressions"] == 1
    assert kcts(["diff", str(bad), str(good)]) == 0
    assert "| `t2` | fail | pass |" in capsys.readouterr().out


def test_an_error_where_a_pass_was_is_a_regression_too(tmp_path: Path) -> None:
    (d,) = diff(run(tmp_path, "a", {"t1": "pass"}), run(tmp_path, "b", {"t1": "error"}))
    assert [c.nodeid for c in d.regressions] == ["t1"]


def test_matrices_are_compared_column_by_column(tmp_path: Path) -> None:
    def matrix(name: str, columns: dict[str, dict[str, str]]) -> Path:
        folder = tmp_path / name
        targets = []
        for target, cells in columns.items():
            run(folder / "targets", target, cells)
            targets.append({"name": target, "folder": f"targets/{target}"})
        (folder / "matrix.json").write_text(json.dumps({"targets": targets, "rows": []}))
        return folder

    old = matrix("m1", {"4.4.0": {"t1": "pass"}, "kfake": {"t1": "pass"}})
    new = matrix("m2", {"4.4.0": {"t1": "pass"}, "kfake": {"t1": "fail"}})
    diffs = {d.target: d for d in diff(old, new)}
    assert not diffs["4.4.0"].changed and [c.nodeid for c in diffs["kfake"].regressions] == ["t1"]


def test_a_folder_without_results_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KctsError, match=r"holds neither results\.json nor matrix\.json"):
        diff(tmp_path, tmp_path)
    assert kcts(["diff", str(tmp_path), str(tmp_path)]) == 2
