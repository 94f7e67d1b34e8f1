"""The rules that replay documented field bugs of Kafka-compatible brokers (harness/replays.toml), on
decoded answers: what each edits, what it leaves alone, and that the edited body still encodes. The
rule families themselves (harness/proxy/rules/): every rule class is named once and resolvable."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from harness.protocol.codec import decode_response, encode_response
from harness.protocol.records import control_batch, encode_batch, parse_batches
from harness.protocol.spec import SpecSet
from harness.proxy import record_faults, rules
from harness.proxy.batches import batch_spans
from harness.proxy.rule_specs import RULE_MODULES, parse_rule, rule_class
from harness.proxy.rules import (
    FETCH,
    LIST_OFFSETS,
    OFFSET_FOR_LEADER_EPOCH,
    EpochAnsweredAtLogEnd,
    NoEpochInListOffsets,
    ReadPastStableOffset,
    Rule,
    StampBatchEpoch,
)
from harness.proxy.rules.transactions import aborted_in
from tests.proxy.recorded import recorded

ABORTED_PID, OPEN_PID = 7, 8


def _encodes(specs: SpecSet, api: str, version: int, body: dict[str, Any]) -> None:
    encode_response(specs.api(api), version, {"CorrelationId": 7}, body)


# -- the families --------------------------------------------------------------------------------
def _rule_classes(module: Any) -> dict[str, type[Rule]]:
    return {name: cls for name, cls in vars(module).items()
            if inspect.isclass(cls) and issubclass(cls, Rule) and cls.__module__ == module.__name__
            and not name.startswith("_")}


def test_every_rule_class_has_one_module_and_is_resolved_by_name() -> None:
    owners: dict[str, list[str]] = {}
    for module in RULE_MODULES:
        for name in _rule_classes(module):
            owners.setdefault(name, []).append(module.__name__)
    twice = {name: mods for name, mods in owners.items() if len(mods) > 1}
    assert not twice, f"rule classes named in two modules (a catalogue name would be ambiguous): {twice}"
    for name, (module,) in owners.items():
        assert rule_class(name) is not None and rule_class(name).__module__ == module
    assert rule_class("ServeUncommitted") is record_faults.ServeUncommitted


def test_every_family_rule_is_named_by_the_package() -> None:
    """`from harness.proxy.rules import X` keeps working for every rule, wherever its family module is."""
    for family in rules.FAMILIES:
        for name, cls in _rule_classes(family).items():
            assert getattr(rules, name) is cls and name in rules.__all__, f"{family.__name__}.{name}"


# -- read_committed past the last stable offset (Redpanda #3036, KoP #1856) -----------------------
def _log() -> tuple[bytes, int, int]:
    """The read_committed wire scene's log: 2 plain records, transaction A (3 records) aborted, B (3
    records) open, 2 plain records; (records, last stable offset, high watermark)."""
    txn = {"transactional": True, "producer_epoch": 0, "base_sequence": 0}
    batches = [
        encode_batch([b"p0", b"p1"], base_offset=0),
        encode_batch([b"a0", b"a1", b"a2"], base_offset=2, producer_id=ABORTED_PID, **txn),
        control_batch("ABORT", producer_id=ABORTED_PID, producer_epoch=0, base_offset=5),
        encode_batch([b"b0", b"b1", b"b2"], base_offset=6, producer_id=OPEN_PID, **txn),
        encode_batch([b"q0", b"q1"], base_offset=9),
    ]
    return b"".join(batches), 6, 11


def _fetch(isolation: int, records: bytes, stable: int, high: int, replica: int = -1,
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {"ReplicaId": replica, "MaxWaitMs": 0, "MinBytes": 1, "MaxBytes": 1 << 20, "IsolationLevel": isolation,
               "SessionId": 0, "SessionEpoch": -1, "Topics": [{"Topic": "t", "Partitions": [
                   {"Partition": 0, "CurrentLeaderEpoch": 3, "FetchOffset": 0, "LastFetchedEpoch": -1,
                    "LogStartOffset": -1, "PartitionMaxBytes": 1 << 20}]}],
               "ForgottenTopicsData": [], "RackId": ""}
    body = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": "t", "Partitions": [
        {"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": high, "LastStableOffset": stable, "LogStartOffset": 0,
         "AbortedTransactions": None, "PreferredReadReplica": -1, "Records": records}]}]}
    return request, body


def _served(body: dict[str, Any]) -> tuple[list[tuple[int, int]], Any, int]:
    p = body["Responses"][0]["Partitions"][0]
    return [(b.base_offset, b.last_offset) for b in parse_batches(p["Records"])], p["AbortedTransactions"], \
        p["LastStableOffset"]


def test_aborted_in_lists_each_aborted_transaction_from_its_first_batch() -> None:
    records, _, _ = _log()
    spans = batch_spans(records)
    assert aborted_in(records, spans) == [{"ProducerId": ABORTED_PID, "FirstOffset": 2}]
    assert aborted_in(records, spans[:2]) == [], "a transaction whose marker is not served is not listed"


@pytest.mark.parametrize("isolation", [0, 1])
def test_read_past_stable_offset_asks_read_committed_fetches_as_read_uncommitted(isolation: int) -> None:
    rule = ReadPastStableOffset()
    assert rule.acts_on_request(FETCH, 4) and not rule.acts_on_request(FETCH, 3), "IsolationLevel from v4"
    request, _ = _fetch(isolation, b"", 6, 11)
    assert rule.edit_request(None, 12, request) == (isolation == 1)  # type: ignore[arg-type]
    assert request["IsolationLevel"] == 0
    replica, _ = _fetch(1, b"", 6, 11, replica=2)
    assert not rule.edit_request(None, 12, replica), "the brokers' replication is left alone"  # type: ignore[arg-type]


def test_read_past_stable_offset_serves_the_batch_holding_it(specs: SpecSet) -> None:
    """Redpanda #3036: the read's inclusive bound one past the stable offset serves the open
    transaction's first batch; the stable offset and the aborted transaction are answered right."""
    records, stable, high = _log()
    request, body = _fetch(1, records, stable, high)  # the broker answered at read_uncommitted: every batch
    rule = ReadPastStableOffset(upto="batch-at-stable-offset")
    assert rule.edit_answer(specs.api("Fetch"), 12, request, body) and rule.fired == 1
    assert _served(body) == ([(0, 1), (2, 4), (5, 5), (6, 8)], [{"ProducerId": ABORTED_PID, "FirstOffset": 2}], 6)
    _encodes(specs, "Fetch", 12, body)


def test_read_past_stable_offset_to_the_high_watermark(specs: SpecSet) -> None:
    records, stable, high = _log()
    request, body = _fetch(1, records, stable, high)
    assert ReadPastStableOffset(upto="high-watermark").edit_answer(specs.api("Fetch"), 12, request, body)
    assert _served(body) == ([(0, 1), (2, 4), (5, 5), (6, 8), (9, 10)],
                             [{"ProducerId": ABORTED_PID, "FirstOffset": 2}], 6)
    with pytest.raises(ValueError, match="batch-at-stable-offset, high-watermark"):
        ReadPastStableOffset(upto="log-end")


def test_read_past_stable_offset_leaves_read_uncommitted_answers_and_errors(specs: SpecSet) -> None:
    records, stable, high = _log()
    rule = ReadPastStableOffset()
    request, body = _fetch(0, records, stable, high)
    assert not rule.edit_answer(specs.api("Fetch"), 12, request, body)
    assert _served(body)[1] is None and len(_served(body)[0]) == 5
    request, body = _fetch(1, b"", -1, -1)
    body["Responses"][0]["Partitions"][0]["ErrorCode"] = 6
    rule.edit_answer(specs.api("Fetch"), 12, request, body)
    assert body["Responses"][0]["Partitions"][0]["AbortedTransactions"] is None, "a refused partition as it was"


# -- ListOffsets without an epoch (Inkless #250) ------------------------------------------------------
def test_no_epoch_in_list_offsets_blanks_every_found_offset(specs: SpecSet) -> None:
    body = {"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": [
        {"PartitionIndex": 0, "ErrorCode": 0, "Timestamp": -1, "Offset": 0, "LeaderEpoch": 0},
        {"PartitionIndex": 1, "ErrorCode": 0, "Timestamp": -1, "Offset": 20, "LeaderEpoch": 3},
        {"PartitionIndex": 2, "ErrorCode": 74, "Timestamp": -1, "Offset": -1, "LeaderEpoch": -1}]}]}
    rule = NoEpochInListOffsets()
    assert rule.acts_on_response(LIST_OFFSETS, 4) and not rule.acts_on_response(LIST_OFFSETS, 3)
    assert rule.edit_response(specs.api("ListOffsets"), 7, body)
    assert [p["LeaderEpoch"] for p in body["Topics"][0]["Partitions"]] == [-1, -1, -1]
    assert not rule.edit_response(specs.api("ListOffsets"), 7, body), "nothing left to blank"
    _encodes(specs, "ListOffsets", 7, body)


# -- every epoch answered at the log end (Inkless #613) ------------------------------------------
def _ofle(asked: int, current: int, replica: int = -1) -> dict[str, Any]:
    return {"ReplicaId": replica, "Topics": [{"Topic": "t", "Partitions": [
        {"Partition": 0, "CurrentLeaderEpoch": current, "LeaderEpoch": asked}]}]}


def _answer(epoch: int, end: int, error: int = 0) -> dict[str, Any]:
    return {"ThrottleTimeMs": 0, "Topics": [{"Topic": "t", "Partitions": [
        {"ErrorCode": error, "Partition": 0, "LeaderEpoch": epoch, "EndOffset": end}]}]}


def _end(body: dict[str, Any]) -> tuple[int, int]:
    p = body["Topics"][0]["Partitions"][0]
    return p["LeaderEpoch"], p["EndOffset"]


@pytest.mark.parametrize("asked", [-1, 0, 2, 4, 99])
def test_epoch_answered_at_log_end_for_every_epoch_asked(specs: SpecSet, asked: int) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    rule = EpochAnsweredAtLogEnd()
    assert rule.acts_on_request(OFFSET_FOR_LEADER_EPOCH, 4) and rule.acts_on_response(OFFSET_FOR_LEADER_EPOCH, 4)
    original, sent = _ofle(asked, 3), _ofle(asked, 3)
    assert rule.edit_request(api, 4, sent) == (asked != 3)
    assert sent["Topics"][0]["Partitions"][0]["LeaderEpoch"] == 3, "the broker is asked about the current epoch"
    body = _answer(3, 20)  # its answer: the current epoch ends at the log end
    assert rule.edit_answer(api, 4, original, body) == (asked != 3)
    assert _end(body) == (asked, 20)
    _encodes(specs, "OffsetForLeaderEpoch", 4, body)


def test_epoch_answered_at_log_end_needs_a_known_current_epoch(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    rule = EpochAnsweredAtLogEnd()
    sent = _ofle(1, -1)
    assert not rule.edit_request(api, 4, sent), "no current epoch known: asked as it is"
    body = _answer(1, 10)
    assert not rule.edit_answer(api, 4, _ofle(1, -1), body) and _end(body) == (1, 10)
    fenced = _answer(-1, -1, error=74)
    assert not rule.edit_answer(api, 4, _ofle(1, 2), fenced), "an error answer as it is"
    assert not rule.edit_request(api, 4, _ofle(1, 3, replica=2)), "a broker's request as it is"


def test_epoch_answered_at_log_end_takes_the_current_epoch_from_metadata(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    metadata = decode_response(specs.api("Metadata"), 12, recorded("metadata-v12"))[1]
    topic = metadata["Topics"][0]
    part = topic["Partitions"][0]
    rule = EpochAnsweredAtLogEnd()
    assert not rule.edit_answer(specs.api("Metadata"), 12, None, metadata), "Metadata is only read"
    sent = {"ReplicaId": -1, "Topics": [{"Topic": topic["Name"], "Partitions": [
        {"Partition": part["PartitionIndex"], "CurrentLeaderEpoch": -1, "LeaderEpoch": -1}]}]}
    assert rule.edit_request(api, 4, sent)
    assert sent["Topics"][0]["Partitions"][0]["LeaderEpoch"] == part["LeaderEpoch"]


# -- batches stamped epoch 0 (Inkless #631) ---------------------------------------------------------
def test_stamp_batch_epoch_from_the_switch_on(specs: SpecSet) -> None:
    records = b"".join(encode_batch([b"x"] * 2, base_offset=2 * i, partition_leader_epoch=e)
                       for i, e in enumerate((0, 1, 2, 3)))
    request, body = _fetch(0, records, 8, 8)
    rule = StampBatchEpoch(epoch=0, from_epoch=2)
    assert rule.acts_on_response(FETCH, 4) and rule.needs_request
    assert rule.edit_answer(specs.api("Fetch"), 12, request, body)
    served = parse_batches(body["Responses"][0]["Partitions"][0]["Records"])
    assert [b.partition_leader_epoch for b in served] == [0, 1, 0, 0]
    assert all(b.crc_valid for b in served), "the stamp is outside the CRC"
    assert not rule.edit_answer(specs.api("Fetch"), 12, request, body), "nothing left to stamp"
    replica, answer = _fetch(0, records, 8, 8, replica=1)
    assert not rule.edit_answer(specs.api("Fetch"), 12, replica, answer), "the brokers' replication as it is"
    _encodes(specs, "Fetch", 12, body)


@pytest.mark.parametrize("text", [
    "ReadPastStableOffset(upto='high-watermark')", "NoEpochInListOffsets", "EpochAnsweredAtLogEnd",
    "StampBatchEpoch(epoch=0, from_epoch=2)", "ServeUncommitted",
])
def test_the_field_bug_rules_are_named_on_the_command_line(text: str) -> None:
    assert isinstance(parse_rule(text).make(), Rule)
