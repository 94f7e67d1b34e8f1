"""The rules of allowed behaviour (harness/proxy/allowed_rules.py) on decoded bodies: each fires where it
should, once per key, and only there; what it keeps from the broker never reaches it; and every answer
it writes encodes at the version it was asked."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from harness.protocol.codec import decode_response, encode_response
from harness.protocol.records import encode_batch
from harness.protocol.spec import SpecSet
from harness.protocol.types import ZERO_UUID
from harness.proxy.allowed_rules import (
    CoordinatorErrorOnce,
    FetchEmptyNowAndThen,
    FetchFirstBatchOnly,
    NewTopicMissing,
    NotLeaderOnce,
    Throttle,
    UnknownTopicIdFirst,
)
from harness.proxy.rules import Rule

TXN_OFFSET_COMMIT, OFFSET_COMMIT, FETCH = 28, 8, 1


def _reencoded(specs: SpecSet, api: str, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """`body` encoded at `version` and decoded again: what the client reads."""
    spec = specs.api(api)
    return decode_response(spec, version, encode_response(spec, version, {"CorrelationId": 1}, body))[1]


def _bound(specs: SpecSet, rule: Rule) -> Rule:
    rule.bind(specs)
    return rule


def _exchange(specs: SpecSet, rule: Rule, api: str, version: int, request: dict[str, Any],
              broker: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """One exchange as the proxy runs it: the rule edits what the broker sees (a copy: the recording
    keeps the original), `broker(seen)` answers that, and the rule edits the answer with the original
    request. (what the broker saw, what the client reads)."""
    spec = specs.api(api)
    seen = copy.deepcopy(request)
    if rule.acts_on_request(spec.key, version):
        rule.edit_request(spec, version, seen)
    answer = broker(seen)
    if rule.acts_on_response(spec.key, version):
        rule.edit_answer(spec, version, request, answer)
    return seen, _reencoded(specs, api, version, answer)


# -- UnknownTopicIdFirst ----------------------------------------------------------------------------


def _txn_commit(*topics: uuid.UUID, group: str = "g") -> dict[str, Any]:
    return {"TransactionalId": "tx", "GroupId": group, "ProducerId": 7, "ProducerEpoch": 0, "GenerationId": -1,
            "MemberId": "", "GroupInstanceId": None, "Topics": [{"TopicId": t, "Partitions": [
                {"PartitionIndex": p, "CommittedOffset": 5, "CommittedLeaderEpoch": 0, "CommittedMetadata": ""}
                for p in (0, 1)]} for t in topics]}


def _coordinator(known: set[uuid.UUID]) -> Any:
    """A group coordinator answering TxnOffsetCommit v6: UNKNOWN_TOPIC_ID for an ID it cannot resolve."""
    def answer(seen: dict[str, Any]) -> dict[str, Any]:
        return {"ThrottleTimeMs": 0, "Topics": [{"TopicId": t["TopicId"], "Partitions": [
            {"PartitionIndex": p["PartitionIndex"], "ErrorCode": 0 if t["TopicId"] in known else 100}
            for p in t["Partitions"]]} for t in seen["Topics"]]}
    return answer


def _errors_by_topic(body: dict[str, Any], key: str = "TopicId") -> dict[Any, list[int]]:
    return {t[key]: [p["ErrorCode"] for p in t["Partitions"]] for t in body["Topics"]}


def test_unknown_topic_id_first_hides_each_new_topic_once_from_the_broker(specs: SpecSet) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    broker = _coordinator({a, b})
    rule = _bound(specs, UnknownTopicIdFirst())

    seen, answer = _exchange(specs, rule, "TxnOffsetCommit", 6, _txn_commit(a), broker)
    assert a not in {t["TopicId"] for t in seen["Topics"]}, "the broker never sees the hidden topic's ID"
    assert _errors_by_topic(answer) == {a: [100, 100]}, "every partition of it: UNKNOWN_TOPIC_ID, under its ID"

    seen, answer = _exchange(specs, rule, "TxnOffsetCommit", 6, _txn_commit(a, b), broker)
    assert seen["Topics"][0]["TopicId"] == a, "the retry goes through"
    assert _errors_by_topic(answer) == {a: [0, 0], b: [100, 100]}, "only the topic seen first here"

    _, answer = _exchange(specs, rule, "TxnOffsetCommit", 6, _txn_commit(a, b), broker)
    assert _errors_by_topic(answer) == {a: [0, 0], b: [0, 0]}
    assert rule.fired == 2 and not rule._stand_ins, "each stand-in answered and forgotten"


def test_unknown_topic_id_first_keeps_the_brokers_own_precedence(specs: SpecSet) -> None:
    """An authorization refusal of the whole request comes before topic resolution (KafkaApis): the
    hidden topic gets the broker's refusal too, since the broker is asked about it, under a stand-in."""
    a = uuid.uuid4()

    def refusing(seen: dict[str, Any]) -> dict[str, Any]:
        return {"ThrottleTimeMs": 0, "Topics": [{"TopicId": t["TopicId"], "Partitions": [
            {"PartitionIndex": p["PartitionIndex"], "ErrorCode": 30} for p in t["Partitions"]]}
            for t in seen["Topics"]]}

    _, answer = _exchange(specs, _bound(specs, UnknownTopicIdFirst()), "TxnOffsetCommit", 6, _txn_commit(a), refusing)
    assert _errors_by_topic(answer) == {a: [30, 30]}


def test_unknown_topic_id_first_acts_on_txn_offset_commit_v6_only(specs: SpecSet) -> None:
    rule = _bound(specs, UnknownTopicIdFirst())
    assert rule.acts_on_request(TXN_OFFSET_COMMIT, 6) and rule.acts_on_response(TXN_OFFSET_COMMIT, 6)
    assert not rule.acts_on_request(TXN_OFFSET_COMMIT, 5), "v5 names topics: nothing to resolve"
    assert not rule.acts_on_request(OFFSET_COMMIT, 10) and not rule.acts_on_response(FETCH, 13)
    budget = _bound(specs, UnknownTopicIdFirst(count=1))
    a, b = uuid.uuid4(), uuid.uuid4()
    _, answer = _exchange(specs, budget, "TxnOffsetCommit", 6, _txn_commit(a, b), _coordinator({a, b}))
    assert _errors_by_topic(answer) == {a: [100, 100], b: [0, 0]}, "a budget of one: one topic hidden"


# -- CoordinatorErrorOnce ---------------------------------------------------------------------------
def _offset_commit(group: str, version: int) -> dict[str, Any]:
    key = {"TopicId": uuid.UUID(int=5)} if version >= 10 else {"Name": "t"}
    return {"GroupId": group, "GenerationIdOrMemberEpoch": -1, "MemberId": "", "GroupInstanceId": None,
            "Topics": [{**key, "Partitions": [{"PartitionIndex": p, "CommittedOffset": 3, "CommittedLeaderEpoch": 0,
                                               "CommittedMetadata": ""} for p in (0, 2)]}]}


def _commits(seen: dict[str, Any]) -> dict[str, Any]:
    """A coordinator committing whatever it is asked: error 0 for each partition it saw."""
    return {"ThrottleTimeMs": 0, "Topics": [{k: v for k, v in t.items() if k in ("Name", "TopicId")} | {
        "Partitions": [{"PartitionIndex": p["PartitionIndex"], "ErrorCode": 0} for p in t["Partitions"]]}
        for t in seen["Topics"]]}


@pytest.mark.parametrize(("version", "key"), [(9, "Name"), (10, "TopicId")])
def test_coordinator_error_once_keeps_the_first_commit_of_each_group_from_the_broker(
    specs: SpecSet, version: int, key: str
) -> None:
    rule = _bound(specs, CoordinatorErrorOnce(api="OffsetCommit", error=14))
    seen, answer = _exchange(specs, rule, "OffsetCommit", version, _offset_commit("g1", version), _commits)
    assert seen["Topics"] == [], "the broker commits nothing"
    assert list(_errors_by_topic(answer, key).values()) == [[14, 14]], "each partition asked: the error"

    seen, answer = _exchange(specs, rule, "OffsetCommit", version, _offset_commit("g1", version), _commits)
    assert seen["Topics"] and list(_errors_by_topic(answer, key).values()) == [[0, 0]], "the retry commits"
    seen, answer = _exchange(specs, rule, "OffsetCommit", version, _offset_commit("g2", version), _commits)
    assert seen["Topics"] == [] and list(_errors_by_topic(answer, key).values()) == [[14, 14]], "another group"
    assert rule.fired == 2


def test_coordinator_error_once_on_txn_offset_commit_v6(specs: SpecSet) -> None:
    rule = _bound(specs, CoordinatorErrorOnce(api="TxnOffsetCommit", error=16))
    a = uuid.uuid4()
    seen, answer = _exchange(specs, rule, "TxnOffsetCommit", 6, _txn_commit(a), _commits)
    assert seen["Topics"] == [] and _errors_by_topic(answer) == {a: [16, 16]}
    _, answer = _exchange(specs, rule, "TxnOffsetCommit", 6, _txn_commit(a), _commits)
    assert _errors_by_topic(answer) == {a: [0, 0]}


def _txn_coordinator(seen: dict[str, Any]) -> dict[str, Any]:
    """Apache Kafka's TransactionCoordinator: a blank transactional id is INVALID_REQUEST, before any state."""
    if seen["TransactionalId"] == "":
        return {"ThrottleTimeMs": 0, "ErrorCode": 42, "ProducerId": -1, "ProducerEpoch": -1}
    return {"ThrottleTimeMs": 0, "ErrorCode": 0, "ProducerId": 7, "ProducerEpoch": 1}


def test_coordinator_error_once_blanks_the_first_end_txn_of_each_transaction(specs: SpecSet) -> None:
    rule = _bound(specs, CoordinatorErrorOnce(api="EndTxn", error=15))
    end = {"TransactionalId": "tx", "ProducerId": 7, "ProducerEpoch": 0, "Committed": True}
    seen, answer = _exchange(specs, rule, "EndTxn", 5, end, _txn_coordinator)
    assert seen["TransactionalId"] == "", "the coordinator refuses it before reading any state"
    assert (answer["ErrorCode"], answer["ProducerId"], answer["ProducerEpoch"]) == (15, -1, -1)
    seen, answer = _exchange(specs, rule, "EndTxn", 5, end, _txn_coordinator)
    assert seen["TransactionalId"] == "tx" and answer["ErrorCode"] == 0


def test_coordinator_error_once_rewrites_only_the_refusal_of_the_blank_request(specs: SpecSet) -> None:
    """A second producer of the same transactional id, answered while the blank request is in flight,
    keeps its own answer: only a refusal of the blank id is the rule's."""
    rule = _bound(specs, CoordinatorErrorOnce(api="AddOffsetsToTxn", error=16))
    api = specs.api("AddOffsetsToTxn")
    request = {"TransactionalId": "tx", "ProducerId": 7, "ProducerEpoch": 0, "GroupId": "g"}
    assert rule.edit_request(api, 4, copy.deepcopy(request))
    other = {"ThrottleTimeMs": 0, "ErrorCode": 0}
    assert not rule.edit_answer(api, 4, request, other) and other["ErrorCode"] == 0
    refused = {"ThrottleTimeMs": 0, "ErrorCode": 53}  # "" is not authorized where ACLs are in force
    assert rule.edit_answer(api, 4, request, refused) and refused["ErrorCode"] == 16
    again = {"ThrottleTimeMs": 0, "ErrorCode": 42}
    assert not rule.edit_answer(api, 4, request, again), "one blank request, one rewritten answer"


def test_coordinator_error_once_leaves_an_idempotent_producers_init_alone(specs: SpecSet) -> None:
    rule = _bound(specs, CoordinatorErrorOnce(api="InitProducerId", error=16))
    init = {"TransactionalId": None, "TransactionTimeoutMs": 60000, "ProducerId": -1, "ProducerEpoch": -1}
    seen, answer = _exchange(specs, rule, "InitProducerId", 5, init, _txn_coordinator)
    assert seen["TransactionalId"] is None and answer["ErrorCode"] == 0 and rule.fired == 0
    seen, answer = _exchange(specs, rule, "InitProducerId", 5, {**init, "TransactionalId": "tx"}, _txn_coordinator)
    assert seen["TransactionalId"] == "" and answer["ErrorCode"] == 16


def test_coordinator_error_once_on_offset_fetch_per_group(specs: SpecSet) -> None:
    api = specs.api("OffsetFetch")
    rule = _bound(specs, CoordinatorErrorOnce(api="OffsetFetch", error=14))
    assert not rule.acts_on_request(api.key, 9), "a read: nothing kept from the broker"

    def groups(*names: str) -> dict[str, Any]:
        return {"ThrottleTimeMs": 0, "Groups": [{"GroupId": n, "ErrorCode": 0, "Topics": [{"Name": "t", "Partitions": [
            {"PartitionIndex": 0, "CommittedOffset": 3, "CommittedLeaderEpoch": 0, "Metadata": "", "ErrorCode": 0}]}]}
            for n in names]}
    body = groups("g1", "g2")
    assert rule.edit_answer(api, 9, {}, body)
    assert [(g["ErrorCode"], g["Topics"]) for g in _reencoded(specs, "OffsetFetch", 9, body)["Groups"]] == [
        (14, []), (14, [])]
    body = groups("g1", "g3")
    assert rule.edit_answer(api, 9, {}, body) and [g["ErrorCode"] for g in body["Groups"]] == [0, 14]

    old = {"ThrottleTimeMs": 0, "ErrorCode": 0, "Topics": [{"Name": "t", "Partitions": [
        {"PartitionIndex": 0, "CommittedOffset": 3, "CommittedLeaderEpoch": 0, "Metadata": "", "ErrorCode": 0}]}]}
    assert rule.edit_answer(api, 7, {"GroupId": "g4"}, old)
    assert _reencoded(specs, "OffsetFetch", 7, old)["ErrorCode"] == 14 and old["Topics"] == []
    again = {"ThrottleTimeMs": 0, "ErrorCode": 0, "Topics": []}
    assert not rule.edit_answer(api, 7, {"GroupId": "g4"}, again)


def test_coordinator_error_once_on_find_coordinator_per_key(specs: SpecSet) -> None:
    api = specs.api("FindCoordinator")
    rule = _bound(specs, CoordinatorErrorOnce(api="FindCoordinator", error=15))

    def found(*keys: str) -> dict[str, Any]:
        return {"ThrottleTimeMs": 0, "Coordinators": [
            {"Key": k, "NodeId": 1, "Host": "127.0.0.1", "Port": 9092, "ErrorCode": 0, "ErrorMessage": None}
            for k in keys]}
    body = found("g1", "g2")
    assert rule.edit_answer(api, 6, {"KeyType": 0, "CoordinatorKeys": ["g1", "g2"]}, body)
    assert [(c["ErrorCode"], c["NodeId"], c["Port"]) for c in _reencoded(specs, "FindCoordinator", 6, body)[
        "Coordinators"]] == [(15, -1, -1), (15, -1, -1)]
    body = found("g1")
    assert not rule.edit_answer(api, 6, {"KeyType": 0, "CoordinatorKeys": ["g1"]}, body)
    body = found("g1")
    assert rule.edit_answer(api, 6, {"KeyType": 1, "CoordinatorKeys": ["g1"]}, body), "a transaction of that name"
    v3 = {"ThrottleTimeMs": 0, "ErrorCode": 0, "ErrorMessage": None, "NodeId": 1, "Host": "h", "Port": 1}
    assert rule.edit_answer(api, 3, {"Key": "g9", "KeyType": 0}, v3)
    assert (v3["ErrorCode"], v3["NodeId"]) == (15, -1)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"api": "Fetch", "error": 16}, "api must be one of"),
    ({"api": None, "error": 16}, "api must be one of"),
    ({"api": "OffsetCommit", "error": 6}, "answers only"),
    ({"api": "FindCoordinator", "error": 16}, "answers only"),
])
def test_coordinator_error_once_refuses_what_the_api_does_not_answer(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CoordinatorErrorOnce(**kwargs)


# -- NotLeaderOnce ----------------------------------------------------------------------------------
def _fetch(replica: int = -1, records: bytes = b"", partitions: int = 2) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {"ReplicaId": replica, "MaxWaitMs": 300, "MinBytes": 1, "MaxBytes": 1 << 20, "IsolationLevel": 0,
               "SessionId": 0, "SessionEpoch": -1, "Topics": [{"Topic": "t", "Partitions": [
                   {"Partition": i, "CurrentLeaderEpoch": 0, "FetchOffset": 0, "LastFetchedEpoch": -1,
                    "LogStartOffset": -1, "PartitionMaxBytes": 1 << 20} for i in range(partitions)]}],
               "ForgottenTopicsData": [], "RackId": ""}
    body = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": "t", "Partitions": [
        {"PartitionIndex": i, "ErrorCode": 0, "HighWatermark": 10, "LastStableOffset": 10, "LogStartOffset": 0,
         "AbortedTransactions": [], "PreferredReadReplica": -1, "Records": records} for i in range(partitions)]}]}
    return request, body


def _fetched(body: dict[str, Any]) -> list[tuple[int, int, bytes]]:
    return [(p["ErrorCode"], p["HighWatermark"], p["Records"]) for t in body["Responses"] for p in t["Partitions"]]


def test_not_leader_once_refuses_each_partition_once(specs: SpecSet) -> None:
    api = specs.api("Fetch")
    rule = _bound(specs, NotLeaderOnce(api="Fetch"))
    batch = encode_batch([b"v"], base_offset=0)
    request, body = _fetch(records=batch)
    assert rule.edit_answer(api, 12, request, body)
    assert _fetched(_reencoded(specs, "Fetch", 12, body)) == [(6, -1, b""), (6, -1, b"")]
    request, body = _fetch(records=batch, partitions=3)
    assert rule.edit_answer(api, 12, request, body)
    assert _fetched(body) == [(0, 10, batch), (0, 10, batch), (6, -1, b"")], "only the partition not seen before"
    request, body = _fetch(replica=2, records=batch, partitions=4)
    assert not rule.edit_answer(api, 12, request, body), "a replica's own fetch"
    assert rule.fired == 3


def test_not_leader_once_skips_partitions_already_in_error(specs: SpecSet) -> None:
    api = specs.api("Fetch")
    rule = _bound(specs, NotLeaderOnce(api="Fetch"))
    request, body = _fetch(partitions=1)
    body["Responses"][0]["Partitions"][0]["ErrorCode"] = 74
    assert not rule.edit_answer(api, 12, request, body) and rule.fired == 0
    request, body = _fetch(partitions=1)
    assert rule.edit_answer(api, 12, request, body), "the first answer it could give the error to"


def test_not_leader_once_on_list_offsets_and_offset_for_leader_epoch(specs: SpecSet) -> None:
    lo = _bound(specs, NotLeaderOnce(api="ListOffsets", error=5))
    body = {"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": [
        {"PartitionIndex": 0, "ErrorCode": 0, "Timestamp": -1, "Offset": 10, "LeaderEpoch": 2}]}]}
    assert lo.edit_answer(specs.api("ListOffsets"), 7, {"ReplicaId": -1}, body)
    assert _reencoded(specs, "ListOffsets", 7, body)["Topics"][0]["Partitions"][0] == {
        "PartitionIndex": 0, "ErrorCode": 5, "Timestamp": -1, "Offset": -1, "LeaderEpoch": -1}
    ofle = _bound(specs, NotLeaderOnce(api="OffsetForLeaderEpoch"))
    body = {"ThrottleTimeMs": 0, "Topics": [{"Topic": "t", "Partitions": [
        {"ErrorCode": 0, "Partition": 0, "LeaderEpoch": 2, "EndOffset": 10}]}]}
    assert ofle.edit_answer(specs.api("OffsetForLeaderEpoch"), 4, {"ReplicaId": -1}, body)
    assert body["Topics"][0]["Partitions"][0] == {"ErrorCode": 6, "Partition": 0, "LeaderEpoch": -1, "EndOffset": -1}
    assert not ofle.edit_answer(specs.api("OffsetForLeaderEpoch"), 4, {"ReplicaId": 3}, body), "a replica's"


def test_not_leader_once_gives_fetch_only_not_leader_or_follower() -> None:
    with pytest.raises(ValueError, match="Fetch is staged with"):
        NotLeaderOnce(api="Fetch", error=5)
    with pytest.raises(ValueError, match="api must be one of"):
        NotLeaderOnce(api="Produce")


# -- Throttle ---------------------------------------------------------------------------------------
def test_throttle_sets_the_throttle_time_of_every_nth_answer(specs: SpecSet) -> None:
    api = specs.api("Metadata")
    rule = _bound(specs, Throttle(api="Metadata", ms=150, every=2))
    assert rule.acts_on_response(api.key, 12) and not rule.acts_on_response(FETCH, 17)
    seen = []
    for _ in range(4):
        body = {"ThrottleTimeMs": 0, "Brokers": [], "ClusterId": None, "ControllerId": 1, "Topics": []}
        rule.edit_response(api, 12, body)
        seen.append(_reencoded(specs, "Metadata", 12, body)["ThrottleTimeMs"])
    assert seen == [0, 150, 0, 150] and rule.fired == 2
    longer = {"ThrottleTimeMs": 900}
    assert not rule.edit_response(api, 12, longer) and longer["ThrottleTimeMs"] == 900, "the broker's longer one"
    assert not rule.edit_response(api, 0, {"Topics": []}), "a version without the field"
    with pytest.raises(ValueError, match="ms > 0"):
        Throttle(api="Fetch", ms=0)


# -- short Fetch answers ----------------------------------------------------------------------------
def test_fetch_first_batch_only_keeps_the_first_whole_batch(specs: SpecSet) -> None:
    api = specs.api("Fetch")
    rule = _bound(specs, FetchFirstBatchOnly())
    first, second = encode_batch([b"a", b"b"], base_offset=0), encode_batch([b"c"], base_offset=2)
    request, body = _fetch(records=first + second)
    assert rule.edit_answer(api, 12, request, body)
    assert _fetched(_reencoded(specs, "Fetch", 12, body)) == [(0, 10, first), (0, 10, first)], "HighWatermark kept"
    request, body = _fetch(records=first)
    assert not rule.edit_answer(api, 12, request, body), "one batch: nothing to cut"
    request, body = _fetch(records=first + second[:20])
    assert rule.edit_answer(api, 12, request, body) and _fetched(body)[0][2] == first, "a partial batch after it"
    request, body = _fetch(replica=1, records=first + second)
    assert not rule.edit_answer(api, 12, request, body), "a replica's own fetch"


def test_fetch_empty_now_and_then_empties_every_nth_answer_after_its_wait(specs: SpecSet) -> None:
    api = specs.api("Fetch")
    rule = _bound(specs, FetchEmptyNowAndThen(every=2, max_wait_ms=200))
    batch = encode_batch([b"a"], base_offset=0)
    request, empty = _fetch()
    assert not rule.edit_answer(api, 12, request, empty) and rule.response_delay(FETCH, 12) == 0.0, \
        "an answer without records does not count"
    request, body = _fetch(records=batch)
    assert not rule.edit_answer(api, 12, request, body) and _fetched(body)[0][2] == batch
    assert rule.response_delay(FETCH, 12) == 0.0
    request, body = _fetch(records=batch)
    assert rule.edit_answer(api, 12, request, body)
    assert _fetched(_reencoded(specs, "Fetch", 12, body)) == [(0, 10, b""), (0, 10, b"")], "HighWatermark kept"
    assert rule.response_delay(FETCH, 12) == pytest.approx(0.2), "MaxWaitMs 300, at most 200 ms"
    assert rule.response_delay(FETCH, 12) == 0.0, "the wait is that answer's only"
    request, body = _fetch(records=batch)
    request["MaxWaitMs"] = 50
    rule.edit_answer(api, 12, request, body)
    request, body = _fetch(records=batch)
    request["MaxWaitMs"] = 50
    assert rule.edit_answer(api, 12, request, body) and rule.response_delay(FETCH, 12) == pytest.approx(0.05)


# -- NewTopicMissing --------------------------------------------------------------------------------
def _metadata(*topics: tuple[str, uuid.UUID]) -> dict[str, Any]:
    return {"ThrottleTimeMs": 0, "Brokers": [], "ClusterId": "c", "ControllerId": 1, "Topics": [
        {"ErrorCode": 0, "Name": name, "TopicId": tid, "IsInternal": False, "Partitions": [
            {"ErrorCode": 0, "PartitionIndex": 0, "LeaderId": 1, "LeaderEpoch": 0, "ReplicaNodes": [1],
             "IsrNodes": [1], "OfflineReplicas": []}], "TopicAuthorizedOperations": -2147483648}
        for name, tid in topics]}


def _named(*names: str) -> dict[str, Any]:
    return {"Topics": [{"TopicId": ZERO_UUID, "Name": n} for n in names], "AllowAutoTopicCreation": False,
            "IncludeTopicAuthorizedOperations": False}


def _shown(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    return [(t["Name"], t["ErrorCode"], len(t["Partitions"])) for t in body["Topics"]]


def test_new_topic_missing_hides_a_new_topic_from_its_first_answers(specs: SpecSet) -> None:
    api = specs.api("Metadata")
    unknown, leaderless = _bound(specs, NewTopicMissing(error=3)), _bound(specs, NewTopicMissing(error=5))
    t, u = ("t", uuid.uuid4()), ("u", uuid.uuid4())
    seen = []
    for _ in range(3):
        body = _metadata(t)
        for rule in (unknown, leaderless):
            rule.edit_answer(api, 12, _named("t"), body)
        seen.append(_shown(_reencoded(specs, "Metadata", 12, body)))
    assert seen == [[("t", 3, 0)], [("t", 5, 0)], [("t", 0, 1)]], "unknown, then leaderless, then there"
    body = _metadata(t)
    unknown.edit_answer(api, 12, _named("t"), body)
    assert body["Topics"][0]["TopicId"] == t[1], "an answer with the topic there keeps its ID"

    listing = _metadata(t, u)
    assert unknown.edit_answer(api, 12, {"Topics": None}, listing)
    assert _shown(listing) == [("t", 0, 1)], "a listing of every topic leaves the new one out"
    recreated = _metadata(("t", uuid.uuid4()))
    assert unknown.edit_answer(api, 12, _named("t"), recreated) and recreated["Topics"][0]["TopicId"] == ZERO_UUID, \
        "a topic made again under its name is a new topic"


def test_new_topic_missing_leaves_lookups_by_id_and_errors_alone(specs: SpecSet) -> None:
    api = specs.api("Metadata")
    rule = _bound(specs, NewTopicMissing())
    t = ("t", uuid.uuid4())
    assert not rule.edit_answer(api, 12, {"Topics": [{"TopicId": t[1], "Name": None}]}, _metadata(t))
    body = _metadata(t)
    body["Topics"][0]["ErrorCode"] = 29
    assert not rule.edit_answer(api, 12, _named("t"), body), "an answer already in error does not count"
    assert rule.edit_answer(api, 12, _named("t"), _metadata(t))
    with pytest.raises(ValueError, match="must be one of"):
        NewTopicMissing(error=6)
