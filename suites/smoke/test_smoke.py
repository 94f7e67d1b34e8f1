"""Smoke: acknowledged records survive a clean failover; an unclean election loses only the truncated range."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer

from fixtures.topics import TopicFactory
from harness.clients.history import produce, read_partition
from harness.cluster.base import Cluster
from harness.nemesis.faults import LeaderFailover
from harness.nemesis.unclean import force_unclean_election

pytestmark = pytest.mark.smoke


def values(tag: str, n: int) -> list[bytes]:
    return [f"{tag}-{i:05d}".encode() for i in range(n)]


def test_every_acknowledged_record_is_read_back_in_order(
    cluster: Cluster, topic_factory: TopicFactory,
    producer_factory: Callable[..., Producer], consumer_factory: Callable[..., Consumer],
) -> None:
    """Produce with acks=all to each partition of a topic replicated on 3 brokers; a consumer reads
    back exactly the acknowledged records, at the offsets the acks gave, in the order they were sent."""
    topic = topic_factory(partitions=3, replication_factor=3)
    producer = producer_factory(acks="all")
    consumer = consumer_factory()
    for p in range(3):
        sent = values(f"p{p}", 200)
        history = produce(producer, topic, sent, partition=p)
        assert not history.failed, f"writes failed on a healthy cluster: {history.failed[:3]}"
        got = read_partition(consumer, topic, p, 0, len(sent))
        assert [r.value for r in got] == sent, f"partition {p}: read back {len(got)} of {len(sent)}, first {got[:3]}"
        assert [r.offset for r in got] == [w.offset for w in history.acked], f"partition {p}: offsets differ from acks"


@pytest.mark.needs_fault_control
def test_clean_leader_failover_loses_no_acknowledged_record(
    fault_cluster: Cluster, topic_factory: TopicFactory,
    producer_factory: Callable[..., Producer], consumer_factory: Callable[..., Consumer],
) -> None:
    """With acks=all and min.insync.replicas=2, stop the leader cleanly between two batches: every
    acknowledged record of both batches is in the log exactly once, at its acknowledged offset, and
    the new leader's epoch is higher than the old one."""
    topic = topic_factory(replication_factor=3, config={"min.insync.replicas": "2"})
    producer = producer_factory(acks="all", **{"enable.idempotence": True})
    first = produce(producer, topic, values("before", 300))
    old, old_epoch, new, new_epoch = LeaderFailover(fault_cluster, topic).run()
    second = produce(producer, topic, values("after", 300))
    fault_cluster.start_node(old)

    acked = first.acked + second.acked
    assert len(acked) == 600, f"acks=all writes failed across a clean failover: {(first.failed + second.failed)[:3]}"
    log = read_partition(consumer_factory(), topic, 0, 0, max(w.offset for w in acked) + 1)
    by_offset = {r.offset: r.value for r in log}
    missing = [w for w in acked if by_offset.get(w.offset) != w.value]
    assert not missing, f"{len(missing)} acknowledged records lost or moved after failover {old}->{new}: {missing[:5]}"
    assert len({r.value for r in log}) == len(log), "a record appears twice in the log"
    assert new != old and new_epoch > old_epoch, f"leader {old}@{old_epoch} -> {new}@{new_epoch}"


@pytest.mark.needs_fault_control
def test_unclean_election_loses_exactly_the_truncated_range(
    fault_cluster: Cluster, topic_factory: TopicFactory,
    producer_factory: Callable[..., Producer], consumer_factory: Callable[..., Consumer],
) -> None:
    """Force an unclean election (KIP-320 "Fetch and truncation" scenario; recipe in KAFKA-NOTES):
    records only the old leader held (acks=1) are lost, exactly the range the nemesis reports as
    truncated, and nothing else: every earlier record and every record written to the new leader
    is read back once, at its acknowledged offset."""
    topic = topic_factory(
        replication_factor=2, config={"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}
    )
    safe = produce(producer_factory(acks="all"), topic, values("replicated", 100))
    divergent_writer = producer_factory(acks="1", **{"enable.idempotence": False})
    divergent = []
    election = force_unclean_election(
        fault_cluster, topic,
        write_divergent=lambda: divergent.append(produce(divergent_writer, topic, values("divergent", 50))),
    )
    after = produce(producer_factory(acks="all"), topic, values("new-leader", 100))

    lost_acked = divergent[0].acked
    assert len(lost_acked) == 50 and election.truncation_logged, f"the recipe did not diverge the logs: {election}"
    assert [w.offset for w in lost_acked] == list(election.truncated), (
        f"acked divergent offsets {lost_acked[0].offset}..{lost_acked[-1].offset} "
        f"!= truncated range {election.truncated}"
    )
    log = read_partition(consumer_factory(), topic, 0, 0, after.acked[-1].offset + 1)
    expected = [w.value for w in safe.acked] + [w.value for w in after.acked]
    assert [r.value for r in log] == expected, (
        f"log after the unclean election differs from replicated+new-leader records: "
        f"{len(log)} read, {len(expected)} expected; divergent records present: "
        f"{[r.offset for r in log if r.value.startswith(b'divergent')][:5]}"
    )
    assert [r.offset for r in log] == [w.offset for w in safe.acked + after.acked]
    assert election.epoch_after > election.epoch_before and election.new_leader != election.old_leader
