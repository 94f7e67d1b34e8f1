"""KIP-1319 situations on the broker side: raw TxnOffsetCommit v6/v5 requests and what they leave behind.

Each scenario opens its own raw connections to the cluster it is given, sends exactly the
requests of its situation (one transaction per commit: InitProducerId, TxnOffsetCommit, EndTxn),
reads back what the check needs (OffsetFetch, the OffsetCommitValue records the group coordinator
wrote to `__consumer_offsets`, ApiVersions) and returns it as a history (harness.histories.kip1319),
which a check reads live or as recorded (tests/checks/data) the same way.

The facts of the KIP are named once here: TxnOffsetCommit v6 is KIP-1319, Apache Kafka
`PRE_KIP_RELEASE` (4.3.1) is a release without it, and `FIRST_KIP1319_CLIENT` (4.4.0) is the first
Java client with it.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from harness import confluent
from harness.clients import transactions as tx
from harness.clients.admin import create_topic, topic_name
from harness.clients.raw import RawConnector, read_log
from harness.cluster.base import Cluster
from harness.histories.kip1319 import (
    Advertised,
    Features,
    FinalizedFeature,
    GroupErrorAnswers,
    OffsetCommitValue,
    PersistedCommit,
    PersistedOffset,
    StaleEpochAnswers,
    SupportedFeature,
    TopicFact,
    TxnCommit,
)
from harness.histories.observations import Body, FetchedOffset, ObservedExchange, OffsetCommit
from harness.kafka.dist import FIRST_KIP1319_RELEASE, PRE_KIP1319_RELEASE
from harness.protocol import errors
from harness.protocol.client import Exchange, RawClient
from harness.protocol.coordinator import decode_coordinator_record
from harness.waiting import Owed, wait_until

TXN_OFFSET_COMMIT = "TxnOffsetCommit"
KIP_VERSION = 6  # TxnOffsetCommit v6 is KIP-1319
PRE_KIP_RELEASE = PRE_KIP1319_RELEASE  # an Apache Kafka release without KIP-1319 (TxnOffsetCommit up to v5)
FIRST_KIP1319_CLIENT = FIRST_KIP1319_RELEASE  # the first Java client release with the KIP-1319 producer
TRANSACTION_VERSION = "transaction.version"  # the finalized feature of Transaction V2 (KIP-890)
OFFSETS_TOPIC = "__consumer_offsets"
# Record types (the key's int16 prefix) of offset commits: 0 legacy, 1 current (OffsetCommitKey).
OFFSET_COMMIT_TYPES = (0, 1)

Unique = Callable[[str], str]  # `unique(hint)` -> a fresh group or transactional id of this run


def exchange_record(ex: Exchange, client: RawClient | None = None, role: str | None = None) -> ObservedExchange:
    """A raw client's exchange as the histories keep it (`client`: who answered, when known)."""
    broker = f"{client.host}:{client.port}" if client is not None else None
    return ObservedExchange(ex.api.name, ex.version, ex.request, ex.response, broker, role)


COORDINATOR = "group coordinator"  # the role of the broker that answers a TxnOffsetCommit


def group_coordinator(raw: RawConnector, group: str) -> RawClient:
    # The lookup is the harness's own: on a reconnecting client, a FindCoordinator that timed out
    # under load is asked again (transactions.settle). The coordinator's client carries judged
    # requests only, which are never sent again.
    return raw(tx.coordinator_id(raw(reconnect=True), group, tx.GROUP_KEY))


# -- what the broker advertises ----------------------------------------------------------------

# The suites' v6 gate: `require_v6(what, on=target)` -> what `on` advertises, or "not supported".
RequireV6 = Callable[..., Advertised]


def advertised(cluster: Cluster, api: str = TXN_OFFSET_COMMIT) -> Advertised:
    """What the cluster's first broker advertises for `api`."""
    with RawConnector(cluster) as raw:
        client = raw()
        found = client.broker_versions.get(client.specs.api(api).key)
        return Advertised(f"{client.host}:{client.port}", api, tuple(found) if found else None)


def features(cluster: Cluster) -> Features:
    with RawConnector(cluster) as raw:
        client = raw()
        response = client.api_versions_response
        supported = tuple(SupportedFeature(f["Name"], f["MinVersion"], f["MaxVersion"])
                          for f in response.get("SupportedFeatures") or [])
        finalized = tuple(FinalizedFeature(f["Name"], f["MinVersionLevel"], f["MaxVersionLevel"])
                          for f in response.get("FinalizedFeatures") or [])
        return Features(f"{client.host}:{client.port}", supported, finalized)


def speaks_transaction_version_1(features: Features) -> bool:
    """Whether a broker with `features` can be formatted with transaction.version=1 (KIP-890)."""
    return (features.max_supported(TRANSACTION_VERSION) or 0) >= 1


# -- one transactional commit -------------------------------------------------------------------

def _topic_fact(name: str | None, topic_id: uuid.UUID, partitions: int, exists: bool = True,
                authorized: bool = True) -> TopicFact:
    return TopicFact(name, topic_id, partitions, exists, authorized)


def _asked(topics: list[Body], facts: list[TopicFact]) -> tuple[OffsetCommit, ...]:
    """The offsets a TxnOffsetCommit request carries, with each topic's name and id from `facts`."""
    by_key: dict[object, TopicFact] = {f.topic_id: f for f in facts} | {f.name: f for f in facts if f.name}
    out = []
    for t in topics:
        fact = by_key.get(t.get("TopicId", t.get("Name")))
        for p in t["Partitions"]:
            out.append(OffsetCommit(fact.name if fact and fact.name else t.get("Name"),
                                    fact.topic_id if fact else t.get("TopicId"), p["PartitionIndex"],
                                    p["CommittedOffset"], p["CommittedLeaderEpoch"]))
    return tuple(out)


def fetch_committed(raw: RawConnector, group: str, asked: tuple[OffsetCommit, ...]) -> tuple[FetchedOffset, ...]:
    """OffsetFetch (stable) of the group's offsets for every topic and partition of `asked`."""
    coordinator = group_coordinator(raw, group)
    out = []
    for topic, topic_id in dict.fromkeys((a.topic, a.topic_id) for a in asked):
        parts = sorted({a.partition for a in asked if a.topic == topic})
        for p, e in sorted(tx.committed_offsets(coordinator, group, topic, topic_id, parts).items()):
            out.append(FetchedOffset(topic, topic_id, p, e["CommittedOffset"], e["CommittedLeaderEpoch"],
                                     e["ErrorCode"]))
    return tuple(out)


def _commit(
    raw: RawConnector, unique: Unique, version: int, group: str, topics: list[Body],
    facts: list[TopicFact], commit: bool, read_back: bool = False, context: str = "",
) -> TxnCommit:
    """One transaction: InitProducerId, TxnOffsetCommit `version` of `topics` (no group membership),
    EndTxn(commit or abort), then OffsetFetch of what it carried if `read_back`."""
    txn = tx.begin(raw, unique("txn"), reconnect=True)  # its steps are setup: sent again after a timeout
    coordinator = group_coordinator(raw, group)
    ex, retried = tx.txn_offset_commit_settled(coordinator, version, txn, group, topics, retriable(facts))
    txn.end(commit=commit)
    asked = _asked(topics, facts)
    fetched = fetch_committed(raw, group, asked) if read_back else ()
    return TxnCommit(group, tuple(facts), exchange_record(ex, coordinator, COORDINATOR), commit, asked, fetched,
                     context, tuple(exchange_record(r, coordinator, COORDINATOR) for r in retried))


def retriable(facts: list[TopicFact]) -> Callable[[object, int, int], bool]:
    """Which partition answers a client sends again (KIP-1319, "Producer-Side": UNKNOWN_TOPIC_ID is
    retriable, as UNKNOWN_TOPIC_OR_PARTITION): UNKNOWN_TOPIC_ID for a topic that exists (the
    coordinator's metadata cache has not caught up with it), and UNKNOWN_TOPIC_OR_PARTITION for a
    partition that exists. The answers KIP-1319's rules give (an unknown TopicId, a partition past
    the topic's count) are final, and judged as they are."""
    by_key: dict[object, TopicFact] = {f.topic_id: f for f in facts} | {f.name: f for f in facts if f.name}

    def again(key: object, partition: int, code: int) -> bool:
        fact = by_key.get(key)
        if fact is None or not fact.exists or code not in tx.TOPIC_RETRIABLE:
            return False
        return code == errors.UNKNOWN_TOPIC_ID or (fact.authorized and partition < fact.partitions)

    return again


def commit_by_topic_id(cluster: Cluster, topic: str, unique: Unique) -> TxnCommit:
    """A v6 commit of partitions 0 (offset 42, epoch 3) and 1 (offset 7, epoch 5, metadata) of a
    two-partition topic, named by TopicId only; the transaction commits and OffsetFetch reads back."""
    with RawConnector(cluster) as raw:
        topic_id = tx.topic_ids(raw(), [topic])[topic]
        topics = [{"TopicId": topic_id, "Partitions": [tx.partition(0, 42, 3), tx.partition(1, 7, 5, "meta")]}]
        return _commit(raw, unique, KIP_VERSION, unique("group"), topics, [_topic_fact(topic, topic_id, 2)],
                       commit=True, read_back=True)


def commit_unknown_topic_id(cluster: Cluster, topic: str, unique: Unique) -> TxnCommit:
    """A v6 commit naming a random TopicId (partitions 0-2) and a real one-partition topic (partition 0)."""
    with RawConnector(cluster) as raw:
        known = tx.topic_ids(raw(), [topic])[topic]
        unknown = uuid.uuid4()
        topics = [
            {"TopicId": unknown, "Partitions": [tx.partition(p, 10) for p in (0, 1, 2)]},
            {"TopicId": known, "Partitions": [tx.partition(0, 10)]},
        ]
        facts = [_topic_fact(None, unknown, 0, exists=False), _topic_fact(topic, known, 1)]
        return _commit(raw, unique, KIP_VERSION, unique("group"), topics, facts, commit=False)


def commit_recreated_topic_old_id(cluster: Cluster, topic: str, unique: Unique) -> TxnCommit:
    """`topic` (one partition) deleted and made again under its name; then a v6 commit naming its old
    TopicId (partition 0) and its new one (partition 0)."""
    with RawConnector(cluster) as raw, confluent.admin(cluster.client_config()) as admin:
        old = tx.topic_ids(raw(), [topic])[topic]
        replicas = len(cluster.state.partition_state(topic).replicas)
        confluent.admin_result(admin, admin.delete_topics([topic], operation_timeout=30)[topic], 60)

        def recreated() -> uuid.UUID | None:
            try:
                made = admin.create_topics([NewTopic(topic, 1, replicas)], operation_timeout=30)[topic]
                confluent.admin_result(admin, made, 60)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:  # still being deleted: try again
                    raise
            try:
                new = tx.topic_ids(raw(), [topic])[topic]
            except (AssertionError, KeyError):
                return None
            return new if new != old else None

        new = wait_until(recreated, 60, lambda: f"{topic} deleted and made again with a new TopicId (old {old})",
                         interval=0.5, owed=Owed.PREMISE)
        cluster.state.wait_for_partition(topic, 0, lambda s: s.leader >= 0, "a leader of the new topic")
        topics = [
            {"TopicId": old, "Partitions": [tx.partition(0, 10)]},
            {"TopicId": new, "Partitions": [tx.partition(0, 10)]},
        ]
        facts = [_topic_fact(None, old, 0, exists=False), _topic_fact(topic, new, 1)]
        return _commit(raw, unique, KIP_VERSION, unique("group"), topics, facts, commit=False,
                       context=f"{topic}: old TopicId {old} (deleted), new {new}")


def commit_missing_partition(cluster: Cluster, topic: str, unique: Unique) -> TxnCommit:
    """A v6 commit of partitions 0, 1 and 5 of a two-partition topic."""
    with RawConnector(cluster) as raw:
        topic_id = tx.topic_ids(raw(), [topic])[topic]
        topics = [{"TopicId": topic_id, "Partitions": [tx.partition(p, 10) for p in (0, 1, 5)]}]
        return _commit(raw, unique, KIP_VERSION, unique("group"), topics, [_topic_fact(topic, topic_id, 2)],
                       commit=False)


# -- group errors: v6 against v5 ----------------------------------------------------------------

FIRST_WITH_MEMBERSHIP = 3  # TxnOffsetCommit v3 (KIP-447) added GenerationId and MemberId


def _commit_at(
    raw: RawConnector, unique: Unique, coordinator: RawClient, version: int, group: str, key: Body,
    epoch: int, member: str,
) -> ObservedExchange:
    """One membership commit at `version` in a transaction of its own, then aborted. Below v5 (before
    KIP-890's Transaction V2) the producer adds the group to its transaction itself, and ends it at
    EndTxn v4 at most."""
    txn = tx.begin(raw, unique("txn"), reconnect=True)  # its steps are setup: sent again after a timeout
    if version < 5:
        txn.add_group(group)
    # The topic and its partition 0 exist: a topic error is a lagging metadata cache, sent again.
    ex, _ = tx.txn_offset_commit_settled(
        coordinator, version, txn, group, [{**key, "Partitions": [tx.partition(0, 10)]}],
        lambda _topic, _partition, code: code in tx.TOPIC_RETRIABLE, generation_or_epoch=epoch, member_id=member,
    )
    answer = exchange_record(ex, coordinator, COORDINATOR)
    txn.end(commit=False, version=min(4, txn.coordinator.max_version("EndTxn")) if version < 5 else None)
    return answer


def _v6_and_v5(
    raw: RawConnector, unique: Unique, topic: str, topic_id: uuid.UUID, group: str, epoch: int, member: str
) -> GroupErrorAnswers:
    coordinator = group_coordinator(raw, group)
    v6 = _commit_at(raw, unique, coordinator, 6, group, {"TopicId": topic_id}, epoch, member)
    v5 = _commit_at(raw, unique, coordinator, 5, group, {"Name": topic}, epoch, member)
    low, _ = coordinator.broker_versions[coordinator.specs.api(TXN_OFFSET_COMMIT).key]
    older = {f"v{v}": _commit_at(raw, unique, coordinator, v, group, {"Name": topic}, epoch, member)
             for v in range(max(low, FIRST_WITH_MEMBERSHIP), 5)}
    return GroupErrorAnswers(group, member, epoch, v6, v5, older)


def unknown_group_answers(cluster: Cluster, topic: str, unique: Unique) -> GroupErrorAnswers:
    """A commit with group membership (generation 1, member "kcts-member") to a group that does not exist."""
    with RawConnector(cluster) as raw:
        topic_id = tx.topic_ids(raw(), [topic])[topic]
        return _v6_and_v5(raw, unique, topic, topic_id, unique("no-such-group"), 1, "kcts-member")


def _consumer_group_member(raw: RawConnector, group: str, topic: str) -> tuple[str, int, tuple[ObservedExchange, ...]]:
    """A member of a consumer-protocol group (KIP-848) whose epoch has moved past its first one."""
    coordinator = group_coordinator(raw, group)
    seen: list[ObservedExchange] = []

    def heartbeat(member: str, epoch: int) -> Body:
        ex = tx.consumer_group_heartbeat(coordinator, group, member, epoch, [topic])
        seen.append(exchange_record(ex, coordinator, COORDINATOR))
        assert ex.response["ErrorCode"] == 0, f"ConsumerGroupHeartbeat refused:\n{ex.dump()}"
        return ex.response

    first = heartbeat(uuid.uuid4().hex[:22], 0)
    # A second member joining bumps the group epoch; the first member's next heartbeat moves to it.
    heartbeat(uuid.uuid4().hex[:22], 0)
    current = heartbeat(first["MemberId"], first["MemberEpoch"])
    return first["MemberId"], current["MemberEpoch"], tuple(seen)


def stale_member_epoch_answers(cluster: Cluster, topic: str, unique: Unique) -> StaleEpochAnswers:
    with RawConnector(cluster) as raw:
        topic_id = tx.topic_ids(raw(), [topic])[topic]
        group = unique("consumer-group")
        member, epoch, heartbeats = _consumer_group_member(raw, group, topic)
        stale = _v6_and_v5(raw, unique, topic, topic_id, group, epoch - 1, member)
        current = _v6_and_v5(raw, unique, topic, topic_id, group, epoch, member)
        return StaleEpochAnswers(group, member, epoch, heartbeats, stale, current)


# -- what the group coordinator persisted -------------------------------------------------------

def java_string_hash(text: str) -> int:
    """String.hashCode(): over UTF-16 code units, in 32-bit two's complement."""
    h = 0
    for (unit,) in struct.iter_unpack(">H", text.encode("utf-16-be")):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def group_partition(group: str, partitions: int) -> int:
    """GroupCoordinator partitionFor: abs(groupId.hashCode()) % partitions (Utils.abs: MIN_VALUE -> 0)."""
    h = java_string_hash(group)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def persisted_offsets(raw: RawConnector, group: str, topic: str) -> tuple[tuple[PersistedOffset, ...], str | None]:
    """The latest OffsetCommit record per partition of `topic` for `group`, read from the group's
    `__consumer_offsets` partition on its leader, offset 0 to the high watermark (a transactional
    commit writes its records inside the transaction; the check wants what was persisted)."""
    client = raw()
    md = client.send("Metadata", client.max_version("Metadata"),
                     {"Topics": [{"Name": OFFSETS_TOPIC}], "AllowAutoTopicCreation": False})
    (t,) = md["Topics"]
    if t["ErrorCode"] == errors.UNKNOWN_TOPIC_OR_PARTITION:
        # Apache Kafka keeps group state in this topic; a target that keeps it elsewhere (kfake:
        # in memory) offers nothing to read, so the persisted form cannot be checked there.
        return (), (f"the target has no {OFFSETS_TOPIC} topic to read what it persisted "
                    f"(Metadata: {errors.describe(t['ErrorCode'])})")
    assert t["ErrorCode"] == 0, f"Metadata of {OFFSETS_TOPIC}: error {errors.describe(t['ErrorCode'])}"
    index = group_partition(group, len(t["Partitions"]))
    leader = next(p["LeaderId"] for p in t["Partitions"] if p["PartitionIndex"] == index)
    owner = raw(leader)
    found: dict[int, PersistedOffset] = {}
    batches, _ = read_log(owner, OFFSETS_TOPIC, t["TopicId"], index)
    # Transaction markers share the partition; offset commits are keyed records.
    records = [(r.offset, r.key, r.value) for b in batches if not b.is_control for r in b.records if r.key is not None]
    for offset, key, value in records:
        if struct.unpack_from(">h", key)[0] not in OFFSET_COMMIT_TYPES:
            continue  # other groups' records share the partition; only offset commits are read
        rec = decode_coordinator_record(owner.specs, OFFSETS_TOPIC, key, value)
        if rec.key_schema == "OffsetCommitKey" and (rec.key["group"], rec.key["topic"]) == (group, topic):
            p = rec.key["partition"]
            found[p] = PersistedOffset(p, offset, rec.value_version, _offset_commit_value(rec.value))
    return tuple(found[p] for p in sorted(found)), None


def _offset_commit_value(value: Body | None) -> OffsetCommitValue | None:
    """The fields of an OffsetCommitValue the checks read (None for a tombstone)."""
    if value is None:
        return None
    return OffsetCommitValue(value["offset"], value["leaderEpoch"], value.get("metadata", ""),
                             value["commitTimestamp"], value.get("topicId"))


def persisted_v6_commit(cluster: Cluster, topic: str, unique: Unique) -> PersistedCommit:
    """A committed v6 commit of partition 0 (offset 42, epoch 3) by TopicId, and what it persisted."""
    with RawConnector(cluster) as raw:
        topic_id = tx.topic_ids(raw(), [topic])[topic]
        group = unique("group")
        topics = [{"TopicId": topic_id, "Partitions": [tx.partition(0, 42, 3)]}]
        commit = _commit(raw, unique, KIP_VERSION, group, topics, [_topic_fact(topic, topic_id, 1)], commit=True)
        persisted, unreadable = persisted_offsets(raw, group, topic)
        return PersistedCommit(commit, topic, topic_id, persisted, unreadable)


def side_topic(cluster: Cluster, hint: str, partitions: int = 1) -> str:
    """A ready topic on a cluster the harness started for one module (nothing to clean up after)."""
    with confluent.admin(cluster.client_config()) as admin:
        return create_topic(cluster, admin, topic_name("kcts", hint), partitions, min(3, len(cluster.broker_ids)))


def pre_kip_persisted_commit(cluster: Cluster) -> PersistedCommit:
    """On a broker without KIP-1319: a committed commit of partition 0 (offset 21, epoch 2) by name,
    at v5 (or the broker's highest below), and what it persisted."""
    topic = side_topic(cluster, "pre-kip-persisted")
    with RawConnector(cluster) as raw:
        version = min(5, raw().max_version(TXN_OFFSET_COMMIT))
        topic_id = tx.topic_ids(raw(), [topic])[topic]
        group = f"kcts-pre-kip-{uuid.uuid4().hex[:10]}"
        topics = [{"Name": topic, "Partitions": [tx.partition(0, 21, 2)]}]
        commit = _commit(raw, lambda hint: f"kcts-pre-kip-{hint}-{uuid.uuid4().hex[:10]}", version, group, topics,
                         [_topic_fact(topic, topic_id, 1)], commit=True)
        persisted, unreadable = persisted_offsets(raw, group, topic)
        return PersistedCommit(commit, topic, topic_id, persisted, unreadable)


# -- authorization ------------------------------------------------------------------------------

USER = "alice"
TXN_PREFIX = "kcts-alice-txn-"
GROUP_PREFIX = "kcts-alice-group-"


@dataclass(frozen=True)
class AclSetup:
    """Two topics of two partitions on a SASL cluster: `user` may read `allowed`, not `denied`;
    she may also write her transactional ids and read her groups (by prefix)."""

    user: str
    allowed: str
    allowed_id: uuid.UUID
    denied: str
    denied_id: uuid.UUID
    bindings: list[str]  # the ACLs, as the admin client prints them


def acl_setup(cluster: Cluster) -> AclSetup:
    """Create the topics and alice's ACLs; ready once the broker's authorizer lists them all."""
    allowed, denied = side_topic(cluster, "allowed", partitions=2), side_topic(cluster, "denied", partitions=2)
    principal = f"User:{USER}"
    allow = AclPermissionType.ALLOW
    bindings = [
        AclBinding(ResourceType.TRANSACTIONAL_ID, TXN_PREFIX, ResourcePatternType.PREFIXED, principal, "*",
                   AclOperation.WRITE, allow),
        AclBinding(ResourceType.GROUP, GROUP_PREFIX, ResourcePatternType.PREFIXED, principal, "*",
                   AclOperation.READ, allow),
        AclBinding(ResourceType.TOPIC, allowed, ResourcePatternType.LITERAL, principal, "*", AclOperation.READ, allow),
    ]
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, principal, None,
                                  AclOperation.ANY, AclPermissionType.ANY)
    seen: list[object] = []
    with confluent.admin(cluster.client_config()) as admin:
        confluent.admin_results(admin, admin.create_acls(bindings).values(), 30)

        def listed() -> bool:
            seen[:] = confluent.admin_result(admin, admin.describe_acls(everything), 10)
            return set(seen) >= set(bindings)

        wait_until(listed, 30, lambda: f"ACLs of {principal} listed by the broker: {seen}", owed=Owed.PREMISE)
    with RawConnector(cluster) as raw:
        ids = tx.topic_ids(raw(), [allowed, denied])
    return AclSetup(USER, allowed, ids[allowed], denied, ids[denied], [str(b) for b in bindings])


def _commit_as_user(cluster: Cluster, acls: AclSetup, topics: list[Body], facts: list[TopicFact]) -> TxnCommit:
    group = GROUP_PREFIX + uuid.uuid4().hex[:10]
    with RawConnector(cluster, user=acls.user) as alice:
        return _commit(alice, lambda hint: TXN_PREFIX + uuid.uuid4().hex[:10], KIP_VERSION, group, topics, facts,
                       commit=False, context=f"ACLs of {acls.user}: {acls.bindings}")


def unauthorized_commit(cluster: Cluster, acls: AclSetup) -> TxnCommit:
    """As alice, a v6 commit of partitions 0, 1 and 7 (which does not exist) of the denied topic."""
    topics = [{"TopicId": acls.denied_id, "Partitions": [tx.partition(p, 5) for p in (0, 1, 7)]}]
    return _commit_as_user(cluster, acls, topics, [_topic_fact(acls.denied, acls.denied_id, 2, authorized=False)])


def mixed_commit(cluster: Cluster, acls: AclSetup) -> TxnCommit:
    """As alice, one v6 commit naming the allowed topic (partitions 0 and 9, which does not exist),
    a random TopicId (partitions 0 and 1) and the denied topic (partition 0)."""
    unknown = uuid.uuid4()
    topics = [
        {"TopicId": acls.allowed_id, "Partitions": [tx.partition(0, 5), tx.partition(9, 5)]},
        {"TopicId": unknown, "Partitions": [tx.partition(0, 5), tx.partition(1, 5)]},
        {"TopicId": acls.denied_id, "Partitions": [tx.partition(0, 5)]},
    ]
    facts = [
        _topic_fact(acls.allowed, acls.allowed_id, 2),
        _topic_fact(None, unknown, 0, exists=False),
        _topic_fact(acls.denied, acls.denied_id, 2, authorized=False),
    ]
    return _commit_as_user(cluster, acls, topics, facts)
