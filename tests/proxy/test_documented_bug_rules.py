"""The rules that replay documented broker bugs of harness/replays.toml whose answer depends on what the
partition holds (an epoch with no record, an empty log, the log start, the last stable offset) or on a
field besides the epochs: what each edits, what it leaves alone, and that the edited body still encodes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from harness.protocol.codec import decode, encode, encode_response
from harness.protocol.errors import UNKNOWN_LEADER_EPOCH
from harness.protocol.spec import SpecSet
from harness.proxy.rule_specs import parse_rule
from harness.proxy.rules import (
    FETCH,
    LIST_OFFSETS,
    OFFSET_FETCH,
    OFFSET_FOR_LEADER_EPOCH,
    CommittedMetadataDropped,
    CurrentEpochOnEmptyPartition,
    EpochBelowLogStartUndefined,
    NoOffsetAnsweredAtStableOffset,
    PastEpochAnsweredWithCurrent,
    Rule,
    StaleEpochUntilWritten,
)

EARLIEST, LATEST, A_TIME = -2, -1, 1_700_000_000_000


def _encodes(specs: SpecSet, api: str, version: int, body: dict[str, Any]) -> None:
    encode_response(specs.api(api), version, {"CorrelationId": 7}, body)


# -- OffsetsForLeaderEpoch --------------------------------------------------------------------------
def _ofle(*asked: tuple[int, int], replica: int = -1) -> dict[str, Any]:
    """A request for partition 0 of topic t, one entry per (LeaderEpoch, CurrentLeaderEpoch)."""
    return {"ReplicaId": replica, "Topics": [{"Topic": "t", "Partitions": [
        {"Partition": 0, "CurrentLeaderEpoch": current, "LeaderEpoch": epoch} for epoch, current in asked]}]}


def _ends(*answers: tuple[int, int] | tuple[int, int, int]) -> dict[str, Any]:
    """An answer for partition 0 of topic t, one entry per (LeaderEpoch, EndOffset[, ErrorCode])."""
    return {"ThrottleTimeMs": 0, "Topics": [{"Topic": "t", "Partitions": [
        {"ErrorCode": a[2] if len(a) > 2 else 0, "Partition": 0, "LeaderEpoch": a[0], "EndOffset": a[1]}
        for a in answers]}]}


def _answered(body: dict[str, Any]) -> list[tuple[int, int, int]]:
    return [(p["ErrorCode"], p["LeaderEpoch"], p["EndOffset"]) for t in body["Topics"] for p in t["Partitions"]]


def test_stale_epoch_until_written_asks_the_leader_where_the_current_epoch_starts(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    rule = StaleEpochUntilWritten()
    assert rule.acts_on_request(OFFSET_FOR_LEADER_EPOCH, 2) and not rule.acts_on_request(OFFSET_FOR_LEADER_EPOCH, 1)
    sent = _ofle((1, 3))
    assert rule.edit_request(api, 4, sent)
    assert [(p["LeaderEpoch"], p["CurrentLeaderEpoch"]) for p in sent["Topics"][0]["Partitions"]] == [
        (1, 3), (2, 3), (3, 3)], "the consumer's entry, then where epoch 2 ends and where epoch 3 ends"
    assert decode(api.request, 4, encode(api.request, 4, sent)) == sent, "the added entries encode"
    for untouched in (_ofle((1, 0)), _ofle((1, -1)), _ofle((1, 3), replica=2)):
        assert not rule.edit_request(api, 4, untouched), "epoch 0, no epoch and a broker's request as they are"


def test_stale_epoch_until_written_refuses_an_epoch_that_starts_at_the_log_end(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    rule = StaleEpochUntilWritten()
    original = _ofle((1, 3))
    # The leader at epoch 3 with no record since it took the lead: epoch 2 (a gap, answered with 1) ends
    # where 3 starts, at the log end.
    body = _ends((1, 20), (1, 20), (3, 20))
    assert rule.edit_answer(api, 4, original, body)
    assert _answered(body) == [(UNKNOWN_LEADER_EPOCH, -1, -1)], "the added entries are taken out"
    assert rule.fired == 1
    _encodes(specs, "OffsetForLeaderEpoch", 4, body)


def test_stale_epoch_until_written_serves_an_epoch_that_holds_records(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    rule = StaleEpochUntilWritten()
    body = _ends((1, 15), (1, 15), (3, 20))
    assert rule.edit_answer(api, 4, _ofle((1, 3)), body), "the added entries are taken out"
    assert _answered(body) == [(0, 1, 15)] and rule.fired == 0
    fenced = _ends((-1, -1, 74), (-1, -1, 74), (-1, -1, 74))
    assert rule.edit_answer(api, 4, _ofle((1, 3)), fenced) and _answered(fenced) == [(74, -1, -1)]
    plain = _ends((1, 15))
    assert not rule.edit_answer(api, 4, _ofle((1, 0)), plain) and _answered(plain) == [(0, 1, 15)]


def test_past_epoch_answered_with_current_names_the_current_epoch_for_known_epochs(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    rule = PastEpochAnsweredWithCurrent()
    assert rule.needs_request and rule.acts_on_response(OFFSET_FOR_LEADER_EPOCH, 4)
    body = _ends((1, 10))
    assert rule.edit_answer(api, 4, _ofle((1, 3)), body) and _answered(body) == [(0, 3, 10)]
    _encodes(specs, "OffsetForLeaderEpoch", 4, body)
    for asked, answer in (((2, 3), (1, 20)), ((3, 3), (3, 20)), ((4, 3), (-1, -1)), ((-1, 3), (-1, -1))):
        body = _ends(answer)
        assert not rule.edit_answer(api, 4, _ofle(asked), body), f"{asked}: a gap, the current, future and -1 as is"
        assert _answered(body) == [(0, *answer)]


def _list_offsets(*asked: tuple[int, int, int, int], version_epochs: bool = True, isolation: int = 0,
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(request, answer) of ListOffsets for topic t: per partition i (timestamp asked, offset answered,
    epoch answered, CurrentLeaderEpoch asked)."""
    request = {"ReplicaId": -1, "IsolationLevel": isolation, "Topics": [{"Name": "t", "Partitions": [
        {"PartitionIndex": i, "CurrentLeaderEpoch": current, "Timestamp": ts}
        for i, (ts, _, _, current) in enumerate(asked)]}]}
    body = {"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": [
        {"PartitionIndex": i, "ErrorCode": 0, "Timestamp": -1, "Offset": off,
         **({"LeaderEpoch": epoch} if version_epochs else {})}
        for i, (_, off, epoch, _) in enumerate(asked)]}]}
    return request, body


def test_epoch_below_log_start_is_answered_undefined_once_the_log_start_epoch_is_known(specs: SpecSet) -> None:
    ofle, lo = specs.api("OffsetForLeaderEpoch"), specs.api("ListOffsets")
    rule = EpochBelowLogStartUndefined()
    assert rule.acts_on_response(LIST_OFFSETS, 4) and not rule.acts_on_response(LIST_OFFSETS, 3)
    body = _ends((0, 7))
    assert not rule.edit_answer(ofle, 4, _ofle((0, 3)), body), "no EARLIEST answer seen: the broker's answer"
    request, earliest = _list_offsets((EARLIEST, 7, 1, 3))
    assert not rule.edit_answer(lo, 7, request, earliest), "an EARLIEST answer is only read"
    assert rule.edit_answer(ofle, 4, _ofle((0, 3)), body) and _answered(body) == [(0, 3, -1)]
    _encodes(specs, "OffsetForLeaderEpoch", 4, body)
    for asked, answer in (((1, 3), (1, 20)), ((3, 3), (3, 30)), ((-1, 3), (-1, -1))):
        body = _ends(answer)
        assert not rule.edit_answer(ofle, 4, _ofle(asked), body), f"{asked}: at or above the log start's epoch"


# -- ListOffsets ------------------------------------------------------------------------------------
def _epochs_offsets(body: dict[str, Any]) -> list[tuple[int, int | None]]:
    return [(p["Offset"], p.get("LeaderEpoch")) for t in body["Topics"] for p in t["Partitions"]]


def _learn_bounds(rule: Rule, specs: SpecSet, start: int, end: int) -> None:
    """Partition 0's log start and end, as a client's EARLIEST and then LATEST were answered."""
    for asked in ((EARLIEST, start, 2, 3), (LATEST, end, 3, 3)):
        request, body = _list_offsets(asked)
        assert not rule.edit_answer(specs.api("ListOffsets"), 7, request, body), "EARLIEST and LATEST as they are"


def test_current_epoch_on_empty_partition_names_the_current_epoch_where_the_log_is_empty(specs: SpecSet) -> None:
    api = specs.api("ListOffsets")
    rule = CurrentEpochOnEmptyPartition()
    request, body = _list_offsets((A_TIME, -1, -1, 3))
    assert not rule.edit_answer(api, 7, request, body), "the log's bounds not seen: the broker's answer"
    _learn_bounds(rule, specs, 0, 0)
    assert rule.edit_answer(api, 7, request, body) and _epochs_offsets(body) == [(-1, 3)]
    _encodes(specs, "ListOffsets", 7, body)
    request, v3 = _list_offsets((A_TIME, -1, -1, -1), version_epochs=False)
    assert not rule.edit_answer(api, 3, request, v3), "no LeaderEpoch below v4"


def test_current_epoch_on_empty_partition_leaves_a_partition_with_records(specs: SpecSet) -> None:
    api = specs.api("ListOffsets")
    rule = CurrentEpochOnEmptyPartition()
    _learn_bounds(rule, specs, 0, 5)
    request, body = _list_offsets((A_TIME, -1, -1, 3))
    assert not rule.edit_answer(api, 7, request, body), "a time after the last record of a log that holds some"
    _learn_bounds(rule, specs, 5, 5)
    assert rule.edit_answer(api, 7, request, body), "every record deleted: empty again"
    written = {"ThrottleTimeMs": 0, "Responses": [{"Name": "t", "PartitionResponses": [
        {"Index": 0, "ErrorCode": 0, "BaseOffset": 5, "LogAppendTimeMs": -1, "LogStartOffset": 5}]}]}
    assert not rule.edit_answer(specs.api("Produce"), 9, None, written), "a write is only read"
    request, body = _list_offsets((A_TIME, -1, -1, 3))
    assert not rule.edit_answer(api, 7, request, body), "a write since: the bounds are not known"


def test_current_epoch_on_empty_partition_learns_the_bounds_from_a_fetch_by_topic_id(specs: SpecSet) -> None:
    tid = uuid.uuid4()
    metadata = {"ThrottleTimeMs": 0, "Brokers": [], "ClusterId": None, "ControllerId": 1, "Topics": [
        {"ErrorCode": 0, "Name": "t", "TopicId": tid, "IsInternal": False, "Partitions": [
            {"ErrorCode": 0, "PartitionIndex": 0, "LeaderId": 1, "LeaderEpoch": 3, "ReplicaNodes": [1],
             "IsrNodes": [1], "OfflineReplicas": []}], "TopicAuthorizedOperations": -2147483648}]}
    rule = CurrentEpochOnEmptyPartition()
    assert rule.acts_on_response(FETCH, 13)
    assert not rule.edit_answer(specs.api("Metadata"), 12, None, metadata)
    fetched = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"TopicId": tid, "Partitions": [
        {"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 4, "LastStableOffset": 4, "LogStartOffset": 4,
         "AbortedTransactions": None, "PreferredReadReplica": -1, "Records": b""}]}]}
    assert not rule.edit_answer(specs.api("Fetch"), 13, {}, fetched), "a Fetch answer is only read"
    request, body = _list_offsets((A_TIME, -1, -1, -1))
    assert rule.edit_answer(specs.api("ListOffsets"), 7, request, body)
    assert _epochs_offsets(body) == [(-1, 3)], "the epoch Metadata named, where the request named none"


def test_no_offset_answered_at_stable_offset_for_a_time_after_the_last_record(specs: SpecSet) -> None:
    api = specs.api("ListOffsets")
    rule = NoOffsetAnsweredAtStableOffset()
    request, body = _list_offsets((A_TIME, -1, -1, 3), (A_TIME - 5, 2, 1, 3))
    assert not rule.edit_answer(api, 7, request, body), "no bounds seen: the broker's answer"
    _learn_bounds(rule, specs, 0, 15)
    assert rule.edit_answer(api, 7, request, body)
    assert _epochs_offsets(body) == [(15, 3), (2, 1)], "only the lookup that found nothing"
    assert body["Topics"][0]["Partitions"][0]["Timestamp"] == -1
    _encodes(specs, "ListOffsets", 7, body)
    request, v1 = _list_offsets((A_TIME, -1, -1, -1), version_epochs=False)
    assert rule.edit_answer(api, 1, request, v1) and _epochs_offsets(v1) == [(15, None)]
    _encodes(specs, "ListOffsets", 1, v1)


def test_no_offset_answered_at_stable_offset_prefers_the_last_stable_offset(specs: SpecSet) -> None:
    api = specs.api("ListOffsets")
    rule = NoOffsetAnsweredAtStableOffset()
    _learn_bounds(rule, specs, 0, 15)
    request, committed = _list_offsets((LATEST, 9, 3, 3), isolation=1)
    assert not rule.edit_answer(api, 7, request, committed)
    request, body = _list_offsets((A_TIME, -1, -1, 3))
    assert rule.edit_answer(api, 7, request, body) and _epochs_offsets(body) == [(9, 3)]


# -- OffsetFetch ------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [7, 8])
def test_committed_metadata_dropped_reads_every_commit_back_empty(specs: SpecSet, version: int) -> None:
    parts = [{"PartitionIndex": 0, "CommittedOffset": 5, "CommittedLeaderEpoch": 2, "Metadata": "kcts", "ErrorCode": 0},
             {"PartitionIndex": 1, "CommittedOffset": -1, "CommittedLeaderEpoch": -1, "Metadata": "", "ErrorCode": 0}]
    topics = [{"Name": "t", "Partitions": parts}]
    body = ({"ThrottleTimeMs": 0, "Groups": [{"GroupId": "g", "Topics": topics, "ErrorCode": 0}]} if version >= 8
            else {"ThrottleTimeMs": 0, "Topics": topics, "ErrorCode": 0})
    rule = CommittedMetadataDropped()
    assert rule.acts_on_response(OFFSET_FETCH, version)
    assert rule.edit_response(specs.api("OffsetFetch"), version, body)
    assert [p["Metadata"] for p in parts] == ["", ""]
    assert not rule.edit_response(specs.api("OffsetFetch"), version, body), "nothing left to drop"
    _encodes(specs, "OffsetFetch", version, body)


@pytest.mark.parametrize("text", [
    "StaleEpochUntilWritten", "PastEpochAnsweredWithCurrent", "EpochBelowLogStartUndefined",
    "CurrentEpochOnEmptyPartition", "NoOffsetAnsweredAtStableOffset", "CommittedMetadataDropped",
])
def test_the_rules_are_named_on_the_command_line(text: str) -> None:
    rule = parse_rule(text).make()
    assert isinstance(rule, Rule) and rule.count is None, "a replay's rule acts for the whole run"
