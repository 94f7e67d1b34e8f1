"""The record faults (harness.proxy.record_faults) on decoded Fetch bodies: which records each serves,
at which offsets and with which values, and that the answer still encodes (no broker)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.protocol.records import encode_batch, parse_batches
from harness.protocol.spec import SpecSet
from harness.proxy.record_faults import (
    MISDIRECTED,
    PRODUCE,
    DropRecords,
    MisdirectProduce,
    OutOfRangeFrom,
    RepeatBatch,
    ReplaceValue,
    ServeUncommitted,
)
from harness.proxy.rules import FETCH
from tests.proxy.test_rules import _fetch, _reencoded

LOG = b"".join(encode_batch([f"v{i}".encode()], base_offset=i) for i in range(6))
TWO = encode_batch([b"a6", b"a7"], base_offset=6)  # one batch of two records


def _answer(fetch_offset: int = 0, records: bytes = LOG + TWO) -> tuple[dict[str, Any], dict[str, Any]]:
    request, body = _fetch(12, [3])
    request["Topics"][0]["Partitions"][0]["FetchOffset"] = fetch_offset
    body["Responses"][0]["Partitions"][0]["Records"] = records
    return request, body


def _served(body: dict[str, Any]) -> list[tuple[int | None, bytes | None]]:
    records = body["Responses"][0]["Partitions"][0]["Records"]
    return [(r.offset, r.value) for b in parse_batches(records) for r in b.records]


def test_drop_records_serves_the_log_without_those_offsets_and_says_where(specs: SpecSet) -> None:
    rule = DropRecords(offsets=frozenset({2, 7}))
    assert rule.acts_on_response(FETCH, 4) and not rule.acts_on_response(FETCH, 3)
    request, body = _answer(1)
    assert rule.edit_answer(specs.api("Fetch"), 12, request, body)
    # A batch left empty is left out; one of two records keeps its offset and CRC-checked encoding.
    assert _served(body) == [(0, b"v0"), (1, b"v1"), (3, b"v3"), (4, b"v4"), (5, b"v5"), (6, b"a6")]
    assert rule.answered == [(1, (2, 7))] and rule.left_out_at(1) and not rule.left_out_at(0)
    _reencoded(specs, "Fetch", 12, body)
    request, body = _answer(0, LOG[:0])
    assert not rule.edit_answer(specs.api("Fetch"), 12, request, body), "nothing to drop in an empty answer"
    assert rule.fired == 1


def test_replace_value_serves_one_offset_with_another_value(specs: SpecSet) -> None:
    rule = ReplaceValue(offset=4, value=b"phantom")
    request, body = _answer()
    assert rule.edit_answer(specs.api("Fetch"), 12, request, body)
    served = _served(body)
    assert served[4] == (4, b"phantom") and [v for _, v in served].count(b"phantom") == 1
    assert served[:4] == [(i, f"v{i}".encode()) for i in range(4)]
    request, body = _answer(records=TWO)
    assert not rule.edit_answer(specs.api("Fetch"), 12, request, body), "offset 4 is not in this answer"


def test_replace_value_refuses_a_compressed_batch(specs: SpecSet) -> None:
    request, body = _answer(records=encode_batch([b"v0"], compression="gzip"))
    with pytest.raises(ValueError, match="uncompressed"):
        ReplaceValue(offset=0, value=b"x").edit_answer(specs.api("Fetch"), 12, request, body)


def test_out_of_range_from_refuses_only_fetches_at_or_beyond_its_offset_once(specs: SpecSet) -> None:
    rule = OutOfRangeFrom(offset=5)
    for at, refused in ((4, False), (5, True), (6, False)):  # the budget (count 1) is spent at 5
        request, body = _answer(at)
        assert rule.edit_answer(specs.api("Fetch"), 12, request, body) is refused, at
        part = body["Responses"][0]["Partitions"][0]
        assert (part["ErrorCode"], part["Records"] == b"") == ((1, True) if refused else (0, False)), at
    assert rule.spent and not rule.acts_on_response(FETCH, 12)


def test_serve_uncommitted_reads_committed_requests_as_uncommitted_and_lifts_the_lso(specs: SpecSet) -> None:
    rule = ServeUncommitted()
    request, body = _answer()
    assert not rule.edit_request(specs.api("Fetch"), 12, request), "read_uncommitted is left as it is"
    request["IsolationLevel"] = 1
    assert rule.edit_request(specs.api("Fetch"), 12, request) and request["IsolationLevel"] == 0
    body["Responses"][0]["Partitions"][0]["LastStableOffset"] = 3
    assert rule.edit_response(specs.api("Fetch"), 12, body)
    assert body["Responses"][0]["Partitions"][0]["LastStableOffset"] == 10  # the high watermark
    assert not rule.edit_response(specs.api("Fetch"), 12, body), "already at the high watermark"


def test_repeat_batch_serves_the_batch_of_an_offset_twice_in_a_row(specs: SpecSet) -> None:
    rule = RepeatBatch(offset=7)
    request, body = _answer()
    assert rule.edit_answer(specs.api("Fetch"), 12, request, body)
    served = _served(body)
    assert served[6:] == [(6, b"a6"), (7, b"a7"), (6, b"a6"), (7, b"a7")], "the whole batch of 7, again"
    assert served[:6] == [(i, f"v{i}".encode()) for i in range(6)]
    _reencoded(specs, "Fetch", 12, body)
    request, body = _answer(records=LOG)
    assert not RepeatBatch(offset=7).edit_answer(specs.api("Fetch"), 12, request, body), "7 is not in this answer"


def test_misdirect_produce_sends_the_first_request_elsewhere_and_answers_for_the_partition_asked(
    specs: SpecSet,
) -> None:
    rule = MisdirectProduce()
    api = specs.api("Produce")
    request = {"TransactionalId": None, "Acks": -1, "TimeoutMs": 1000, "TopicData": [
        {"Name": "t", "PartitionData": [{"Index": 0, "Records": LOG[:0]}]}]}
    assert rule.acts_on_request(PRODUCE, 11) and rule.edit_request(api, 11, request)
    assert request["TopicData"][0]["PartitionData"][0]["Index"] == MISDIRECTED
    assert not rule.acts_on_request(PRODUCE, 11), "one request (count 1)"
    body = {"Responses": [{"Name": "t", "PartitionResponses": [
        {"Index": MISDIRECTED, "ErrorCode": 3, "BaseOffset": -1, "LogAppendTimeMs": -1, "LogStartOffset": -1,
         "RecordErrors": [], "ErrorMessage": None}]}], "ThrottleTimeMs": 0}
    assert rule.acts_on_response(PRODUCE, 11) and rule.edit_response(api, 11, body)
    assert body["Responses"][0]["PartitionResponses"][0]["Index"] == 0
    assert not rule.edit_response(api, 11, body), "an answer for a real partition is left as it is"
    _reencoded(specs, "Produce", 11, body)
