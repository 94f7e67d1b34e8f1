"""The compatibility matrix: merged verdicts per target, and an offline page that shows exactly them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION
from harness.plugin.run_folder import run_dir
from harness.reporting.matrix import Target, build, summary_line, to_html, to_markdown, write_all
from harness.reporting.matrix_run import target_args
from harness.reporting.results import summarize
from tests.harness.browser import render

CHECKS = [
    ("suites/kip1319/test_v6.py::test_v6_commit", "kip1319", "v6 with a TopicId commits.",
     {"a": ("pass", "passed", ""), "b": ("not-supported", "skipped", "NOT_SUPPORTED: max version 5")}),
    ("suites/kip320/test_fetch.py::test_fenced", "kip320", "An older epoch is fenced.",
     {"a": ("fail", "failed", "AssertionError: error 0 != 74"),
      "b": ("client-gap", "xfailed", "KNOWN_CLIENT_GAP: #5158")}),
    ("suites/kip320/test_fetch.py::test_diverging", "kip320", "A diverging epoch is answered.",
     {"a": ("error", "failed", "StopIteration"),
      "b": ("target-refused", "skipped", "TARGET_REFUSED: no leader move")}),
    ("suites/smoke/test_smoke.py::test_round_trip", "smoke", "Records come back.",
     {"a": ("pass", "passed", ""), "b": ("skipped", "skipped", "needs fault control; the target is kfake")}),
]


def results_for(target: str) -> dict:
    checks = []
    for nodeid, area, promise, cells in CHECKS:
        cell, outcome, reason = cells[target]
        stem = nodeid.rsplit("::", 1)[1]
        checks.append({"nodeid": nodeid, "area": area, "promise": promise, "outcome": outcome, "cell": cell,
                       "reason": reason, "duration_s": 0.1,
                       "evidence": None if cell == "pass" else f"evidence/{stem}.txt",
                       "wire_evidence": None if cell == "pass" else f"evidence/{stem}.wire.json"})
    return {"target": target, "environment": {"backend": target}, "checks": checks}


def sample_matrix() -> dict:
    return build([(Target("a", "targets/a"), results_for("a")), (Target("b", "targets/b"), results_for("b"))])


def test_rows_are_grouped_by_kip_in_a_fixed_order_with_one_cell_per_target() -> None:
    m = sample_matrix()
    assert [r["area"] for r in m["rows"]] == ["smoke", "kip320", "kip320", "kip1319"]
    fenced = next(r for r in m["rows"] if r["nodeid"].endswith("test_fenced"))
    assert fenced["cells"]["a"]["cell"] == "fail" and fenced["cells"]["b"]["cell"] == "client-gap"
    assert fenced["cells"]["a"]["evidence"] == "targets/a/evidence/test_fenced.txt"
    assert m["summary"]["b"]["counts"] == {"pass": 0, "fail": 0, "error": 0, "not-supported": 1,
                                           "target-refused": 1, "client-gap": 1, "skipped": 1}


def test_each_target_summary_counts_what_was_judged_and_errors_apart_from_failures() -> None:
    m = sample_matrix()
    # a: pass, FAIL, ERROR, pass -> three judged of four; the ERROR is no verdict.
    assert m["summary"]["a"] == {
        "total": 4, "judged": 3, "judged_fraction": 0.75,
        "counts": {"pass": 2, "fail": 1, "error": 1, "not-supported": 0, "target-refused": 0, "client-gap": 0,
                   "skipped": 0},
    }
    # b: not supported and a known client gap are verdicts; a refusal and a skip are not.
    assert (m["summary"]["b"]["judged"], m["summary"]["b"]["total"]) == (2, 4)
    assert summary_line("a", m["summary"]["a"]) == (
        "a: judged 3/4 (75%): pass 2, FAIL 1, ERROR 1, not supported 0, refused 0, gap 0, skipped 0")


def test_results_summary_matches_the_matrix_summary_and_rounds_depth_down() -> None:
    cells = ["pass"] * 2 + ["skipped"]
    assert summarize(cells) == {"total": 3, "judged": 2, "judged_fraction": 0.6667,
                                "counts": {"pass": 2, "fail": 0, "error": 0, "not-supported": 0,
                                           "target-refused": 0, "client-gap": 0, "skipped": 1}}
    assert summary_line("t", summarize(["pass"] * 199 + ["error"])).startswith("t: judged 199/200 (99%): ")
    assert summary_line("t", summarize([])).startswith("t: judged 0/0: ")


def test_a_check_missing_from_one_target_is_shown_as_not_run() -> None:
    only_a = results_for("a")
    only_a["checks"].append({**only_a["checks"][0], "nodeid": "suites/x.py::test_extra"})
    m = build([(Target("a", "targets/a"), only_a), (Target("b", "targets/b"), results_for("b"))])
    extra = next(r for r in m["rows"] if r["nodeid"] == "suites/x.py::test_extra")
    assert extra["cells"]["b"]["cell"] == "absent"


def test_markdown_links_every_non_pass_cell_to_its_evidence() -> None:
    md = to_markdown(sample_matrix())
    assert "[known client gap](targets/b/evidence/test_fenced.txt)" in md


def test_fail_and_error_cells_link_to_text_and_wire_evidence_other_cells_to_text_only() -> None:
    m = sample_matrix()
    md, page = to_markdown(m), to_html(m)
    assert "[FAIL](targets/a/evidence/test_fenced.txt) [wire](targets/a/evidence/test_fenced.wire.json)" in md
    assert "[ERROR](targets/a/evidence/test_diverging.txt) [wire](targets/a/evidence/test_diverging.wire.json)" in md
    assert "[known client gap](targets/b/evidence/test_fenced.txt) |" in md
    assert "test_v6_commit.wire.json" not in md and "test_round_trip.wire.json" not in md
    for stem in ("test_fenced", "test_diverging"):
        assert f"<a href='targets/a/evidence/{stem}.txt'>" in page
        assert f"<a class='wire' href='targets/a/evidence/{stem}.wire.json'>wire</a>" in page
    assert "targets/b/evidence/test_fenced.wire.json" not in page


def test_column_headers_show_depth_and_counts() -> None:
    m = sample_matrix()
    header = to_markdown(m).splitlines()[2]
    assert header == (
        "| check | a<br>judged 3/4 (75%)<br>pass 2, FAIL 1, ERROR 1, not supported 0, refused 0, gap 0, skipped 0 "
        "| b<br>judged 2/4 (50%)<br>pass 0, FAIL 0, ERROR 0, not supported 1, refused 1, gap 1, skipped 1 |")
    page = to_html(m)
    th = re.search(r"<th data-target='a'>(.*?)</th>", page)
    assert th is not None
    assert "judged 3/4 (75%)" in th[1] and "FAIL 1, ERROR 1" in th[1]


def test_an_older_results_file_without_wire_evidence_still_builds() -> None:
    old = results_for("a")
    for check in old["checks"]:
        check.pop("wire_evidence")
    m = build([(Target("a", "targets/a"), old)])
    assert all(r["cells"]["a"]["wire"] is None for r in m["rows"])
    assert "[FAIL](targets/a/evidence/test_fenced.txt) |" in to_markdown(m)


def test_a_check_that_judged_histories_shows_each_ones_counts_linked_to_its_timeline() -> None:
    results = results_for("a")
    results["checks"][0]["history"] = [
        {"name": "lost-write-ruled", "operations": 20, "counts": {"lost-write": 1, "unseen": 1},
         "report": "h/lost.anomalies.json", "plot": "h/lost.timeline.png"},
        {"name": "lost-write-clean", "operations": 20, "counts": {}, "report": "h/clean.anomalies.json", "plot": None}]
    m = build([(Target("a", "targets/a"), results)])
    md, page = to_markdown(m), to_html(m)
    assert ("[pass](targets/a/results.json)<br>[anomalies: lost-write 1, unseen 1](targets/a/h/lost.timeline.png)"
            "<br>[anomalies: nothing found](targets/a/h/clean.anomalies.json)") in md
    assert ("<div class='anomalies found'><a href='targets/a/h/lost.timeline.png' title='lost-write-ruled'>"
            "anomalies: lost-write 1, unseen 1</a></div>") in page
    assert "<a href='targets/a/h/clean.anomalies.json' title='lost-write-clean'>anomalies: nothing found</a>" in page
    assert [r["nodeid"] for r in m["rows"] if r["cells"]["a"]["history"]] == [results["checks"][0]["nodeid"]]


@pytest.mark.parametrize(("spec", "args"), [
    ("4.4.0", ["--kafka-version", "4.4.0", "--brokers", "3", "--java-clients", "4.4.0"]),
    ("4.0.x", ["--kafka-version", "4.0.2", "--brokers", "3", "--java-clients", "4.0.2"]),
    ("kfake", ["--backend", "kfake", "--brokers", "3", "--java-clients", DEFAULT_VERSION]),
    ("external:127.0.0.1:9092", ["--backend", "external", "--bootstrap-servers", "127.0.0.1:9092",
                                 "--java-clients", DEFAULT_VERSION]),
])
def test_target_specs_select_a_backend(spec: str, args: list[str]) -> None:
    assert target_args(spec) == args


def test_html_page_shown_in_chromium_matches_the_json(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Headless Chromium renders matrix.html offline; every cell it shows equals matrix.json's verdict."""
    matrix = sample_matrix()
    write_all(matrix, tmp_path)
    shot = run_dir(request.config) / "matrix-screenshot.png"
    dom = render(f"file://{tmp_path / 'matrix.html'}", screenshot=shot, window=(1400, 700), required=True)
    rows = re.findall(r'<tr data-nodeid="([^"]+)">(.*?)</tr>', dom, flags=re.S)
    cell = re.compile(r'data-target="([^"]+)" data-cell="([^"]+)"')
    shown = {(nodeid, t): c for nodeid, row in rows for t, c in cell.findall(row)}
    expected = {(r["nodeid"], t): c["cell"] for r in matrix["rows"] for t, c in r["cells"].items()}
    assert shown == expected, f"page shows {shown}, JSON says {expected}"
    assert shot.stat().st_size > 10_000, "the screenshot is empty"
    assert json.loads((tmp_path / "matrix.json").read_text()) == matrix


def test_the_page_has_a_promise_coverage_section_with_each_targets_verdict() -> None:
    """Each promise's verdict on a target is the worst cell of the checks that name it there."""
    results = results_for("a")
    results["checks"].append({
        "nodeid": "suites/kip320/test_epoch_validation.py::test_fetch_on_the_leader_fences_an_older_epoch",
        "area": "kip320", "promise": "An older epoch is fenced.", "outcome": "passed", "cell": "pass", "reason": "",
        "duration_s": 0.1, "evidence": None, "wire_evidence": None, "promises": ["kip320.fetch.older-epoch-fenced"],
        "apis": ["Fetch v16", "Fetch v17", "Metadata v12"]})
    matrix = build([(Target("a", "targets/a"), results)])
    fenced = next(p for p in matrix["coverage"]["promises"] if p["id"] == "kip320.fetch.older-epoch-fenced")
    assert fenced["targets"] == {"a": "pass"} and fenced["versions_judged"] == {"Fetch": [16, 17]}
    page = to_html(matrix)
    assert "<h2 id='coverage'>Promise coverage</h2>" in page
    assert re.search(r"data-promise='kip320\.fetch\.older-epoch-fenced'>.*?Fetch 16, 17.*?class='cell pass'", page)
    assert "## Promise coverage" in to_markdown(matrix)


def soak_doc() -> dict:
    checks = [
        {"nodeid": CHECKS[0][0], "pass": 0, "n": 10, "cells": {"not-supported": 10}, "flipped": False},
        {"nodeid": CHECKS[1][0], "pass": 9, "n": 10, "cells": {"pass": 9, "fail": 1}, "flipped": True},
        {"nodeid": CHECKS[3][0], "pass": 10, "n": 10, "cells": {"pass": 10}, "flipped": False},
    ]
    return {"soak_id": "soak10", "repeat": 10, "summary": {"checks": 3, "flipped": 1}, "checks": checks}


def test_a_soak_column_shows_each_checks_verdicts_out_of_its_runs() -> None:
    m = build([(Target("a", "targets/a"), results_for("a"))], [("soak10 (10 runs)", soak_doc())])
    by_id = {r["nodeid"]: r for r in m["rows"]}
    assert by_id[CHECKS[1][0]]["soak"]["soak10 (10 runs)"]["flipped"]
    md = to_markdown(m)
    assert "soak soak10 (10 runs)" in md.splitlines()[2]
    assert "| not supported 10/10 |" in md and "| pass 9/10, flipped |" in md and "| pass 10/10 |" in md
    assert "| - |" in md  # the diverging check was not in the soak
    page = to_html(m)
    assert "<td class='cell fail' data-soak='soak10 (10 runs)'>pass 9/10, flipped</td>" in page


def test_a_check_only_the_soak_ran_gets_a_row_not_run_by_the_targets() -> None:
    doc = soak_doc()
    doc["checks"].append({"nodeid": "suites/kip359/test_p.py::test_epoch", "pass": 10, "n": 10,
                          "cells": {"pass": 10}, "flipped": False})
    m = build([(Target("a", "targets/a"), results_for("a"))], [("s", doc)])
    row = next(r for r in m["rows"] if r["nodeid"].endswith("test_epoch"))
    assert row["area"] == "kip359" and row["cells"]["a"]["cell"] == "absent" and row["soak"]["s"]["pass"] == 10
    assert m["summary"]["a"]["total"] == len(CHECKS)


def client_column(stack: str, cells: dict[str, str]) -> dict:
    """A client-only run's results: one check per (test, variant) of `stack`, with the cell given."""
    checks = []
    for name, cell in cells.items():
        test, _, promise = name.partition("|")
        checks.append({"nodeid": f"suites/kip320/test_t.py::{test.replace('STACK', stack)}", "area": "kip320",
                       "promise": f"text of {promise}", "outcome": "passed", "cell": cell, "reason": "",
                       "evidence": None, "wire_evidence": None, "promises": [promise]})
    return {"environment": {"client_stack": stack}, "checks": checks}


def test_client_columns_share_one_row_per_check_and_the_summary_takes_each_promises_worst_verdict() -> None:
    cells = {"test_reset[STACK-earliest]|p.resets": "pass", "test_reset[STACK-latest]|p.resets": "pass",
             "test_raise[STACK]|p.raises": "pass"}
    new = client_column("librdkafka", cells)
    old = client_column("librdkafka", {**cells, "test_reset[STACK-latest]|p.resets": "fail",
                                       "test_raise[STACK]|p.raises": "not-supported"})
    go = client_column("franz-go", {**cells, "test_raise[STACK]|p.raises": "client-gap"})
    m = build([(Target("new", "t/new"), new), (Target("old", "t/old"), old), (Target("go", "t/go"), go)])
    assert [r["nodeid"].rsplit("::", 1)[1] for r in m["rows"]] == [
        "test_raise[client]", "test_reset[client-earliest]", "test_reset[client-latest]"]
    latest = m["rows"][2]["cells"]
    assert (latest["new"]["cell"], latest["old"]["cell"], latest["go"]["cell"]) == ("pass", "fail", "pass")
    kept = {p["id"]: p["clients"] for p in m["clients"]["promises"]}
    assert kept == {"p.raises": {"new": "kept", "old": "not supported", "go": "known gap"},
                    "p.resets": {"new": "kept", "old": "BROKEN", "go": "kept"}}
    assert [p["text"] for p in m["clients"]["promises"]] == ["text of p.raises", "text of p.resets"]
    # A check that could not run does not unkeep what another check of the promise saw kept.
    partly = client_column("java", {"test_reset[STACK-earliest]|p.resets": "pass",
                                    "test_next[STACK]|p.resets": "not-supported"})
    assert build([(Target("j", "t/j"), partly)])["clients"]["promises"][0]["clients"] == {"j": "kept"}
    # Clients as rows, promises as columns: a row reads as what one client keeps.
    md = to_markdown(m)
    assert "## What each client keeps" in md and "| client | `raises` | `resets` |" in md
    assert "| old | not supported | BROKEN |" in md and "- `p.resets`: text of p.resets" in md
    page = to_html(m)
    assert "<table id='clients'>" in page and "<tr data-client='go'><th>go</th>" in page
    assert page.index("data-promise='p.raises'") < page.index("data-promise='p.resets'") < page.index(
        "data-client='new'")


def test_a_run_that_judges_every_stack_keeps_its_rows_apart() -> None:
    whole = {"environment": {}, "checks": client_column("java", {"test_raise[STACK]|p.raises": "pass"})["checks"]}
    m = build([(Target("4.4.0", "t/a"), whole)])
    assert [r["nodeid"].rsplit("::", 1)[1] for r in m["rows"]] == ["test_raise[java]"]
    assert m["clients"] == {"columns": [], "promises": []}


def test_columns_run_side_by_side_keep_their_order_and_their_own_logs(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`kcts matrix --jobs N`: the columns run at once, each output to its log file and no live line
    (their lines would interleave), and the matrix lists them in the command line's order whichever
    ended first."""
    import threading

    from harness.reporting import matrix_run

    started: list[str] = []
    both = threading.Barrier(2, timeout=10)  # each column waits for the other: they must overlap

    def column(folder: Path, spec: str, target: object, extra: list[str], name: str, pytest_args: list[str],
               progress_line: object, live: bool, to_file: bool) -> tuple[Target, dict[str, object]]:
        assert (live, to_file) == (False, True)
        started.append(spec)
        both.wait()
        return Target(spec, f"targets/{name}"), {"target": spec, "environment": {}, "checks": []}

    monkeypatch.setattr(matrix_run, "_run_column", column)
    folder = matrix_run.run_matrix(["kfake", "librdkafka-mock"], ["-m", "smoke"], reports=tmp_path, jobs=2)
    assert sorted(started) == ["kfake", "librdkafka-mock"]
    names = [t["name"] for t in json.loads((folder / "matrix.json").read_text())["targets"]]
    assert names == ["kfake", "librdkafka-mock"]
    with pytest.raises(KctsError, match="--jobs 0"):
        matrix_run.run_matrix(["kfake"], [], reports=tmp_path, jobs=0)
