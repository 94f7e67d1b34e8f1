"""The anomaly checks on small hand-built histories: each of Jepsen's anomaly classes is found and named.

Every history is written through the format's own writer (one .jsonl per process) and loaded by the
Spark loader, so each test also runs the format end to end. Each anomalous history holds exactly one
anomaly; where Jepsen's classes nest (every lost write is also unseen) the test expects both.

Every check is local to a partition and to a process, so the histories of all cases are judged in
one Spark query (`judged`), each on a topic, with processes and transactions of its own named after
it: a Spark job costs seconds on a loaded machine, a case costs a few rows. Each test then reads its
own topic's findings; the clean history is also judged alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness.histories.history import HistoryWriter, Operation, OpType, Outcome, Polled, Sent, read_file, read_folder
from harness.histories.json_codec import HistoryFormatError
from harness.integrity.anomaly_checks import (
    AnomalyFindings,
    JepsenAnomaly,
    all_cases,
    check_anomalies,
    summarize_by_topic,
)
from harness.integrity.anomaly_frames import load_jsonl, load_parquet, write_parquet

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = "t"  # a history writes one partition, <topic>-0


@dataclass
class Builder:
    """A history in the making: one clock for every process, each call takes one tick. `topic` also
    names its processes and transactions (<topic>.p0, <topic>.t1), so histories can share a folder."""

    topic: str = T
    ops: list[Operation] = field(default_factory=list)
    now: int = 1_000

    def _op(self, process: str, type: OpType, outcome: str = "ok", txn: str | None = None,
            sent: Sent | None = None, polled: tuple[Polled, ...] = ()) -> Operation:
        self.now += 10
        op = Operation(f"{self.topic}.{process}", type, Outcome(outcome), self.now, self.now + 5,
                       None if txn is None else f"{self.topic}.{txn}", sent, polled)
        self.ops.append(op)
        return op

    def send(self, process: str, value: str, offset: int | None, outcome: str = "ok", txn: str | None = None,
             partition: int = 0) -> Builder:
        self._op(process, OpType.SEND, outcome, txn, Sent(self.topic, partition, value, offset,
                                                          None if outcome == "ok" else "timed out"))
        return self

    def poll(self, process: str, *records: tuple[int, str] | tuple[int, int, str], outcome: str = "ok",
             txn: str | None = None) -> Builder:
        """Records as (offset, value) of partition 0, or (partition, offset, value)."""
        full = [r if len(r) == 3 else (0, *r) for r in records]
        self._op(process, OpType.POLL, outcome, txn, polled=tuple(Polled(self.topic, p, o, v, 1) for p, o, v in full))
        return self

    def begin(self, process: str, txn: str) -> Builder:
        self._op(process, OpType.TXN_BEGIN, txn=txn)
        return self

    def commit(self, process: str, txn: str, outcome: str = "ok") -> Builder:
        self._op(process, OpType.TXN_COMMIT, outcome, txn)
        return self

    def abort(self, process: str, txn: str) -> Builder:
        self._op(process, OpType.TXN_ABORT, txn=txn)
        return self

    def write(self, folder: Path) -> Path:
        for process in sorted({op.process for op in self.ops}):
            with HistoryWriter(folder, process) as w:
                for op in self.ops:
                    if op.process == process:
                        w.write(op)
        return folder


def abc(b: Builder) -> Builder:
    """p0 sends a, b, c, acknowledged at offsets 0, 1, 2."""
    return b.send("p0", "a", 0).send("p0", "b", 1).send("p0", "c", 2)


def clean(b: Builder) -> Builder:
    """Plain and transactional sends, an aborted transaction, an indeterminate send never read, and a
    consumer that reads everything committed in order across three polls: nothing to find."""
    b = abc(b).begin("p0", "t1").send("p0", "d", 3, txn="t1").send("p0", "e", 4, txn="t1").commit("p0", "t1")
    # the commit marker takes offset 5; the aborted transaction's record 6 and its marker 7
    b.begin("p0", "t2").send("p0", "x", 6, txn="t2").abort("p0", "t2")
    b.send("p0", "y", None, outcome="info")
    # t3's driver died in its commit: no commit line, but p1's read proves it (not a precommitted read)
    b.begin("p0", "t3").send("p0", "z", 8, txn="t3")
    b.poll("p1", (0, "a"), (1, "b")).poll("p1", (2, "c"), (3, "d")).poll("p1", (4, "e"), (8, "z"))
    return b


def g0(b: Builder) -> Builder:
    """t1 writes partition 0 before t2 and partition 1 after it: t1 <ww t2 <ww t1, writes only."""
    b.begin("p1", "t1").begin("p2", "t2").send("p1", "x1", 0, txn="t1").send("p2", "y1", 0, txn="t2", partition=1)
    b.send("p2", "x2", 1, txn="t2").send("p1", "y2", 1, txn="t1", partition=1).commit("p1", "t1").commit("p2", "t2")
    return b.poll("p9", (0, 0, "x1"), (0, 1, "x2"), (1, 0, "y1"), (1, 1, "y2"))


def g0_through_a_plain_send(b: Builder) -> Builder:
    """As `g0`, with a send outside any transaction between t1's and t2's writes to partition 0: the
    cycle runs through it (t1 <ww s <ww t2 <ww t1)."""
    b.begin("p1", "t1").begin("p2", "t2").send("p1", "x1", 0, txn="t1").send("p3", "s", 1)
    b.send("p2", "y1", 0, txn="t2", partition=1).send("p2", "x2", 2, txn="t2")
    b.send("p1", "y2", 1, txn="t1", partition=1).commit("p1", "t1").commit("p2", "t2")
    return b.poll("p9", (0, 0, "x1"), (0, 1, "s"), (0, 2, "x2"), (1, 0, "y1"), (1, 1, "y2"))


def g1c(b: Builder) -> Builder:
    """t1 wrote partition 0 before t2 (t1 <ww t2), and read what t2 wrote to partition 1 after t2
    committed (t2 <wr t1): a cycle through a wr edge, with no read of anything uncommitted."""
    b.begin("p1", "t1").send("p1", "x1", 0, txn="t1")
    b.begin("p2", "t2").send("p2", "x2", 1, txn="t2").send("p2", "y", 0, txn="t2", partition=1).commit("p2", "t2")
    b.poll("p1", (1, 0, "y"), txn="t1").commit("p1", "t1")
    return b.poll("p9", (0, 0, "x1"), (0, 1, "x2"), (1, 0, "y"))


@dataclass(frozen=True)
class Scene:
    """A history with one anomaly: how to build it, what the checks must find, and the class whose
    example must name it."""

    build: Callable[[Builder], Builder]
    found: dict[str, int]
    kind: JepsenAnomaly


def scene(build: Callable[[Builder], Builder], found: dict[str, int], kind: str | None = None) -> Scene:
    """`kind` defaults to the one class found, or the one besides unseen (which every lost write is)."""
    return Scene(build, found, JepsenAnomaly(kind or max(found, key=lambda k: k != "unseen")))


CASES: dict[str, Scene] = {
    # version-orders :errors: p2 read offset 1 as z, the acknowledgement and p1 say b.
    "inconsistent-offsets": scene(lambda b: abc(b).poll("p1", (0, "a"), (1, "b"), (2, "c")).poll("p2", (1, "z")),
                             {"inconsistent-offsets": 1}),
    # duplicate-cases: a at offsets 0 and 3.
    "duplicate": scene(lambda b: abc(b).poll("p1", (0, "a"), (1, "b"), (2, "c"), (3, "a")), {"duplicate": 1}),
    # g1a-cases: a read from an aborted transaction.
    "G1a": scene(lambda b: b.begin("p0", "t1").send("p0", "a", 0, txn="t1").abort("p0", "t1").poll("p1", (0, "a")),
            {"G1a": 1}),
    # g1a-cases: a read from a transaction whose commit failed.
    "G1a-failed-commit": scene(lambda b: b.begin("p0", "t1").send("p0", "a", 0, txn="t1").commit("p0", "t1", "fail")
                          .poll("p1", (0, "a")), {"G1a": 1}),
    # lost-write-cases: p2 read c at 2, nobody read b at 1 (lost writes are unseen too, as in Jepsen).
    "lost-write": scene(lambda b: abc(b).poll("p1", (0, "a")).poll("p2", (2, "c")), {"lost-write": 1, "unseen": 1}),
    # must-have-committed?: t1 (info) is proven by p1's read of u, so its w below the bound is lost;
    # t2 (info) is proven by nothing, so its v, below the bound too, is owed to nobody.
    "lost-write-of-proven-info": scene(
        lambda b: b.begin("p0", "t2").send("p0", "v", 0, txn="t2").commit("p0", "t2", "info")
        .begin("p0", "t1").send("p0", "u", 2, txn="t1").send("p0", "w", 3, txn="t1").commit("p0", "t1", "info")
        .send("p0", "f", 5).poll("p1", (2, "u")).poll("p2", (5, "f")),
        {"lost-write": 1}),
    # unseen: b acknowledged above everything any poll read.
    "unseen": scene(lambda b: b.send("p0", "a", 0).send("p0", "b", 1).poll("p1", (0, "a")), {"unseen": 1}),
    # precommitted-read-cases: transaction t1 polled its own write.
    "precommitted-read-own": scene(
        lambda b: b.begin("p0", "t1").send("p0", "a", 0, txn="t1").poll("p0", (0, "a"), txn="t1")
        .commit("p0", "t1"), {"precommitted-read": 1}),
    # by time: p1's poll ended before t1 began to commit.
    "precommitted-read-early": scene(
        lambda b: b.begin("p0", "t1").send("p0", "a", 0, txn="t1").poll("p1", (0, "a")).commit("p0", "t1"),
        {"precommitted-read": 1}),
    # poll-skip+nonmonotonic-cases-per-process: p2 polls 0 then 2; p1 read 1, so it is there to see.
    "poll-skip": scene(
        lambda b: abc(b).poll("p1", (0, "a"), (1, "b"), (2, "c")).poll("p2", (0, "a")).poll("p2", (2, "c")),
        {"poll-skip": 1}),
    "int-poll-skip": scene(lambda b: abc(b).poll("p1", (0, "a"), (1, "b"), (2, "c")).poll("p2", (0, "a"), (2, "c")),
                      {"int-poll-skip": 1}),
    # p1's second poll starts again at 1, where the first left off.
    "nonmonotonic-poll": scene(lambda b: abc(b).poll("p1", (0, "a"), (1, "b")).poll("p1", (1, "b"), (2, "c")),
                          {"nonmonotonic-poll": 1}),
    "int-nonmonotonic-poll": scene(lambda b: abc(b).poll("p1", (1, "b"), (0, "a")).poll("p2", (2, "c")),
                              {"int-nonmonotonic-poll": 1}),
    # nonmonotonic-send-cases: p0 sent a before b, the log has b first.
    "nonmonotonic-send": scene(lambda b: b.send("p0", "a", 1).send("p0", "b", 0).poll("p1", (0, "b"), (1, "a")),
                          {"nonmonotonic-send": 1}),
    "int-nonmonotonic-send": scene(
        lambda b: b.begin("p0", "t1").send("p0", "a", 1, txn="t1").send("p0", "b", 0, txn="t1")
        .commit("p0", "t1").poll("p1", (0, "b"), (1, "a")), {"int-nonmonotonic-send": 1}),
    # cycles!: G0 over ww edges alone, G1c through a wr edge.
    "G0": scene(g0, {"G0": 1}),
    "G0-through-a-plain-send": scene(g0_through_a_plain_send, {"G0": 1}),
    "G1c": scene(g1c, {"G1c": 1}),
}


def check(spark: SparkSession, b: Builder, folder: Path) -> AnomalyFindings:
    return check_anomalies(load_jsonl(spark, b.write(folder)), with_cycles=True)


@pytest.fixture(scope="module")
def judged(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, AnomalyFindings]:
    """Every case's findings, by its topic: all histories in one folder, checked in one query."""
    folder = tmp_path_factory.mktemp("histories")
    for name, case in CASES.items():
        case.build(Builder(name)).write(folder)
    clean(Builder("clean")).write(folder)
    return summarize_by_topic(all_cases(load_jsonl(spark, folder), with_cycles=True))


def test_a_clean_history_has_nothing(spark: SparkSession, tmp_path: Path) -> None:
    findings = check(spark, clean(Builder()), tmp_path)
    assert findings.found == {}, findings.describe()


def test_a_clean_history_beside_anomalous_ones_has_nothing(judged: dict[str, AnomalyFindings]) -> None:
    assert "clean" not in judged, judged["clean"].describe()


@pytest.mark.parametrize("name", list(CASES))
def test_each_class_is_found_and_named(judged: dict[str, AnomalyFindings], name: str) -> None:
    case = CASES[name]
    findings = judged.get(name, AnomalyFindings({}, {}))
    assert findings.found == case.found, findings.describe()
    (example,) = findings.examples[case.kind]
    # Named: the partition (a cycle's, one of its operations') and the operations behind it, each
    # with its process and time.
    assert example.topic == name and example.partition in (0, 1), example
    assert example.ops and all(o.process.startswith(f"{name}.") and o.start_ns for o in example.ops), example


def test_the_named_operations_are_the_ones_behind_the_anomaly(judged: dict[str, AnomalyFindings]) -> None:
    """G1a names the aborted writer and the poll that read its value, with their times."""
    b = CASES["G1a"].build(Builder("G1a"))  # the same history again: the builder's clock is deterministic
    (case,) = judged["G1a"].examples[JepsenAnomaly.G1A]
    send, poll = b.ops[1], b.ops[3]
    assert [(o.role, o.process, o.start_ns, o.end_ns, o.txn, o.offset, o.value) for o in case.ops] == [
        ("send", "G1a.p0", send.start_ns, send.end_ns, "G1a.t1", 0, "a"),
        ("poll", "G1a.p1", poll.start_ns, poll.end_ns, None, 0, "a"),
    ]


def test_every_class_is_found_alike_in_place_on_the_parquet_layout(
    spark: SparkSession, judged: dict[str, AnomalyFindings], tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The anomaly checks read a history in `write_parquet`'s layout in place, partition by partition,
    and gather one from JSON lines by a cogroup: every case history, judged both ways, finds the same."""
    folder = tmp_path_factory.mktemp("histories-parquet")
    for name, case in CASES.items():
        case.build(Builder(name)).write(folder / "jsonl")
    clean(Builder("clean")).write(folder / "jsonl")
    write_parquet(load_jsonl(spark, folder / "jsonl"), folder / "parquet")
    frames = load_parquet(spark, folder / "parquet")
    assert frames.folder is not None
    in_place = summarize_by_topic(all_cases(frames, with_cycles=True))
    assert {t: f.found for t, f in in_place.items()} == {t: f.found for t, f in judged.items()}
    for topic, findings in judged.items():
        for kind, cases in findings.examples.items():
            assert [sorted(c.ops, key=str) for c in in_place[topic].examples[kind]] == [
                sorted(c.ops, key=str) for c in cases], (topic, kind)


def test_parquet_layout_round_trips_and_finds_the_same(spark: SparkSession, tmp_path: Path) -> None:
    """Written partitioned by topic and partition, read back: the same findings as from the JSON lines."""
    b = abc(Builder()).poll("p1", (0, "a")).poll("p2", (2, "c"))
    frames = load_jsonl(spark, b.write(tmp_path / "jsonl"))
    write_parquet(frames, tmp_path / "parquet")
    assert (tmp_path / "parquet" / "sends" / f"topic={T}" / "partition=0").is_dir()
    # From the JSON lines the same history finds these (CASES["lost-write"]).
    from_parquet = check_anomalies(load_parquet(spark, tmp_path / "parquet"))
    assert from_parquet.found == {"lost-write": 1, "unseen": 1}, from_parquet.describe()


def test_the_format_round_trips_and_survives_a_torn_last_line(tmp_path: Path) -> None:
    b = clean(Builder())
    b.write(tmp_path)
    assert read_folder(tmp_path) == sorted(b.ops, key=lambda op: (op.start_ns, op.process))
    path = tmp_path / "t.p1.jsonl"
    whole = path.read_text()
    path.write_text(whole + whole.splitlines()[0][:30])  # a driver killed mid-write
    assert list(read_file(path)) == [op for op in b.ops if op.process == "t.p1"]


def test_the_format_refuses_a_send_without_its_record() -> None:
    with pytest.raises(HistoryFormatError):
        Operation("p0", OpType.SEND, Outcome.OK, 1, 2)
    with pytest.raises(HistoryFormatError):
        Operation.decode(json.loads('{"process": "p0", "type": "sned", "outcome": "ok", "start_ns": 1, "end_ns": 2}'))
