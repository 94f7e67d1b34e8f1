"""`kcts matrix merge`: columns made apart (a CI job each, maybe on machines of their own) joined
into one matrix, equal cell for cell to the one-process matrix of the same targets; and inputs that
cannot be compared (another kcts version, another check set) refused with what differs named.

The live test runs four smoke runs one after another (two columns apart, then the one-process
matrix of both), a few minutes on 2 cores: it is `heavy`, and `tox -e ci` runs it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main as kcts
from harness.errors import KctsError
from harness.reporting.matrix import Target, build
from harness.reporting.merge import merge

REPO = Path(__file__).resolve().parents[2]
IDS = ["suites/smoke/test_smoke.py::test_round_trip", "suites/kip320/test_fetch.py::test_fenced",
       "suites/kip320/test_fetch.py::test_diverging"]


def results(target: str, version: str = "0.1.0", ids: list[str] | None = None, cell: str = "pass",
            stack: str | None = None) -> dict:
    env = {"target": target, "broker_version": target, **({"client_stack": stack} if stack else {})}
    checks = [{"nodeid": i, "area": i.split("/")[1], "promise": f"promise of {i}", "outcome": "passed",
               "cell": cell, "reason": "", "duration_s": 0.1,
               "evidence": None if cell == "pass" else f"evidence/{i.rsplit('::', 1)[1]}.txt",
               "wire_evidence": None, "promises": [], "apis": []} for i in (IDS if ids is None else ids)]
    return {"schema_version": 2, "kcts": {"version": version, "commit": "c0ffee", "dirty": False},
            "target": target, "environment": env, "fingerprint": None, "checks": checks}


def run_folder(root: Path, name: str, doc: dict) -> Path:
    """A run folder as `kcts run --reports-dir ROOT --run-id NAME` leaves it (results.json, evidence/)."""
    folder = root / name
    (folder / "evidence").mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(doc))
    for c in doc["checks"]:
        if c["evidence"]:
            (folder / c["evidence"]).write_text(f"why {c['nodeid']} is {c['cell']}")
    return folder


def refusal(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run `kcts matrix merge ARGS` as the command line does; its exit must be 2; its error text."""
    assert kcts(["matrix", "merge", *args]) == 2
    return capsys.readouterr().err


def test_columns_from_separate_runs_merge_into_the_matrix_one_process_builds(tmp_path: Path) -> None:
    a = run_folder(tmp_path / "machine-a", "A", results("4.4.0"))
    b = run_folder(tmp_path / "machine-b", "B", results("4.3.1", cell="fail"))
    merged = merge([str(a), str(b / "results.json")], tmp_path / "out")
    direct = build([(Target("4.4.0", "targets/4.4.0"), results("4.4.0")),
                    (Target("4.3.1", "targets/4.3.1"), results("4.3.1", cell="fail"))])
    assert merged == direct
    assert json.loads((tmp_path / "out" / "matrix.json").read_text()) == direct
    # every link the page holds resolves inside the merged folder
    assert (tmp_path / "out" / "targets/4.3.1/evidence/test_fenced.txt").read_text().startswith("why ")
    page = (tmp_path / "out" / "matrix.html").read_text()
    assert "<a href='targets/4.3.1/evidence/test_fenced.txt'>FAIL</a>" in page


def test_a_merged_matrix_merges_again_and_names_a_run_column(tmp_path: Path) -> None:
    a = run_folder(tmp_path, "A", results("4.4.0"))
    b = run_folder(tmp_path, "B", results("4.4.0", cell="not-supported"))
    merge([str(a), f"vendor-x={b}"], tmp_path / "m1")
    c = run_folder(tmp_path, "C", results("kfake"))
    m = merge([str(tmp_path / "m1"), str(c)], tmp_path / "m2")
    assert [t["name"] for t in m["targets"]] == ["4.4.0", "vendor-x", "kfake"]
    assert m["rows"][0]["cells"]["vendor-x"]["evidence"] == "targets/vendor-x/evidence/test_round_trip.txt"
    assert (tmp_path / "m2" / m["rows"][0]["cells"]["vendor-x"]["evidence"]).is_file()


def test_other_kcts_versions_are_refused_naming_each_version_and_its_columns(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = run_folder(tmp_path, "A", results("4.4.0", version="0.1.0"))
    b = run_folder(tmp_path, "B", results("4.3.1", version="0.2.0"))
    c = run_folder(tmp_path, "C", results("kfake", version="0.1.0"))
    err = refusal(capsys, str(a), str(b), str(c), "--out", str(tmp_path / "out"))
    assert "different kcts versions: 0.1.0 (4.4.0, kfake); 0.2.0 (4.3.1)" in err, err
    assert "one kcts" in err
    assert not (tmp_path / "out" / "matrix.json").exists()


def test_another_check_set_is_refused_naming_the_column_and_the_missing_and_extra_checks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = run_folder(tmp_path, "A", results("4.4.0"))
    b = run_folder(tmp_path, "B", results("4.3.1", ids=[IDS[0], "suites/kip359/test_p.py::test_new"]))
    err = refusal(capsys, str(a), str(b), "--out", str(tmp_path / "out"))
    line = next(x for x in err.splitlines() if "other checks" in x)
    assert f"column '4.3.1' ({b}) ran other checks than '4.4.0' ({a})" in line
    assert f"missing 2: {IDS[2]}, {IDS[1]}" in line and "extra 1: suites/kip359/test_p.py::test_new" in line
    assert "same selection (-m, -k, test paths)" in line


def test_a_long_difference_is_cut_and_both_problems_are_named_at_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    many = [f"suites/kip320/test_x.py::test_{i:02d}" for i in range(20)]
    a = run_folder(tmp_path, "A", results("4.4.0", ids=many))
    b = run_folder(tmp_path, "B", results("4.3.1", ids=[], version="9"))
    err = refusal(capsys, str(a), str(b), "--out", str(tmp_path / "out"))
    assert "different kcts versions" in err and "missing 20: " in err and "and 12 more" in err


def test_client_only_columns_are_compared_with_columns_of_their_stack(tmp_path: Path) -> None:
    whole = run_folder(tmp_path, "W", results("4.4.0"))
    # a client-only run judges fewer checks, and names its stack in its ids: its own reference
    rd = ["suites/kip320/test_fetch.py::test_reset[librdkafka-earliest]"]
    doc = results("4.4.0", ids=rd, stack="librdkafka")
    doc["environment"]["librdkafka_driver"] = "confluent-kafka 2.6.1"
    lib = run_folder(tmp_path, "L", doc)
    m = merge([str(whole), str(lib)], tmp_path / "out")
    # titled as `kcts matrix --librdkafka 2.6.1` titles its column
    assert [t["name"] for t in m["targets"]] == ["4.4.0", "4.4.0 · librdkafka 2.6.1"]
    go = run_folder(tmp_path, "G", results("4.4.0", ids=[], stack="franz-go"))
    other = run_folder(tmp_path, "G2", results("4.3.1", ids=["suites/kip320/test_fetch.py::test_reset[franz-go-x]"],
                                               stack="franz-go"))
    with pytest.raises(KctsError, match=r"ran other checks .* extra 1: .*test_reset\[client-x\]"):
        merge([str(go), str(other)], tmp_path / "out2")


def test_bad_inputs_name_what_to_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "a matrix folder (reports/matrix-<stamp>), a run folder" in refusal(capsys, str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    assert "neither matrix.json nor results.json" in refusal(capsys, str(tmp_path / "empty"))
    a = run_folder(tmp_path, "A", results("4.4.0"))
    b = run_folder(tmp_path, "B", results("4.4.0"))
    assert "two columns are named '4.4.0'" in refusal(capsys, str(a), str(b), "--out", str(tmp_path / "o"))
    merge([str(a)], tmp_path / "m")
    (tmp_path / "m" / "targets" / "4.4.0" / "results.json").unlink()
    assert "upload the whole matrix folder" in refusal(capsys, str(tmp_path / "m"))
    assert "already holds a matrix" in refusal(capsys, f"x={b}", "--out", str(tmp_path / "m"))


def _kcts(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """kcts in a process of its own, from `cwd` (its ./reports is that folder's): a machine of its own."""
    cwd.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, (f"kcts {' '.join(args)}: exit {proc.returncode}\n"
                                  f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc


def _cells(page: str) -> dict[tuple[str, str], str]:
    """What the page shows: (node id, column) -> cell."""
    rows = re.findall(r"<tr data-nodeid='([^']+)'>(.*?)</tr>", page, flags=re.S)
    return {(n, t): c for n, row in rows for t, c in re.findall(r"data-target='([^']+)' data-cell='([^']+)'", row)}


@pytest.mark.live
@pytest.mark.heavy
def test_two_columns_made_apart_merge_into_the_one_process_matrix_cell_for_cell(tmp_path: Path) -> None:
    _kcts(tmp_path / "machine-a", "run", "-m", "smoke", "-q", "--run-id", "A")
    _kcts(tmp_path / "machine-b", "run", "--kafka-version", "4.3.1", "-m", "smoke", "-q", "--run-id", "B")
    out = tmp_path / "merged"
    _kcts(tmp_path, "matrix", "merge", str(tmp_path / "machine-a/reports/A"),
          str(tmp_path / "machine-b/reports/B/results.json"), "--out", str(out))
    _kcts(tmp_path / "one", "matrix", "--targets", "4.4.0,4.3.1", "-m", "smoke")
    (one,) = (tmp_path / "one" / "reports").glob("matrix-*")
    merged, whole = (json.loads((f / "matrix.json").read_text()) for f in (out, one))
    assert [(t["name"], t["folder"]) for t in merged["targets"]] == [(t["name"], t["folder"]) for t in whole["targets"]]
    assert [r["nodeid"] for r in merged["rows"]] == [r["nodeid"] for r in whole["rows"]]
    assert len(merged["rows"]) >= 2, merged["rows"]
    differ = {(r["nodeid"], t): (c, w["cells"][t]) for r, w in zip(merged["rows"], whole["rows"], strict=True)
              for t, c in r["cells"].items() if c != w["cells"][t]}
    assert not differ, f"cells that differ (merged, one process): {differ}"
    for key in ("summary", "coverage", "clients", "soaks"):
        assert merged[key] == whole[key], key
    # the same target answers the same: its fingerprint digest is one
    assert [t["fingerprint"]["digest"] for t in merged["targets"]] == [t["fingerprint"]["digest"]
                                                                       for t in whole["targets"]]
    shown = _cells((out / "matrix.html").read_text())
    assert shown == _cells((one / "matrix.html").read_text()) and len(shown) == 2 * len(merged["rows"])
    # and the merged folder is one `kcts diff` reads as the one-process matrix: no change
    assert kcts(["diff", str(one), str(out)]) == 0
