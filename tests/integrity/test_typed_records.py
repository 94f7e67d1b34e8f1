"""The typed records of the integrity scenes and the history format, without Spark or a cluster.

- The Spark schemas of client histories are derived from the history dataclasses
  (harness.histories.history): they are the agreed DDL, and they follow a field added to the format.
- A scene's timeline events (harness.histories.observations.TimelineEvent) keep the EventLog's
  line in recordings and reports; a report's meta (harness.integrity.model.ReportMeta and the
  scenes' subclasses) writes the JSON the untyped dicts wrote.
- The checker's sample rows (AnomalyRow) are its anomaly columns, and the report keeps them as objects.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import pytest

from harness.histories import json_codec
from harness.histories.history import Operation, OpType, Outcome, Polled, Sent
from harness.histories.observations import TimelineEvent
from harness.integrity import anomaly_frames, report
from harness.integrity.anomaly_partition import _schema
from harness.integrity.checker import ANOMALY_COLUMNS
from harness.integrity.model import Anomaly, AnomalyRow, Findings, ReportMeta, TopicTotals
from harness.process.events import EventLog
from harness.scenarios.idempotent_writes import IdempotentMeta
from harness.scenarios.integrity import CopyMeta, ElectionMeta, FaultsMeta

# The DDL the history format was read with before the schemas were derived (and Parquet files written
# with): a derivation that drifts from it changes what Spark reads.
OP_DDL = ("process string, type string, outcome string, start_ns bigint, end_ns bigint, txn string, "
          "sent struct<topic: string, partition: int, value: string, offset: bigint, error: string>, "
          "polled array<struct<topic: string, partition: int, offset: bigint, value: string, leader_epoch: int>>")
SEND_DDL = ("process string, start_ns bigint, end_ns bigint, txn string, outcome string, topic string, partition int, "
            "value string, offset bigint, error string, status string, commit_ns bigint, writer string")
READ_DDL = ("process string, start_ns bigint, end_ns bigint, txn string, outcome string, pos int, topic string, "
            "partition int, offset bigint, value string, leader_epoch int, reader string")


def test_the_spark_schemas_are_the_history_format_s() -> None:
    assert anomaly_frames.OP_SCHEMA == OP_DDL
    assert anomaly_frames.SEND_SCHEMA == SEND_DDL
    assert anomaly_frames.READ_SCHEMA == READ_DDL
    assert ", ".join(anomaly_frames.SEND_COLUMNS) == ", ".join(f.split()[0] for f in SEND_DDL.split(", "))
    assert ", ".join(anomaly_frames.READ_COLUMNS) == ", ".join(f.split()[0] for f in READ_DDL.split(", "))


def test_an_operation_line_has_the_columns_spark_reads() -> None:
    """What the writer puts on a line (Operation.encode) is what OP_SCHEMA names, nested structs too."""
    send = Operation("p", OpType.SEND, Outcome.OK, 1, 2, "x", Sent("t", 0, "v", 5))
    poll = Operation("p", OpType.POLL, Outcome.OK, 3, 4, polled=(Polled("t", 0, 5, "v", 1),))
    cols = dict(anomaly_frames.columns(Operation))
    assert list(send.encode()) == list(cols)
    assert cols["sent"] == "struct<" + ", ".join(f"{k}: {t}" for k, t in anomaly_frames.columns(Sent)) + ">"
    assert list(send.encode()["sent"]) == [k for k, _ in anomaly_frames.columns(Sent)]
    assert list(poll.encode()["polled"][0]) == [k for k, _ in anomaly_frames.columns(Polled)]


def test_a_field_added_to_the_format_is_a_column() -> None:
    @dataclass(frozen=True)
    class Wider:
        topic: str
        partition: int
        offset: int | None
        leader_epoch: int | None
        outcome: Outcome
        records: tuple[Polled, ...] = ()

    assert anomaly_frames.ddl(anomaly_frames.columns(Wider)) == (
        "topic string, partition int, offset bigint, leader_epoch int, outcome string, records array<struct<topic: "
        "string, partition: int, offset: bigint, value: string, leader_epoch: int>>")


def test_a_field_spark_cannot_hold_is_refused() -> None:
    @dataclass(frozen=True)
    class Odd:
        ratio: float

    with pytest.raises(TypeError, match="ratio: no Spark type"):
        anomaly_frames.columns(Odd)


def test_the_parquet_reader_types_every_column() -> None:
    """anomaly_partition reads the derived DDL back into Arrow types."""
    assert _schema(anomaly_frames.SEND_COLUMNS).names == list(anomaly_frames.SEND_COLUMNS)
    assert _schema(anomaly_frames.READ_COLUMNS).names == list(anomaly_frames.READ_COLUMNS)


def _log() -> EventLog:
    log = EventLog()
    log.add("nemesis", "crash-injected", broker=2, topic="out", partition=0, epoch=3, progress=0.15)
    log.add_reported("generator", {"event": "done", "records": 2000})
    log.add("observer", "views", broker1="leader=2@3 isr=[2, 3]", from_=[1, 3])
    return log


def test_a_timeline_event_is_the_event_log_s_line() -> None:
    lines = _log().events
    events = [TimelineEvent.of(e) for e in lines]
    assert [e.flat() for e in events] == lines
    crash, done, _ = events
    assert (crash.who, crash.what, crash.detail["broker"]) == ("nemesis", "crash-injected", 2)
    assert (done.who, done.what, done.detail) == ("generator", "done", {"records": 2000})
    assert crash.t <= done.t
    assert json_codec.loads(list[TimelineEvent], json_codec.dumps(events)) == events


def test_a_report_meta_writes_what_the_dicts_wrote() -> None:
    lines = _log().events
    faults = [TimelineEvent.of(e) for e in lines[:1]]
    assert FaultsMeta("clean faults", faults).as_json() == {"scenario": "clean faults", "faults": lines[:1]}
    assert ElectionMeta("unclean election", "E(1->2)").as_json() == {"scenario": "unclean election",
                                                                      "election": "E(1->2)"}
    assert CopyMeta("one record copied", 4, 9).as_json() == {"scenario": "one record copied", "copied_offset": 4,
                                                              "copy_offset": 9}
    assert ReportMeta("fault-free pipeline").as_json() == {"scenario": "fault-free pipeline"}
    meta = IdempotentMeta("idempotent producer, fault-free", [], "one broker", 10, 2, ["bump"],
                          [TimelineEvent.of(e) for e in lines], []).as_json()
    assert list(meta) == ["scenario", "leader_moves", "no_leader_moves", "acknowledged", "unacknowledged",
                          "epoch_bumps", "producer_events", "log_end_listed_short"]
    assert meta["producer_events"] == lines
    # The summary's line of a meta field prints as the dict's did.
    assert f"{meta['producer_events']}" == f"{lines}"


def test_a_sample_row_is_an_anomaly_row() -> None:
    assert ANOMALY_COLUMNS == ("kind", "topic", "partition", "offset", "id", "key", "seq", "detail")
    row = AnomalyRow(Anomaly.DUPLICATE, "out", 0, 7, 3, "k1", 2, "2 copies, offsets 7 .. 9")
    findings = Findings({Anomaly.DUPLICATE: 1}, {Anomaly.DUPLICATE: [row]}, [TopicTotals("out", "output", 10, 9, 9)])
    assert findings.evidence(Anomaly.DUPLICATE) == (
        "1 duplicate, first 1:\n  out-0@7 id=3 key=k1 seq=2: 2 copies, offsets 7 .. 9")
    written = json.loads(json.dumps(report.to_json(findings, {"scenario": "s"}), default=str))
    assert written["samples"] == {"duplicate": [{"kind": "duplicate", "topic": "out", "partition": 0, "offset": 7,
                                                 "id": 3, "key": "k1", "seq": 2,
                                                 "detail": "2 copies, offsets 7 .. 9"}]}
    assert [f.name for f in dataclasses.fields(AnomalyRow)] == list(ANOMALY_COLUMNS)
