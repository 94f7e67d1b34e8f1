"""The history's timeline and report, without a broker or Spark: what the picture shows is decided
as typed data (lanes, bars, anomaly marks, nemesis spans) and drawn into a real PNG; the report
carries each class's count and first examples, into the check's Allure result and results.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.histories.history import Operation, OpType, Outcome, Polled, Sent
from harness.integrity import anomaly_report, timeline_plot
from harness.integrity.anomaly_checks import AnomalyFindings, Case, JepsenAnomaly, OpRef
from harness.integrity.timeline_plot import ANOMALY_GID, NemesisEvent, draw, events_from_log, lane_labels, timeline
from harness.process.events import EventLog
from harness.reporting.schema import problems

REPO = Path(__file__).resolve().parents[2]
T0 = 5_000_000_000_000
MS = 1_000_000
PNG = b"\x89PNG\r\n\x1a\n"


def send(i: int, outcome: Outcome = Outcome.OK, process: str = "t.producer") -> Operation:
    start = T0 + i * 10 * MS
    return Operation(process, OpType.SEND, outcome, start, start + 4 * MS, sent=Sent("t", 0, f"v{i}", i))


def poll(i: int, process: str = "t.reader") -> Operation:
    start = T0 + i * 10 * MS + 5 * MS
    return Operation(process, OpType.POLL, Outcome.OK, start, start + 3 * MS, polled=(Polled("t", 0, i, f"v{i}"),))


def ref(op: Operation) -> OpRef:
    sent = op.sent
    offset = sent.offset if sent else op.polled[0].offset
    return OpRef(op.type.value, op.process, op.start_ns, op.end_ns, None, "t", 0, offset, f"v{offset}")


def lost_write(ops: list[Operation], i: int) -> AnomalyFindings:
    """A lost write of v{i}: its send and the poll of v{i+4} above it, as the checker names them."""
    s = next(op for op in ops if op.type is OpType.SEND and op.sent and op.sent.offset == i)
    p = next(op for op in ops if op.type is OpType.POLL and op.polled[0].offset == i + 4)
    case = Case(JepsenAnomaly.LOST_WRITE, "t", 0, i, f"v{i}", f"acknowledged at or below offset {i + 4}",
                (ref(s), ref(p)))
    unseen = Case(JepsenAnomaly.UNSEEN, "t", 0, i, f"v{i}", "acknowledged, never polled", (ref(s),))
    return AnomalyFindings({JepsenAnomaly.LOST_WRITE: 1, JepsenAnomaly.UNSEEN: 3},
                           {JepsenAnomaly.LOST_WRITE: (case,), JepsenAnomaly.UNSEEN: (unseen,)})


def history(n: int) -> list[Operation]:
    ops = [send(i, Outcome.INFO if i == 2 else Outcome.FAIL if i == 3 else Outcome.OK) for i in range(n)]
    ops += [poll(i) for i in range(n) if i != 5]
    ops.append(Operation("t.producer", OpType.COMMIT, Outcome.OK, T0, T0 + MS))  # neither send nor poll: not drawn
    return ops


def test_each_process_is_a_lane_of_its_sends_and_polls_by_outcome_from_the_first_operation() -> None:
    ops = history(10)
    t = timeline(ops, AnomalyFindings({}, {}))
    assert t.lanes == ("t.producer", "t.reader") and t.t0_ns == T0
    assert t.total == 19 and t.left_out == 0 and len(t.bars) == 19
    by = {(b.lane, b.type, b.start_s): b for b in t.bars}
    assert by[(0, OpType.SEND, 0.02)].outcome is Outcome.INFO
    assert by[(0, OpType.SEND, 0.03)].outcome is Outcome.FAIL
    assert by[(1, OpType.POLL, 0.005)].end_s == pytest.approx(0.008)
    assert t.marks == () and t.events == ()


def test_every_operation_an_anomaly_names_is_marked_with_its_class_in_its_lane() -> None:
    ops = history(10)
    findings = lost_write(ops, 5)
    t = timeline(ops, findings)
    assert [(m.lane, m.kind) for m in t.marks] == [
        (0, JepsenAnomaly.LOST_WRITE), (0, JepsenAnomaly.UNSEEN), (1, JepsenAnomaly.LOST_WRITE)]
    assert t.marks[0].at_s == pytest.approx(0.052)  # the middle of the send of v5
    fig = draw(t, findings)
    (marked,) = [c for c in fig.axes[0].collections if c.get_gid() == ANOMALY_GID]
    assert len(marked.get_offsets()) == 3
    labels = [a.get_text() for a in fig.axes[0].texts]
    assert sorted(labels) == ["lost-write", "lost-write, unseen"]  # one label per operation marked


def test_without_an_anomaly_nothing_is_marked() -> None:
    t = timeline(history(10), AnomalyFindings({}, {}))
    fig = draw(t, AnomalyFindings({}, {}))
    assert not [c for c in fig.axes[0].collections if c.get_gid() == ANOMALY_GID]
    assert "no anomaly" in fig.axes[0].get_title(loc="left")


def test_nemesis_events_are_spans_or_moments_on_the_histories_clock() -> None:
    log = EventLog()
    log.add("nemesis", "leader killed", broker=1)
    log.add("pipeline", "first batch processed")
    (killed,) = events_from_log(log)
    assert killed.label == "leader killed" and killed.end_ns is None
    assert abs(killed.start_ns - time.monotonic_ns()) < 5_000_000_000  # the clock the histories are written on
    rule = NemesisEvent(T0 + 40 * MS, "proxy: DropRecords(5)", T0 + 90 * MS)
    t = timeline(history(10), AnomalyFindings({}, {}), [rule])
    (span,) = t.events
    assert (span.start_s, span.end_s, span.label) == (pytest.approx(0.04), pytest.approx(0.09), rule.label)
    fig = draw(t, AnomalyFindings({}, {}))
    assert "N1" in [a.get_text() for a in fig.axes[0].texts]  # the line's tag; its label in the legend
    assert "N1 proxy: DropRecords(5)" in [x.get_text() for x in fig.axes[0].get_legend().get_texts()]


def test_lanes_are_named_without_the_prefix_every_process_shares() -> None:
    assert lane_labels(["k-t-1.producer", "k-t-1.reader", "k-t-1.next-reader"]) == (
        "k-t-1.", ("producer", "reader", "next-reader"))
    assert lane_labels(["p1", "p2"]) == ("", ("p1", "p2"))
    assert lane_labels(["a.x"]) == ("a.", ("x",))
    assert lane_labels([]) == ("", ())


def test_a_large_history_is_sampled_per_lane_keeping_what_the_anomalies_name(tmp_path: Path) -> None:
    ops = history(50_000)
    findings = lost_write(ops, 31_337)
    started = time.monotonic()
    t = timeline_plot.write(tmp_path / "big.png", ops, findings, max_per_lane=1000)
    assert time.monotonic() - started < 60
    per_lane = [sum(1 for b in t.bars if b.lane == lane) for lane in (0, 1)]
    assert all(n <= 1002 for n in per_lane), per_lane
    assert t.total == 99_999 and t.left_out == t.total - len(t.bars)
    named = {(m.lane, m.at_s) for m in t.marks}
    assert all(any(b.lane == lane and b.start_s <= at <= b.end_s for b in t.bars) for lane, at in named)
    assert (tmp_path / "big.png").read_bytes()[:8] == PNG


def test_the_report_gives_each_class_its_count_and_first_examples_and_a_png(tmp_path: Path) -> None:
    ops = history(10)
    r = anomaly_report.write("lost-write-ruled", lost_write(ops, 5), ops, tmp_path / "history")
    assert r.counts == {"lost-write": 1, "unseen": 3}
    assert r.plot is not None and r.plot.read_bytes()[:8] == PNG and r.plot.parent == tmp_path / "history"
    data = json.loads(r.report.read_text())
    assert data["counts"] == {"lost-write": 1, "unseen": 3} and data["operations"] == 20
    (case,) = data["examples"]["lost-write"]
    assert (case["offset"], case["value"]) == (5, "v5")
    assert [(o["role"], o["process"], o["offset"]) for o in case["ops"]] == [
        ("send", "t.producer", 5), ("poll", "t.reader", 9)]
    text = r.text.read_text()
    assert text.startswith("Anomaly checks of lost-write-ruled: lost-write 1, unseen 3\n")
    assert "lost-write: first 1 of 1\n  lost-write t-0@5 v5: acknowledged at or below offset 9" in text
    assert "unseen: first 1 of 3" in text
    assert "class       count\nlost-write  1\nunseen      3\n" in text


def test_the_count_table_is_aligned_for_a_class_name_shorter_than_its_header(tmp_path: Path) -> None:
    ops = history(4)
    cycle = Case(JepsenAnomaly.G1C, "t", 0, None, "a b", "cycle among a, b", (ref(ops[0]),))
    r = anomaly_report.write("g1c", AnomalyFindings({JepsenAnomaly.G1C: 1}, {JepsenAnomaly.G1C: (cycle,)}), ops,
                             tmp_path)
    assert "class  count\nG1c    1\n" in r.text.read_text()


def test_a_clean_history_says_nothing_found(tmp_path: Path) -> None:
    ops = history(4)
    r = anomaly_report.write("clean", AnomalyFindings({}, {}), ops, tmp_path)
    assert r.counts == {} and json.loads(r.report.read_text())["examples"] == {}
    assert r.text.read_text().startswith("Anomaly checks of clean: nothing found\n")


def test_the_check_that_reported_a_history_names_it_in_results_json_and_allure(tmp_path: Path) -> None:
    """Through the plugin: the anomaly_reporter fixture's report reaches the check's entry in
    results.json (counts, report and timeline relative to the run folder, valid against the schema)
    and its Allure result (the text, the JSON and the PNG)."""
    (tmp_path / "test_judged.py").write_text(
        "from pathlib import Path\n"
        "from fixtures.integrity import anomaly_reporter\n"
        "from tests.integrity.test_timeline_plot import history, lost_write\n"
        "from harness.plugin.run_folder import run_dir\n"
        "def test_judged(anomaly_reporter, pytestconfig):\n"
        "    '''A history judged.'''\n"
        "    ops = history(10)\n"
        "    anomaly_reporter.report('lost-write-ruled', lost_write(ops, 5), ops, run_dir(pytestconfig) / 'h')\n")
    allure = tmp_path / "allure"
    cmd = [sys.executable, "-m", "pytest", "-p", "harness.pytest_plugin", "-p", "no:cacheprovider", "-q",
           "--reports-dir", str(tmp_path / "reports"), "--run-id", "h", "--alluredir", str(allure),
           str(tmp_path / "test_judged.py")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads((tmp_path / "reports" / "h" / "results.json").read_text())
    assert problems(data) == []
    (check,) = data["checks"]
    assert check["history"] == [{"name": "lost-write-ruled", "operations": 20,
                                 "counts": {"lost-write": 1, "unseen": 3},
                                 "report": "h/lost-write-ruled.anomalies.json",
                                 "plot": "h/lost-write-ruled.timeline.png"}]
    (result,) = [json.loads(p.read_text()) for p in allure.glob("*-result.json")]
    kinds = sorted(a["type"] for a in result["attachments"])
    assert kinds == ["application/json", "image/png", "text/plain"], result["attachments"]
