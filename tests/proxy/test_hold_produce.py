"""HoldProduce (harness.proxy.record_faults) and the proxy's hold of requests (harness.proxy.connection):
on constructed Produce requests, then end to end through the proxy in front of a stand-in broker
that appends Produce batches and checks idempotent sequences as a 4.4.0 broker does (no Kafka)."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from typing import Any

import pytest

from harness.protocol.codec import decode, decode_response, encode_request
from harness.protocol.records import encode_batch as batch_of
from harness.protocol.records import parse_batches
from harness.protocol.spec import SpecSet
from harness.proxy import Proxy
from harness.proxy.frames import header_length
from harness.proxy.record_faults import PRODUCE, HoldProduce, produced_batches
from harness.proxy.rules import HeldRequest
from tests.proxy.fake_broker import FakeBroker

VERSION = 11  # what librdkafka 2.x asks a 4.4.0 broker
PID = 4000
OUT_OF_ORDER_SEQUENCE_NUMBER = 45


def _body(value: bytes, sequence: int, pid: int = PID, partition: int = 0) -> dict[str, Any]:
    records = batch_of([value], producer_id=pid, producer_epoch=0, base_sequence=sequence,
                       transactional=pid >= 0)
    return {"TransactionalId": "txn" if pid >= 0 else None, "Acks": -1, "TimeoutMs": 1000,
            "TopicData": [{"Name": "t", "PartitionData": [{"Index": partition, "Records": records}]}]}


def _held(specs: SpecSet, correlation: int, body: dict[str, Any]) -> HeldRequest:
    api = specs.api("Produce")
    frame = encode_request(api, VERSION, {"CorrelationId": correlation, "ClientId": "c"}, body)
    return HeldRequest(VERSION, correlation, header_length(frame, api.request_header_version(VERSION) >= 2), frame)


def _batch(specs: SpecSet, held: HeldRequest) -> tuple[bytes | None, int, int]:
    body = decode(specs.api("Produce").request, held.version, held.frame, offset=held.body_start)
    (b,) = parse_batches(body["TopicData"][0]["PartitionData"][0]["Records"])  # CRC checked
    return b.records[0].value, b.producer_id, b.base_sequence


def test_hold_produce_holds_the_first_until_the_next_then_sends_both_in_order(specs: SpecSet) -> None:
    rule = HoldProduce()
    api = specs.api("Produce")
    a, b = _held(specs, 1, _body(b"a", -1, pid=-1)), _held(specs, 2, _body(b"b", -1, pid=-1))
    assert rule.holds(PRODUCE, VERSION) and not rule.holds(1, 12), "Produce only"
    assert rule.release(api, [a]) is None, "the first is held"
    assert rule.release(api, [a, b]) == [a, b], "in order, as sent"
    assert rule.spent and not rule.holds(PRODUCE, VERSION), "once (count 1)"


def test_hold_produce_swap_sends_the_second_first_with_the_sequences_exchanged(specs: SpecSet) -> None:
    rule = HoldProduce(swap=True)
    api = specs.api("Produce")
    a, b = _held(specs, 1, _body(b"a", 3)), _held(specs, 2, _body(b"b", 4))
    assert [x.base_sequence for x in produced_batches(api, a) + produced_batches(api, b)] == [3, 4]
    assert rule.release(api, [a]) is None
    out = rule.release(api, [a, b])
    assert out is not None
    # b goes on first, taking a's sequence; a follows it; each keeps its correlation id and value.
    assert [(h.correlation_id, *_batch(specs, h)) for h in out] == [(2, b"b", PID, 3), (1, b"a", PID, 4)]
    assert rule.renumbered and "sequences exchanged" in rule.describe()


def test_hold_produce_swap_leaves_sequences_alone_where_they_do_not_follow_on(specs: SpecSet) -> None:
    """Batches that are not idempotent, not one producer's, or not consecutive: swapped, bytes unchanged."""
    api = specs.api("Produce")
    for first, second in ((_body(b"a", -1, pid=-1), _body(b"b", -1, pid=-1)),
                          (_body(b"a", 3), _body(b"b", 4, pid=PID + 1)),
                          (_body(b"a", 3), _body(b"b", 4, partition=1)),
                          (_body(b"a", 3), _body(b"b", 7))):
        rule = HoldProduce(swap=True)
        a, b = _held(specs, 1, first), _held(specs, 2, second)
        rule.release(api, [a])
        assert rule.release(api, [a, b]) == [b, a] and not rule.renumbered


class AppendingBroker(FakeBroker):
    """Answers Produce as a broker does: each batch appended to its partition's log, with an
    idempotent producer's batch refused OUT_OF_ORDER_SEQUENCE_NUMBER unless its base sequence
    follows the last one appended. Answers in the order requests came, as Kafka does."""

    def __init__(self, specs: SpecSet) -> None:
        super().__init__(specs, 1)
        self.log: list[bytes | None] = []
        self.next_sequence: dict[int, int] = {}

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key != PRODUCE:
            return super().answer(key, version, body)
        t = body["TopicData"][0]
        p = t["PartitionData"][0]
        (b,) = parse_batches(p["Records"])
        error, base = 0, -1
        expected = self.next_sequence.get(b.producer_id, 0)
        if b.producer_id >= 0 and b.base_sequence != expected:
            error = OUT_OF_ORDER_SEQUENCE_NUMBER
        else:
            base = len(self.log)
            self.log += [r.value for r in b.records]
            self.next_sequence[b.producer_id] = b.base_sequence + len(b.records)
        return {"Responses": [{"Name": t["Name"], "PartitionResponses": [
            {"Index": p["Index"], "ErrorCode": error, "BaseOffset": base, "LogAppendTimeMs": -1, "LogStartOffset": 0,
             "RecordErrors": [], "ErrorMessage": None}]}], "ThrottleTimeMs": 0}


@pytest.fixture
def broker(specs: SpecSet) -> Iterator[AppendingBroker]:
    with AppendingBroker(specs) as b:
        b.peers = {1: b.address}
        yield b


def _pipelined(specs: SpecSet, address: tuple[str, int], bodies: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """Send every Produce at once on one connection, then read the answers in the order they come:
    (correlation id, error, base offset) of each."""
    api = specs.api("Produce")
    with socket.create_connection(address, timeout=5) as sock:
        for n, body in enumerate(bodies, 1):
            frame = encode_request(api, VERSION, {"CorrelationId": n, "ClientId": "c"}, body)
            sock.sendall(struct.pack(">i", len(frame)) + frame)
        out = []
        for _ in bodies:
            (size,) = struct.unpack(">i", _read(sock, 4))
            header, body = decode_response(api, VERSION, _read(sock, size))
            (p,) = body["Responses"][0]["PartitionResponses"]
            out.append((header["CorrelationId"], p["ErrorCode"], p["BaseOffset"]))
        return out


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        assert chunk, "the proxy hung up"
        buf += chunk
    return buf


def test_through_the_proxy_the_second_is_appended_first_and_the_answers_come_in_the_order_asked(
    specs: SpecSet, broker: AppendingBroker,
) -> None:
    """What int-nonmonotonic-send needs of a real broker: a and b pipelined by one idempotent
    producer, b appended first with a's sequence, a after it; the client reads a's answer first,
    at the higher offset, then b's."""
    with Proxy([broker.address], specs) as proxy:
        rule = HoldProduce(swap=True)
        proxy.add(rule)
        answers = _pipelined(specs, proxy.address_of(broker.address),
                             [_body(b"a", 0), _body(b"b", 1), _body(b"v2", 2)])
        proxy.check()
    # The rule holds the first Produce after it is in force (a scene adds it just before a).
    assert broker.log == [b"b", b"a", b"v2"]
    assert answers == [(1, 0, 1), (2, 0, 0), (3, 0, 2)]
    assert rule.fired == 1 and rule.renumbered


def test_without_the_exchange_of_sequences_the_broker_refuses_the_swapped_request(
    specs: SpecSet, broker: AppendingBroker,
) -> None:
    """The control of the stand-in: as a broker checking sequences, it refuses b first with a's
    sequence missing; so the renumbering is what makes the swap an append, not a refusal."""
    answers = _pipelined(specs, broker.address, [_body(b"b", 1)])
    assert answers == [(1, OUT_OF_ORDER_SEQUENCE_NUMBER, -1)] and broker.log == []


def test_hold_in_order_lets_the_first_answer_out_only_after_the_second_went_on(
    specs: SpecSet, broker: AppendingBroker,
) -> None:
    """nonmonotonic-send's synchronisation: with the first held until the second arrives, both are
    appended in order and answered in order."""
    with Proxy([broker.address], specs) as proxy:
        proxy.add(HoldProduce())
        answers = _pipelined(specs, proxy.address_of(broker.address), [_body(b"a", -1, pid=-1),
                                                                        _body(b"b", -1, pid=-1)])
        proxy.check()
    assert broker.log == [b"a", b"b"] and answers == [(1, 0, 0), (2, 0, 1)]
