"""Rules on decoded bodies: what each edits, when it matches, and how its budget is spent."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from harness.protocol.codec import decode_response, encode_response
from harness.protocol.records import encode_batch
from harness.protocol.spec import SpecSet
from harness.protocol.types import ZERO_UUID
from harness.proxy.rules import (
    CapVersion,
    CloseConnection,
    CommittedEpochReadBack,
    CurrentEpochInListOffsets,
    Delay,
    DivergedEpochEndOffset,
    FenceUnsetCurrentEpoch,
    FutureEpochEndsAtCurrent,
    HideAbortedTransactions,
    IgnoreCurrentLeaderEpoch,
    NoLeaderEpochInMetadata,
    ReplaceErrors,
    SkipBatchHoldingFetchOffset,
    StripTopicIds,
    UndefinedEpochEndOffset,
    WrongEpochEndOffsets,
)
from tests.proxy.recorded import recorded

TXN_OFFSET_COMMIT = 28


def _api_versions(specs: SpecSet) -> dict[str, object]:
    return decode_response(specs.api("ApiVersions"), 3, recorded("api-versions-v3"))[1]


def _metadata(specs: SpecSet) -> dict[str, object]:
    return decode_response(specs.api("Metadata"), 12, recorded("metadata-v12"))[1]


def _txn_response(version: int) -> dict[str, object]:
    key = {"TopicId": uuid.uuid4()} if version >= 6 else {"Name": "t"}
    partitions = [{"PartitionIndex": p, "ErrorCode": 0} for p in (0, 1)]
    return {"ThrottleTimeMs": 0, "Topics": [{**key, "Partitions": partitions}, {**key, "Partitions": partitions[:1]}]}


def test_cap_version_lowers_only_the_named_api(specs: SpecSet) -> None:
    body = _api_versions(specs)
    before = {k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in body["ApiKeys"]}
    assert before[TXN_OFFSET_COMMIT] == (0, 6)
    rule = CapVersion("TxnOffsetCommit", max_version=5)
    rule.bind(specs)
    api = specs.api("ApiVersions")
    assert rule.acts_on_response(api.key, 3) and not rule.acts_on_response(3, 12)

    assert rule.edit_response(api, 3, body)

    after = {k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in body["ApiKeys"]}
    assert after[TXN_OFFSET_COMMIT] == (0, 5)
    assert {k: v for k, v in after.items() if k != TXN_OFFSET_COMMIT} == {
        k: v for k, v in before.items() if k != TXN_OFFSET_COMMIT
    }
    assert rule.fired == 1
    assert not rule.edit_response(api, 3, body), "a second pass has nothing left to lower"


def test_cap_version_never_goes_below_the_min_version(specs: SpecSet) -> None:
    body = _api_versions(specs)
    rule = CapVersion("Produce", max_version=0)
    rule.bind(specs)
    rule.edit_response(specs.api("ApiVersions"), 3, body)
    produce = next(k for k in body["ApiKeys"] if k["ApiKey"] == 0)
    assert produce["MaxVersion"] == produce["MinVersion"]


def test_strip_topic_ids_of_named_topics_only(specs: SpecSet) -> None:
    body = _metadata(specs)
    (topic,) = body["Topics"]
    assert topic["TopicId"] != ZERO_UUID
    other = StripTopicIds(topics=frozenset({"another-topic"}))
    assert not other.edit_response(specs.api("Metadata"), 12, body) and topic["TopicId"] != ZERO_UUID
    rule = StripTopicIds(topics=frozenset({topic["Name"]}))
    assert rule.acts_on_response(3, 12) and not rule.acts_on_response(3, 9), "Metadata has topic IDs from v10"
    assert rule.edit_response(specs.api("Metadata"), 12, body)
    assert topic["TopicId"] == ZERO_UUID and rule.fired == 1


def test_strip_topic_ids_of_every_topic(specs: SpecSet) -> None:
    body = _metadata(specs)
    assert StripTopicIds().edit_response(specs.api("Metadata"), 12, body)
    assert {t["TopicId"] for t in body["Topics"]} == {ZERO_UUID}


def test_replace_errors_hits_the_first_n_matching_responses(specs: SpecSet) -> None:
    rule = ReplaceErrors("TxnOffsetCommit", error=100, count=2, versions=(6, 6))
    rule.bind(specs)
    api = specs.api("TxnOffsetCommit")
    assert rule.acts_on_response(TXN_OFFSET_COMMIT, 6)
    assert not rule.acts_on_response(TXN_OFFSET_COMMIT, 5), "outside its versions"
    assert not rule.acts_on_response(3, 6), "another API"
    edited = []
    for _ in range(3):
        body = _txn_response(6)
        changed = rule.acts_on_response(TXN_OFFSET_COMMIT, 6) and rule.edit_response(api, 6, body)
        edited.append((changed, sorted({p["ErrorCode"] for t in body["Topics"] for p in t["Partitions"]})))
    assert edited == [(True, [100]), (True, [100]), (False, [0])]
    assert rule.fired == 2 and rule.spent
    assert "2/2 used" in rule.describe() and "-> 100" in rule.describe()


def test_replace_errors_reaches_top_level_and_nested_codes(specs: SpecSet) -> None:
    body = {"ErrorCode": 0, "Groups": [{"ErrorCode": 0, "Topics": [{"Partitions": [{"ErrorCode": 0}]}]}]}
    rule = ReplaceErrors("OffsetFetch", error=16)
    rule.bind(specs)
    assert rule.edit_response(specs.api("OffsetFetch"), 9, body)
    assert body == {"ErrorCode": 16, "Groups": [{"ErrorCode": 16, "Topics": [{"Partitions": [{"ErrorCode": 16}]}]}]}


def test_delay_on_requests_or_responses(specs: SpecSet) -> None:
    on_request = Delay("Fetch", seconds=0.25, on="request", count=1)
    on_request.bind(specs)
    assert on_request.response_delay(1, 16) == 0
    action = on_request.on_request(1, 16)
    assert action is not None and action.delay == 0.25 and not action.close
    assert on_request.on_request(1, 16) is None, "its one act is spent"
    on_response = Delay("Fetch", seconds=0.5)
    assert on_response.on_request(1, 16) is None and on_response.response_delay(1, 16) == 0.5
    with pytest.raises(ValueError, match="request' or 'response"):
        Delay("Fetch", seconds=1, on="both")


def test_close_connection_acts_once_by_default(specs: SpecSet) -> None:
    rule = CloseConnection("TxnOffsetCommit")
    rule.bind(specs)
    assert rule.matches(TXN_OFFSET_COMMIT, 6) and not rule.matches(0, 9)
    first = rule.on_request(TXN_OFFSET_COMMIT, 6)
    assert first is not None and first.close
    assert rule.on_request(TXN_OFFSET_COMMIT, 6) is None


def test_unknown_api_names_fail_when_bound(specs: SpecSet) -> None:
    with pytest.raises(Exception, match="TxnOffsetComit"):
        ReplaceErrors("TxnOffsetComit", error=1).bind(specs)


# -- the replays' rules (harness/replays.toml) ---------------------------------------------------
LIST_OFFSETS, OFFSET_FETCH, OFFSET_FOR_LEADER_EPOCH, FETCH = 2, 9, 23, 1


def test_no_leader_epoch_in_metadata_blanks_every_partition_from_v7(specs: SpecSet) -> None:
    body = _metadata(specs)
    parts = [p for t in body["Topics"] for p in t["Partitions"]]
    assert parts and all(p["LeaderEpoch"] >= 0 for p in parts), "premise: the recorded answer carries epochs"
    rule = NoLeaderEpochInMetadata()
    assert rule.acts_on_response(3, 7) and not rule.acts_on_response(3, 6), "LeaderEpoch is in Metadata from v7"
    assert not rule.acts_on_response(LIST_OFFSETS, 7)
    assert rule.edit_response(specs.api("Metadata"), 12, body)
    assert {p["LeaderEpoch"] for p in parts} == {-1} and rule.fired == 1
    assert not rule.edit_response(specs.api("Metadata"), 12, body), "nothing left to blank"
    decoded = decode_response(specs.api("Metadata"), 12, _reencoded(specs, "Metadata", 12, body))[1]
    assert {p["LeaderEpoch"] for t in decoded["Topics"] for p in t["Partitions"]} == {-1}


def _reencoded(specs: SpecSet, api: str, version: int, body: dict[str, Any]) -> bytes:
    return encode_response(specs.api(api), version, {"CorrelationId": 7}, body)


def _list_offsets(answers: list[tuple[int, int, int]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(request, answer) of ListOffsets v7 for partitions 0.. of topic t: (timestamp asked, offset, epoch)."""
    request = {"ReplicaId": -1, "IsolationLevel": 0, "Topics": [{"Name": "t", "Partitions": [
        {"PartitionIndex": i, "CurrentLeaderEpoch": 3, "Timestamp": ts} for i, (ts, _, _) in enumerate(answers)]}]}
    body = {"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": [
        {"PartitionIndex": i, "ErrorCode": 0, "Timestamp": -1, "Offset": off, "LeaderEpoch": ep}
        for i, (_, off, ep) in enumerate(answers)]}]}
    return request, body


def _epochs(body: dict[str, Any]) -> list[int]:
    return [p["LeaderEpoch"] for t in body["Topics"] for p in t["Partitions"]]


def test_current_epoch_in_list_offsets_answers_the_asked_epoch_for_the_lookups_named(specs: SpecSet) -> None:
    api = specs.api("ListOffsets")
    request, body = _list_offsets([(-2, 0, 0), (-1, 20, 3), (1_700_000_000_000, 5, 1)])
    redpanda = CurrentEpochInListOffsets(lookups=("earliest", "timestamp"))
    assert redpanda.needs_request and redpanda.acts_on_response(LIST_OFFSETS, 4)
    assert not redpanda.acts_on_response(LIST_OFFSETS, 3), "no LeaderEpoch below v4"
    assert redpanda.edit_answer(api, 7, request, body)
    assert _epochs(body) == [3, 3, 3]
    _reencoded(specs, "ListOffsets", 7, body)

    request, body = _list_offsets([(-2, 0, 0), (-1, 20, 2)])
    latest_only = CurrentEpochInListOffsets(lookups=("latest",))
    assert latest_only.edit_answer(api, 7, request, body) and _epochs(body) == [0, 3]


def test_current_epoch_in_list_offsets_leaves_errors_and_missing_offsets(specs: SpecSet) -> None:
    request, body = _list_offsets([(-2, 0, 0), (1_700_000_000_000, -1, -1)])
    body["Topics"][0]["Partitions"][0]["ErrorCode"] = 74
    assert not CurrentEpochInListOffsets().edit_answer(specs.api("ListOffsets"), 7, request, body)
    assert _epochs(body) == [0, -1]


def test_current_epoch_in_list_offsets_without_an_asked_epoch_takes_metadatas(specs: SpecSet) -> None:
    metadata = _metadata(specs)
    topic = metadata["Topics"][0]
    part = topic["Partitions"][0]
    rule = CurrentEpochInListOffsets()
    assert rule.acts_on_response(3, 12)
    assert not rule.edit_answer(specs.api("Metadata"), 12, None, metadata), "Metadata is only read"
    request = {"ReplicaId": -1, "IsolationLevel": 0, "Topics": [{"Name": topic["Name"], "Partitions": [
        {"PartitionIndex": part["PartitionIndex"], "CurrentLeaderEpoch": -1, "Timestamp": -2}]}]}
    body = {"ThrottleTimeMs": 0, "Topics": [{"Name": topic["Name"], "Partitions": [
        {"PartitionIndex": part["PartitionIndex"], "ErrorCode": 0, "Timestamp": -1, "Offset": 0,
         "LeaderEpoch": part["LeaderEpoch"] + 5}]}]}
    assert rule.edit_answer(specs.api("ListOffsets"), 7, request, body)
    assert _epochs(body) == [part["LeaderEpoch"]]


def _ofle(asked: int, current: int, answer: tuple[int, int]) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {"ReplicaId": -1, "Topics": [{"Topic": "t", "Partitions": [
        {"Partition": 0, "CurrentLeaderEpoch": current, "LeaderEpoch": asked}]}]}
    body = {"ThrottleTimeMs": 0, "Topics": [{"Topic": "t", "Partitions": [
        {"ErrorCode": 0, "Partition": 0, "LeaderEpoch": answer[0], "EndOffset": answer[1]}]}]}
    return request, body


def _ofle_answer(body: dict[str, Any]) -> tuple[int, int]:
    p = body["Topics"][0]["Partitions"][0]
    return p["LeaderEpoch"], p["EndOffset"]


def test_future_epoch_ends_at_current_answers_an_unknown_epoch_with_the_current_one(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    rule = FutureEpochEndsAtCurrent()
    assert rule.needs_request and rule.acts_on_response(OFFSET_FOR_LEADER_EPOCH, 4)
    for asked, answer in ((1, (1, 10)), (3, (3, 20))):
        request, body = _ofle(asked, 3, answer)
        assert not rule.edit_answer(api, 4, request, body) and _ofle_answer(body) == answer, "known epochs as they are"
    request, body = _ofle(4, 3, (-1, -1))
    assert rule.edit_answer(api, 4, request, body)
    assert _ofle_answer(body) == (3, 20)
    _reencoded(specs, "OffsetForLeaderEpoch", 4, body)
    request, body = _ofle(-1, 3, (-1, -1))
    assert not rule.edit_answer(api, 4, request, body), "an asked epoch of -1 is UNDEFINED on any broker"


def _offset_fetch(version: int, named: bool, epoch: int) -> tuple[dict[str, Any], dict[str, Any]]:
    part = {"PartitionIndex": 0, "CommittedOffset": 5, "CommittedLeaderEpoch": epoch, "Metadata": "", "ErrorCode": 0}
    if version >= 8:
        request = {"Groups": [{"GroupId": "g", "Topics": [{"Name": "t", "PartitionIndexes": [0]}] if named else None}],
                   "RequireStable": False}
        body = {"ThrottleTimeMs": 0, "Groups": [{"GroupId": "g", "Topics": [{"Name": "t", "Partitions": [part]}],
                                                  "ErrorCode": 0}]}
        return request, body
    request = {"GroupId": "g", "Topics": [{"Name": "t", "PartitionIndexes": [0]}] if named else None,
               "RequireStable": False}
    return request, {"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": [part]}], "ErrorCode": 0}


def _committed_epoch(body: dict[str, Any]) -> int:
    topics = body["Groups"][0]["Topics"] if "Groups" in body else body["Topics"]
    return topics[0]["Partitions"][0]["CommittedLeaderEpoch"]


@pytest.mark.parametrize("version", [5, 7, 8, 9])
def test_committed_epoch_read_back_only_for_named_topics(specs: SpecSet, version: int) -> None:
    api = specs.api("OffsetFetch")
    rule = CommittedEpochReadBack(epoch=-1, named_topics_only=True)
    assert rule.needs_request and rule.acts_on_response(OFFSET_FETCH, 5) and not rule.acts_on_response(OFFSET_FETCH, 4)
    request, body = _offset_fetch(version, named=False, epoch=4)
    assert not rule.edit_answer(api, version, request, body) and _committed_epoch(body) == 4
    request, body = _offset_fetch(version, named=True, epoch=4)
    assert rule.edit_answer(api, version, request, body) and _committed_epoch(body) == -1
    _reencoded(specs, "OffsetFetch", version, body)


def test_committed_epoch_read_back_as_int_min_leaves_commits_without_an_epoch(specs: SpecSet) -> None:
    api = specs.api("OffsetFetch")
    rule = CommittedEpochReadBack(epoch=-(2**31))
    request, body = _offset_fetch(8, named=False, epoch=-1)
    assert not rule.edit_answer(api, 8, request, body) and _committed_epoch(body) == -1
    request, body = _offset_fetch(8, named=False, epoch=7)
    assert rule.edit_answer(api, 8, request, body) and _committed_epoch(body) == -(2**31)
    _reencoded(specs, "OffsetFetch", 8, body)


def _fetch(version: int, epochs: list[int], replica: int = -1) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {"ReplicaId": replica, "MaxWaitMs": 0, "MinBytes": 1, "MaxBytes": 1 << 20, "IsolationLevel": 0,
               "SessionId": 0, "SessionEpoch": -1, "Topics": [{"Topic": "t", "Partitions": [
                   {"Partition": i, "CurrentLeaderEpoch": e, "FetchOffset": 0, "LastFetchedEpoch": -1,
                    "LogStartOffset": -1, "PartitionMaxBytes": 1 << 20} for i, e in enumerate(epochs)]}],
               "ForgottenTopicsData": [], "RackId": ""}
    body = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": "t", "Partitions": [
        {"PartitionIndex": i, "ErrorCode": 0, "HighWatermark": 10, "LastStableOffset": 10, "LogStartOffset": 0,
         "AbortedTransactions": [], "PreferredReadReplica": -1, "Records": b""} for i in range(len(epochs))]}]}
    return request, body


def _errors(body: dict[str, Any], key: str) -> list[int]:
    return [p["ErrorCode"] for t in body[key] for p in t["Partitions"]]


def test_fence_unset_current_epoch_fences_only_the_partitions_asked_at_minus_one(specs: SpecSet) -> None:
    rule = FenceUnsetCurrentEpoch()
    assert rule.acts_on_response(FETCH, 9) and not rule.acts_on_response(FETCH, 8), "CurrentLeaderEpoch from v9"
    assert rule.acts_on_response(LIST_OFFSETS, 4) and not rule.acts_on_response(LIST_OFFSETS, 3)
    request, body = _fetch(12, [-1, 3])
    assert rule.edit_answer(specs.api("Fetch"), 12, request, body)
    assert _errors(body, "Responses") == [74, 0]
    assert body["Responses"][0]["Partitions"][0]["HighWatermark"] == -1
    _reencoded(specs, "Fetch", 12, body)

    request, body = _list_offsets([(-2, 0, 0), (-1, 20, 3)])
    request["Topics"][0]["Partitions"][0]["CurrentLeaderEpoch"] = -1
    assert rule.edit_answer(specs.api("ListOffsets"), 7, request, body)
    assert _errors(body, "Topics") == [74, 0] and body["Topics"][0]["Partitions"][0]["Offset"] == -1


def test_fence_unset_current_epoch_leaves_replicas_and_the_harness_probe_alone(specs: SpecSet) -> None:
    rule = FenceUnsetCurrentEpoch()
    request, body = _list_offsets([(-1, 20, 3)])
    request["ReplicaId"] = -2  # the debugging replica id of the harness's log-end reads
    request["Topics"][0]["Partitions"][0]["CurrentLeaderEpoch"] = -1
    assert not rule.edit_answer(specs.api("ListOffsets"), 7, request, body)
    request, body = _fetch(12, [-1], replica=2)
    assert not rule.edit_answer(specs.api("Fetch"), 12, request, body) and _errors(body, "Responses") == [0]


def _ofle_answers(answers: list[tuple[int, int]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(request, answer): OffsetForLeaderEpoch v4 asked at current epoch 3, one partition per (epoch, end)."""
    request = {"ReplicaId": -1, "Topics": [{"Topic": "t", "Partitions": [
        {"Partition": i, "CurrentLeaderEpoch": 3, "LeaderEpoch": e} for i, (e, _) in enumerate(answers)]}]}
    body = {"ThrottleTimeMs": 0, "Topics": [{"Topic": "t", "Partitions": [
        {"ErrorCode": 0, "Partition": i, "LeaderEpoch": e, "EndOffset": end} for i, (e, end) in enumerate(answers)]}]}
    return request, body


def _ends(body: dict[str, Any]) -> list[tuple[int, int]]:
    return [(p["LeaderEpoch"], p["EndOffset"]) for t in body["Topics"] for p in t["Partitions"]]


def test_wrong_epoch_end_offsets_of_the_current_epoch_only(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    request, body = _ofle_answers([(0, 5), (3, 20), (-1, -1)])
    assert WrongEpochEndOffsets(which="current", behind=3).edit_answer(api, 4, request, body)
    assert _ends(body) == [(0, 5), (3, 17), (-1, -1)], "past epochs and UNDEFINED as they are"


def test_wrong_epoch_end_offsets_of_past_epochs_never_below_zero(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    request, body = _ofle_answers([(0, 5), (2, 15), (3, 20)])
    assert WrongEpochEndOffsets(which="past", behind=2**31 - 1).edit_answer(api, 4, request, body)
    assert _ends(body) == [(0, 0), (2, 0), (3, 20)]
    _reencoded(specs, "OffsetForLeaderEpoch", 4, body)
    with pytest.raises(ValueError, match="current' or 'past"):
        WrongEpochEndOffsets(which="future")


def test_undefined_epoch_end_offset_blanks_every_answer_without_an_error(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    _, body = _ofle_answers([(0, 5), (3, 20)])
    body["Topics"][0]["Partitions"].append({"ErrorCode": 74, "Partition": 2, "LeaderEpoch": -1, "EndOffset": -1})
    rule = UndefinedEpochEndOffset()
    rule.bind(specs)
    assert rule.acts_on_response(api.key, 4) and not rule.acts_on_response(specs.api("Fetch").key, 17)
    assert rule.edit_response(api, 4, body) and rule.edit_response(api, 4, body), "no budget: every answer"
    assert _ends(body) == [(-1, -1), (-1, -1), (-1, -1)]
    assert body["Topics"][0]["Partitions"][2]["ErrorCode"] == 74, "an error answer stays as it is"
    assert rule.fired == 2
    _reencoded(specs, "OffsetForLeaderEpoch", 4, body)


def test_an_error_without_an_offset_for_the_first_answers_then_the_brokers(specs: SpecSet) -> None:
    """UndefinedEpochEndOffset then ReplaceErrors, both with a budget of 2 (the KIP-320 validation
    error scene): the first two OffsetsForLeaderEpoch answers carry the error and no offset, the third
    is the broker's."""
    api = specs.api("OffsetForLeaderEpoch")
    blank, error = UndefinedEpochEndOffset(count=2), ReplaceErrors("OffsetForLeaderEpoch", error=74, count=2)
    for rule in (blank, error):
        rule.bind(specs)
    seen = []
    for _ in range(3):
        _, body = _ofle_answers([(3, 30)])
        for rule in (blank, error):
            if rule.acts_on_response(api.key, 4):
                rule.edit_response(api, 4, body)
        seen.append((body["Topics"][0]["Partitions"][0]["ErrorCode"], *_ends(body)[0]))
        _reencoded(specs, "OffsetForLeaderEpoch", 4, body)
    assert seen == [(74, -1, -1), (74, -1, -1), (0, 3, 30)]


def test_diverged_epoch_end_offset_ends_the_epoch_below_the_position(specs: SpecSet) -> None:
    api = specs.api("OffsetForLeaderEpoch")
    _, body = _ofle_answers([(0, 30), (3, 2), (-1, -1)])
    rule = DivergedEpochEndOffset(end_offset=5)
    rule.bind(specs)
    assert rule.edit_response(api, 4, body)
    assert _ends(body) == [(0, 5), (3, 2), (-1, -1)], "an end already at or below 5, and UNDEFINED, as they are"
    _, untouched = _ofle_answers([(0, 3)])
    assert not rule.edit_response(api, 4, untouched) and rule.fired == 1


def test_ignore_current_leader_epoch_sends_a_consumers_fetch_on_at_minus_one(specs: SpecSet) -> None:
    rule = IgnoreCurrentLeaderEpoch()
    assert rule.acts_on_request(FETCH, 9) and not rule.acts_on_request(FETCH, 8)
    assert not rule.acts_on_response(FETCH, 12), "it edits requests only"
    request, _ = _fetch(12, [2, -1, 4])
    assert rule.edit_request(specs.api("Fetch"), 12, request)
    assert [p["CurrentLeaderEpoch"] for p in request["Topics"][0]["Partitions"]] == [-1, -1, -1]
    follower, _ = _fetch(12, [2], replica=2)
    assert not rule.edit_request(specs.api("Fetch"), 12, follower), "replication is left alone"


def test_committed_epoch_read_back_for_commits_without_an_epoch(specs: SpecSet) -> None:
    api = specs.api("OffsetFetch")
    rule = CommittedEpochReadBack(epoch=0, of="without")
    request, body = _offset_fetch(8, named=True, epoch=7)
    assert not rule.edit_answer(api, 8, request, body) and _committed_epoch(body) == 7
    request, body = _offset_fetch(8, named=True, epoch=-1)
    assert rule.edit_answer(api, 8, request, body) and _committed_epoch(body) == 0
    with pytest.raises(ValueError, match="'with' or 'without'"):
        CommittedEpochReadBack(of="maybe")


def test_current_epoch_in_list_offsets_for_answers_without_an_offset(specs: SpecSet) -> None:
    api = specs.api("ListOffsets")
    request, body = _list_offsets([(1_700_000_000_000, -1, -1), (1_600_000_000_000, 5, 1)])
    rule = CurrentEpochInListOffsets(lookups=("timestamp",), answers="none")
    assert rule.edit_answer(api, 7, request, body)
    assert _epochs(body) == [3, 1], "only the answer without an offset"
    with pytest.raises(ValueError, match="'found' or 'none'"):
        CurrentEpochInListOffsets(answers="some")


def test_hide_aborted_transactions_only_from_read_committed_fetches(specs: SpecSet) -> None:
    api = specs.api("Fetch")
    aborted = [{"ProducerId": 7, "FirstOffset": 3}, {"ProducerId": 8, "FirstOffset": 9}]
    rule = HideAbortedTransactions(keep=1)
    assert rule.acts_on_response(FETCH, 4) and not rule.acts_on_response(FETCH, 3), "AbortedTransactions from v4"
    request, body = _fetch(12, [3])
    body["Responses"][0]["Partitions"][0]["AbortedTransactions"] = list(aborted)
    assert not rule.edit_answer(api, 12, request, body), "read_uncommitted has nothing to hide"
    request["IsolationLevel"] = 1
    assert rule.edit_answer(api, 12, request, body)
    assert body["Responses"][0]["Partitions"][0]["AbortedTransactions"] == aborted[:1]
    _reencoded(specs, "Fetch", 12, body)
    assert HideAbortedTransactions().edit_answer(api, 12, request, body)
    assert body["Responses"][0]["Partitions"][0]["AbortedTransactions"] == []


def test_skip_batch_holding_fetch_offset_drops_only_a_batch_entered_mid_way(specs: SpecSet) -> None:
    first = encode_batch([b"a0", b"a1"], base_offset=0)
    second = encode_batch([b"b2", b"b3"], base_offset=2)
    api = specs.api("Fetch")
    rule = SkipBatchHoldingFetchOffset()

    def answer(fetch_offset: int) -> bytes:
        request, body = _fetch(12, [3])
        request["Topics"][0]["Partitions"][0]["FetchOffset"] = fetch_offset
        body["Responses"][0]["Partitions"][0]["Records"] = first + second
        rule.edit_answer(api, 12, request, body)
        return body["Responses"][0]["Partitions"][0]["Records"]

    assert answer(0) == first + second, "a fetch at a batch's base gets it whole"
    assert answer(2) == first + second, "the first batch ends before the offset: as the broker sent it"
    assert answer(1) == second, "a1 is lost, as on Tansu"
    assert rule.fired == 1
