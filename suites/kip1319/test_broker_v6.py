"""KIP-1319 on the broker: TxnOffsetCommit v6 by topic ID, its error precedence and error mapping.

Every check speaks to the target with the raw client, one request at a time, and dumps the exact
exchange in its failure message. A target that does not advertise TxnOffsetCommit v6 gets
"not supported by this target" with the advertised range as evidence.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from fixtures.topics import TopicFactory
from harness.clients.raw import RawConnector
from harness.protocol import errors
from harness.protocol.client import Exchange, RawClient
from harness.protocol.types import ZERO_UUID
from suites.kip1319 import transactions as tx
from suites.kip1319.offsets_log import persisted_offsets
from suites.kip1319.target import describe_advertised, require_v6

pytestmark = pytest.mark.kip1319

Unique = Callable[[str], str]


def _group_coordinator(raw: RawConnector, group: str) -> RawClient:
    return raw(tx.find_coordinator(raw(), group, tx.GROUP_KEY))


def test_broker_advertises_txn_offset_commit_v6(raw: RawConnector) -> None:
    """KIP-1319 "Public Interfaces": TxnOffsetCommit validVersions 0-6. The target's ApiVersions
    response lists TxnOffsetCommit with a max version of at least 6 (exactly 6 on Apache Kafka 4.4.0)."""
    client = raw()
    require_v6(client, "TxnOffsetCommit v6")
    lo, hi = client.broker_versions[client.specs.api("TxnOffsetCommit").key]
    assert lo <= 6 <= hi, describe_advertised(client)


def test_v6_commit_by_topic_id_is_fetched_with_offset_and_epoch(
    raw: RawConnector, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Public Interfaces" (request and response v6): a v6 commit names its topic by
    TopicId only; the response answers keyed by that TopicId, with no Name on the wire, and error 0
    per partition. After EndTxn(commit), OffsetFetch returns each committed offset with its
    committed leader epoch."""
    client = raw()
    require_v6(client, "TxnOffsetCommit by topic ID")
    topic = topic_factory(partitions=2)
    topic_id = tx.topic_ids(client, [topic])[topic]
    group = unique("group")
    coordinator = _group_coordinator(raw, group)
    txn = tx.begin(raw, unique("txn"))
    ex = tx.txn_offset_commit(
        coordinator, 6, txn, group,
        [{"TopicId": topic_id, "Partitions": [tx.partition(0, 42, 3), tx.partition(1, 7, 5, "meta")]}],
    )
    (answered,) = ex.response["Topics"]
    assert set(answered) == {"TopicId", "Partitions"} and answered["TopicId"] == topic_id, (
        f"v6 response not keyed by the request's TopicId {topic_id}:\n{ex.dump()}"
    )
    assert tx.partition_errors(ex) == {(topic_id, 0): 0, (topic_id, 1): 0}, ex.dump()
    txn.end(commit=True)

    fetched = tx.committed_offsets(coordinator, group, topic, topic_id, [0, 1])
    got = {p: (e["ErrorCode"], e["CommittedOffset"], e["CommittedLeaderEpoch"]) for p, e in fetched.items()}
    assert got == {0: (0, 42, 3), 1: (0, 7, 5)}, f"OffsetFetch after the v6 commit: {fetched}\ncommit:\n{ex.dump()}"


def test_unknown_topic_id_fails_every_partition_of_that_topic(
    raw: RawConnector, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", first rule: a TopicId the
    broker cannot resolve gets UNKNOWN_TOPIC_ID (100) for every partition of that topic; a known
    topic in the same request commits (error 0)."""
    client = raw()
    require_v6(client, "UNKNOWN_TOPIC_ID on TxnOffsetCommit v6")
    topic = topic_factory()
    known = tx.topic_ids(client, [topic])[topic]
    unknown = uuid.uuid4()
    group = unique("group")
    txn = tx.begin(raw, unique("txn"))
    ex = tx.txn_offset_commit(
        _group_coordinator(raw, group), 6, txn, group,
        [
            {"TopicId": unknown, "Partitions": [tx.partition(p, 10) for p in (0, 1, 2)]},
            {"TopicId": known, "Partitions": [tx.partition(0, 10)]},
        ],
    )
    expected = {(unknown, 0): errors.UNKNOWN_TOPIC_ID, (unknown, 1): errors.UNKNOWN_TOPIC_ID,
                (unknown, 2): errors.UNKNOWN_TOPIC_ID, (known, 0): errors.NONE}
    assert tx.partition_errors(ex) == expected, ex.dump()
    txn.end(commit=False)


def test_missing_partition_fails_only_that_partition(
    raw: RawConnector, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", third rule: for a known,
    authorized topic, a partition that does not exist gets UNKNOWN_TOPIC_OR_PARTITION (3) for that
    partition only; the topic's existing partitions commit (error 0)."""
    client = raw()
    require_v6(client, "partition validation on TxnOffsetCommit v6")
    topic = topic_factory(partitions=2)
    topic_id = tx.topic_ids(client, [topic])[topic]
    group = unique("group")
    txn = tx.begin(raw, unique("txn"))
    ex = tx.txn_offset_commit(
        _group_coordinator(raw, group), 6, txn, group,
        [{"TopicId": topic_id, "Partitions": [tx.partition(p, 10) for p in (0, 1, 5)]}],
    )
    expected = {
        (topic_id, 0): errors.NONE, (topic_id, 1): errors.NONE, (topic_id, 5): errors.UNKNOWN_TOPIC_OR_PARTITION
    }
    assert tx.partition_errors(ex) == expected, ex.dump()
    txn.end(commit=False)


def _v5_and_v6(
    raw: RawConnector, unique: Unique, topic: str, topic_id: uuid.UUID, group: str, epoch: int, member: str
) -> dict[int, Exchange]:
    """The same commit (same group, member and generation/epoch) at v6 by ID and at v5 by name."""
    coordinator = _group_coordinator(raw, group)
    out: dict[int, Exchange] = {}
    for version, key in ((6, {"TopicId": topic_id}), (5, {"Name": topic})):
        txn = tx.begin(raw, unique("txn"))
        out[version] = tx.txn_offset_commit(
            coordinator, version, txn, group, [{**key, "Partitions": [tx.partition(0, 10)]}],
            generation_or_epoch=epoch, member_id=member,
        )
        txn.end(commit=False)
    return out


def test_unknown_group_is_group_id_not_found_on_v6_and_illegal_generation_on_v5(
    raw: RawConnector, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Error mapping" and the error table: a commit with
    group membership (generation 1, a member id) to a group that does not exist gets
    GROUP_ID_NOT_FOUND (69) on v6, and ILLEGAL_GENERATION (22) on v5 for the same request."""
    client = raw()
    require_v6(client, "GROUP_ID_NOT_FOUND on TxnOffsetCommit v6")
    topic = topic_factory()
    topic_id = tx.topic_ids(client, [topic])[topic]
    answers = _v5_and_v6(raw, unique, topic, topic_id, unique("no-such-group"), 1, "kcts-member")
    assert tx.partition_errors(answers[6]) == {(topic_id, 0): errors.GROUP_ID_NOT_FOUND}, answers[6].dump()
    assert tx.partition_errors(answers[5]) == {(topic, 0): errors.ILLEGAL_GENERATION}, answers[5].dump()


def _consumer_group_member(raw: RawConnector, group: str, topic: str) -> tuple[str, int]:
    """A member of a consumer-protocol group (KIP-848) whose epoch has moved past its first one."""
    coordinator = _group_coordinator(raw, group)

    def heartbeat(member: str, epoch: int) -> Exchange:
        body = {
            "GroupId": group, "MemberId": member, "MemberEpoch": epoch, "InstanceId": None, "RackId": None,
            "RebalanceTimeoutMs": 30000, "SubscribedTopicNames": [topic], "SubscribedTopicRegex": None,
            "ServerAssignor": None, "TopicPartitions": [],
        }
        v = coordinator.max_version("ConsumerGroupHeartbeat")
        ex = tx.until_settled(
            lambda: coordinator.exchange("ConsumerGroupHeartbeat", v, body), tx.COORDINATOR_STARTING, "heartbeat"
        )
        assert ex.response["ErrorCode"] == 0, f"ConsumerGroupHeartbeat refused:\n{ex.dump()}"
        return ex

    first = heartbeat(uuid.uuid4().hex[:22], 0).response
    # A second member joining bumps the group epoch; the first member's next heartbeat moves to it.
    heartbeat(uuid.uuid4().hex[:22], 0)
    current = heartbeat(first["MemberId"], first["MemberEpoch"]).response
    return first["MemberId"], current["MemberEpoch"]


def test_stale_member_epoch_is_stale_member_epoch_on_v6_and_illegal_generation_on_v5(
    raw: RawConnector, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Error mapping" and the error table: in a
    consumer-protocol group, a commit with the member's previous epoch gets STALE_MEMBER_EPOCH (113)
    on v6 and ILLEGAL_GENERATION (22) on v5 for the same request; with the current epoch both
    versions commit (error 0), so the epoch alone makes the difference."""
    client = raw()
    require_v6(client, "STALE_MEMBER_EPOCH on TxnOffsetCommit v6")
    topic = topic_factory()
    topic_id = tx.topic_ids(client, [topic])[topic]
    group = unique("consumer-group")
    member, epoch = _consumer_group_member(raw, group, topic)
    assert epoch >= 2, f"member {member} did not move past its first epoch: {epoch}"

    stale = _v5_and_v6(raw, unique, topic, topic_id, group, epoch - 1, member)
    assert tx.partition_errors(stale[6]) == {(topic_id, 0): errors.STALE_MEMBER_EPOCH}, stale[6].dump()
    assert tx.partition_errors(stale[5]) == {(topic, 0): errors.ILLEGAL_GENERATION}, stale[5].dump()
    current = _v5_and_v6(raw, unique, topic, topic_id, group, epoch, member)
    assert tx.partition_errors(current[6]) == {(topic_id, 0): errors.NONE}, current[6].dump()
    assert tx.partition_errors(current[5]) == {(topic, 0): errors.NONE}, current[5].dump()


def test_v6_commit_persists_the_topic_id_in_offset_commit_value(
    raw: RawConnector, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Persisting topic IDs": after a committed v6
    TxnOffsetCommit, the OffsetCommitValue record in __consumer_offsets (schema v4+, read from the
    group's partition and decoded with the coordinator's record schema) carries the topic's real
    ID in its topicId field, with the committed offset and leader epoch."""
    client = raw()
    require_v6(client, "topic IDs persisted by TxnOffsetCommit v6")
    topic = topic_factory()
    topic_id = tx.topic_ids(client, [topic])[topic]
    group = unique("group")
    txn = tx.begin(raw, unique("txn"))
    ex = tx.txn_offset_commit(
        _group_coordinator(raw, group), 6, txn, group, [{"TopicId": topic_id, "Partitions": [tx.partition(0, 42, 3)]}]
    )
    assert tx.partition_errors(ex) == {(topic_id, 0): 0}, ex.dump()
    txn.end(commit=True)

    persisted = persisted_offsets(raw, group, topic)
    assert 0 in persisted, f"no OffsetCommit record for {group}/{topic}-0 in __consumer_offsets; commit:\n{ex.dump()}"
    record = persisted[0]
    assert record.value is not None and record.value_version is not None and record.value_version >= 4, record
    assert (record.value["offset"], record.value["leaderEpoch"]) == (42, 3), record
    assert record.value["topicId"] == topic_id, (
        f"OffsetCommitValue v{record.value_version} at __consumer_offsets offset {record.offset_record} has "
        f"topicId {record.value['topicId']}, expected {topic_id} (zero would be {ZERO_UUID}): {record.value}"
    )
