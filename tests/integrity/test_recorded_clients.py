"""The recording clients (harness.clients.recorded) against librdkafka's own mock cluster (no broker to
start): every send and every poll that returned records is in the process's history file, with the
offsets and values the client reported, in the format the anomaly checker reads."""

from __future__ import annotations

from pathlib import Path

from harness.clients.recorded import recording_consumer, recording_producer
from harness.histories.history import OpType, Outcome, read_file

MOCK = {"test.mock.num.brokers": 1, "bootstrap.servers": "127.0.0.1:1"}


def test_sends_and_polls_are_written_as_they_happened(tmp_path: Path) -> None:
    # One mock cluster per client: the producer's and the consumer's would not share a log, so the
    # consumer reads nothing here; its own behaviour is the live scenes' (test_live_anomaly_scenes).
    with recording_producer({**MOCK, "linger.ms": 0}, tmp_path, "t.producer", "t") as p:
        ops = [p.send(f"v{i}") for i in range(3)]
        noted = []
        many = p.send_many(["a", "b"], lambda: noted.append("between"))
    assert noted == ["between"], "called between the two sends, once"
    sends = list(read_file(tmp_path / "t.producer.jsonl"))
    assert sends == [*ops, *many]
    assert [(op.type, op.outcome) for op in sends] == [(OpType.SEND, Outcome.OK)] * 5
    assert [(op.sent.value, op.sent.offset) for op in sends if op.sent] == [
        ("v0", 0), ("v1", 1), ("v2", 2), ("a", 3), ("b", 4)]
    assert all(a.start_ns <= a.end_ns for a in sends) and many[0].start_ns < many[1].start_ns

    with recording_consumer(MOCK, tmp_path, "t.reader", "t") as c:
        assert c.poll(0.1) == () and c.read == []
    assert list(read_file(tmp_path / "t.reader.jsonl")) == [], "a poll that returned nothing is not written"
