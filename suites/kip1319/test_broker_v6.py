"""KIP-1319 on the broker: TxnOffsetCommit v6 by topic ID, its error precedence and error mapping.

Every check speaks to the target with the raw client, one request at a time, and dumps the exact
exchange in its failure message. A target that does not advertise TxnOffsetCommit v6 gets
"not supported by this target" with the advertised range as evidence.
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.kip1319 import (
    assert_advertises_v6,
    assert_commit_accepted,
    assert_error_precedence,
    assert_group_error_mapping,
    assert_keyed_by_topic_id,
    assert_offsets_fetched_back,
    assert_persisted_topic_id,
    assert_stale_epoch_mapping,
)
from harness.histories import store
from harness.scenarios import kip1319

pytestmark = pytest.mark.kip1319

RequireV6 = kip1319.RequireV6
Unique = kip1319.Unique


@pytest.mark.promise("kip1319.broker.advertises-v6")
def test_broker_advertises_txn_offset_commit_v6(require_v6: RequireV6) -> None:
    """KIP-1319 "Public Interfaces": TxnOffsetCommit validVersions 0-6. The target's ApiVersions
    response lists TxnOffsetCommit with a max version of at least 6 (exactly 6 on Apache Kafka 4.4.0)."""
    advertised = require_v6("TxnOffsetCommit v6")
    store.save("kip1319-advertised-v6", advertised)
    assert_advertises_v6(advertised)


@pytest.mark.promise("kip1319.v6.topic-id-keyed")
def test_v6_commit_by_topic_id_is_fetched_with_offset_and_epoch(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Public Interfaces" (request and response v6): a v6 commit names its topic by
    TopicId only; the response answers keyed by that TopicId, with no Name on the wire, and error 0
    per partition. After EndTxn(commit), OffsetFetch returns each committed offset with its
    committed leader epoch."""
    require_v6("TxnOffsetCommit by topic ID")
    commit = kip1319.commit_by_topic_id(cluster, topic_factory(partitions=2), unique)
    store.save("kip1319-v6-commit", commit)
    assert_keyed_by_topic_id(commit)
    assert_commit_accepted(commit)
    assert_offsets_fetched_back(commit)


@pytest.mark.promise("kip1319.v6.unknown-topic-id")
def test_unknown_topic_id_fails_every_partition_of_that_topic(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", first rule: a TopicId the
    broker cannot resolve gets UNKNOWN_TOPIC_ID (100) for every partition of that topic; a known
    topic in the same request commits (error 0)."""
    require_v6("UNKNOWN_TOPIC_ID on TxnOffsetCommit v6")
    commit = kip1319.commit_unknown_topic_id(cluster, topic_factory(), unique)
    store.save("kip1319-unknown-topic-id", commit)
    assert_error_precedence(commit)


@pytest.mark.promise("kip1319.v6.recreated-topic-old-id")
def test_old_id_of_a_recreated_topic_is_unknown_topic_id(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", first rule, for the ID that
    once was real: a topic deleted and made again under its name has a new TopicId; a v6 commit
    naming the old one gets UNKNOWN_TOPIC_ID (100) for its partition, not the new topic's offsets,
    while the new TopicId in the same request commits (error 0)."""
    require_v6("UNKNOWN_TOPIC_ID for a deleted topic's TopicId")
    commit = kip1319.commit_recreated_topic_old_id(cluster, topic_factory(), unique)
    store.save("kip1319-recreated-topic-old-id", commit)
    assert_error_precedence(commit)


@pytest.mark.promise("kip1319.v6.missing-partition-only")
def test_missing_partition_fails_only_that_partition(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", third rule: for a known,
    authorized topic, a partition that does not exist gets UNKNOWN_TOPIC_OR_PARTITION (3) for that
    partition only; the topic's existing partitions commit (error 0)."""
    require_v6("partition validation on TxnOffsetCommit v6")
    commit = kip1319.commit_missing_partition(cluster, topic_factory(partitions=2), unique)
    store.save("kip1319-missing-partition", commit)
    assert_error_precedence(commit)


@pytest.mark.promise("kip1319.v6.group-id-not-found", "kip1319.v0-5.old-error-mapping")
def test_unknown_group_is_group_id_not_found_on_v6_and_illegal_generation_on_v5(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Error mapping" and the error table: a commit with
    group membership (generation 1, a member id) to a group that does not exist gets
    GROUP_ID_NOT_FOUND (69) on v6, and ILLEGAL_GENERATION (22) on v5 for the same request, as on
    v3 and v4 ("For v0-5, all existing error mappings are preserved"; v3 is the first version with
    group membership), at each of those the coordinator speaks."""
    require_v6("GROUP_ID_NOT_FOUND on TxnOffsetCommit v6")
    answers = kip1319.unknown_group_answers(cluster, topic_factory(), unique)
    store.save("kip1319-unknown-group", answers)
    assert_group_error_mapping(answers, "GROUP_ID_NOT_FOUND")


@pytest.mark.promise("kip1319.v6.stale-member-epoch", "kip1319.v0-5.old-error-mapping")
def test_stale_member_epoch_is_stale_member_epoch_on_v6_and_illegal_generation_on_v5(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Error mapping" and the error table: in a
    consumer-protocol group, a commit with the member's previous epoch gets STALE_MEMBER_EPOCH (113)
    on v6 and ILLEGAL_GENERATION (22) on v5, v4 and v3 for the same request; with the current epoch
    every version commits (error 0), so the epoch alone makes the difference."""
    require_v6("STALE_MEMBER_EPOCH on TxnOffsetCommit v6")
    answers = kip1319.stale_member_epoch_answers(cluster, topic_factory(), unique)
    store.save("kip1319-stale-member-epoch", answers)
    assert_stale_epoch_mapping(answers)


@pytest.mark.promise("kip1319.v6.persists-topic-id")
def test_v6_commit_persists_the_topic_id_in_offset_commit_value(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Persisting topic IDs": after a committed v6
    TxnOffsetCommit, the OffsetCommitValue record in __consumer_offsets (schema v4+, read from the
    group's partition and decoded with the coordinator's record schema) carries the topic's real
    ID in its topicId field, with the committed offset and leader epoch."""
    require_v6("topic IDs persisted by TxnOffsetCommit v6")
    persisted = kip1319.persisted_v6_commit(cluster, topic_factory(), unique)
    store.save("kip1319-persisted-topic-id", persisted)
    assert_commit_accepted(persisted.commit)
    if persisted.unreadable:
        pytest.skip(persisted.unreadable)
    assert_persisted_topic_id(persisted)
