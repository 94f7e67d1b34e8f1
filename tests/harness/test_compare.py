"""`kcts compare`: two runs agree only when every check both ran has the same verdict."""

from __future__ import annotations

import json
from pathlib import Path

from harness.reporting.compare import compare


def run(tmp_path: Path, name: str, cells: dict[str, str]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    checks = [{"nodeid": n, "cell": c} for n, c in cells.items()]
    (folder / "results.json").write_text(json.dumps({"checks": checks}))
    return folder


def test_same_verdicts_on_the_common_checks_agree(tmp_path: Path) -> None:
    a = run(tmp_path, "local", {"t1": "pass", "t2": "client-gap", "t3": "pass"})
    b = run(tmp_path, "docker", {"t1": "pass", "t2": "client-gap"})
    result = compare(a, b)
    assert result.same and result.common == 2 and result.only_a == ["t3"]


def test_one_other_verdict_is_a_difference_named_in_the_output(tmp_path: Path) -> None:
    a = run(tmp_path, "local", {"t1": "pass", "t2": "pass"})
    b = run(tmp_path, "docker", {"t1": "pass", "t2": "fail"})
    result = compare(a, b)
    assert not result.same and result.differ == [("t2", "pass", "fail")]
    assert "t2: pass in local, fail in docker" in result.render()


def test_runs_with_no_check_in_common_do_not_agree(tmp_path: Path) -> None:
    assert not compare(run(tmp_path, "a", {"t1": "pass"}), run(tmp_path, "b", {"t2": "pass"})).same
