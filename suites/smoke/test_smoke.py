"""Smoke: acknowledged records survive a clean failover; an unclean election loses only the truncated range."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.mid_batch import assert_mid_batch_fetch_serves_the_holding_batch
from harness.histories import store
from harness.scenarios.mid_batch import mid_batch_fetches
from harness.scenarios.smoke import acknowledged_reads, clean_failover, unclean_loss
from harness.verdicts import target_refused

pytestmark = pytest.mark.smoke


@pytest.mark.promise("replication.acked-read-back")
def test_every_acknowledged_record_is_read_back_in_order(
    request: pytest.FixtureRequest, cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames,
) -> None:
    """Produce with an idempotent acks=all producer to each partition of a topic replicated on 3
    brokers; a consumer reads back exactly the acknowledged records, at the offsets the acks gave, in
    the order they were sent (KIP-98 idempotence: a retried send is written once). A target that
    advertises no InitProducerId does not support that producer: "not supported", its ApiVersions the
    evidence."""
    topic = topic_factory(partitions=3, replication_factor=3)
    for trip in acknowledged_reads(cluster, topic, run_names.group(request.node.name), partitions=3, n=200):
        p, sent, history, got = trip.partition, trip.sent, trip.written, trip.read
        assert not history.failed, f"writes failed on a healthy cluster: {history.failed[:3]}"
        assert [r.value for r in got] == sent, f"partition {p}: read back {len(got)} of {len(sent)}, first {got[:3]}"
        assert [r.offset for r in got] == [w.offset for w in history.acked], f"partition {p}: offsets differ from acks"


@pytest.mark.promise("fetch.mid-batch-offset-serves-its-batch")
def test_a_fetch_from_inside_a_batch_is_answered_with_the_batch_holding_its_offset(
    cluster: Cluster, topic_factory: TopicFactory
) -> None:
    """The Kafka protocol's Fetch, "FetchOffset: the message offset" to fetch from: a consumer whose
    position is inside a record batch (after a commit, a seek, or a KIP-320 reset to the divergence
    offset, "Consumer Handling") is answered with the whole batch holding that offset, for the client
    to drop the records before it; a broker that starts at the next batch loses the records between.
    Fetched from the second and the last record of each of three 5-record batches, at the lowest and
    the highest Fetch version from v4."""
    seen = mid_batch_fetches(cluster, topic_factory(replication_factor=1))
    store.save("fetch-mid-batch", seen)
    assert_mid_batch_fetch_serves_the_holding_batch(seen)


@pytest.mark.promise("replication.no-acked-loss-on-failover")
def test_clean_leader_failover_loses_no_acknowledged_record(
    request: pytest.FixtureRequest, failover_cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames,
) -> None:
    """With acks=all and min.insync.replicas=2, stop the leader cleanly between two batches (on a
    target whose nodes are not the harness's: move the leader): every
    acknowledged record of both batches is in the log exactly once, at its acknowledged offset, and
    the new leader's epoch is higher than the old one."""
    if len(failover_cluster.broker_ids) < 3:
        target_refused(f"{len(failover_cluster.broker_ids)} brokers: with min.insync.replicas=2, a write needs two "
                       "replicas in sync after the leader stops, so the scene needs 3 brokers")
    topic = topic_factory(replication_factor=3, config={"min.insync.replicas": "2"})
    run = clean_failover(failover_cluster, topic, run_names.group(request.node.name), n=300)
    first, second = run.first, run.second
    old, old_epoch, new, new_epoch = run.old, run.old_epoch, run.new, run.new_epoch

    acked = first.acked + second.acked
    assert len(acked) == 600, f"acks=all writes failed across a clean failover: {(first.failed + second.failed)[:3]}"
    log = run.log
    by_offset = {r.offset: r.value for r in log}
    missing = [w for w in acked if by_offset.get(w.offset) != w.value]
    assert not missing, f"{len(missing)} acknowledged records lost or moved after failover {old}->{new}: {missing[:5]}"
    assert len({r.value for r in log}) == len(log), "a record appears twice in the log"
    assert new != old and new_epoch > old_epoch, f"leader {old}@{old_epoch} -> {new}@{new_epoch}"


@pytest.mark.needs_fault_control
@pytest.mark.promise("kip320.replica.truncation-loses-only-divergent", "kip320.replica.truncates-to-divergence")
def test_unclean_election_loses_exactly_the_truncated_range(
    request: pytest.FixtureRequest, unclean_cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames,
) -> None:
    """Force an unclean election (KIP-320 "Motivation", "Consumer handling of unclean truncation"):
    records only the old leader held (acks=1) are lost, exactly the range the nemesis reports as
    truncated, and nothing else: every earlier record and every record written to the new leader
    is read back once, at its acknowledged offset."""
    topic = topic_factory(
        replication_factor=2, config={"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}
    )
    run = unclean_loss(unclean_cluster, topic, run_names.group(request.node.name))
    safe, after, election = run.safe, run.after, run.election

    lost_acked = run.divergent[0].acked
    if len(lost_acked) != 50 or not election.truncated:
        target_refused(f"the forced unclean election diverged no logs: the lone leader acknowledged "
                       f"{len(lost_acked)} of 50 writes; {election}")
    # The old leader's own log line, where its logs are ours to read (not on an operated or external
    # target without a logs command): the truncation it reports is the divergence.
    assert election.logged_truncation_offset in (None, election.divergence_offset), (
        f"the old leader logged its truncation to {election.logged_truncation_offset}, not to the divergence "
        f"offset {election.divergence_offset}: {election}"
    )
    assert [w.offset for w in lost_acked] == list(election.truncated), (
        f"acked divergent offsets {lost_acked[0].offset}..{lost_acked[-1].offset} "
        f"!= truncated range {election.truncated}"
    )
    log = run.log
    expected = [w.value for w in safe.acked] + [w.value for w in after.acked]
    assert [r.value for r in log] == expected, (
        f"log after the unclean election differs from replicated+new-leader records: "
        f"{len(log)} read, {len(expected)} expected; divergent records present: "
        f"{[r.offset for r in log if r.value.startswith(b'divergent')][:5]}"
    )
    assert [r.offset for r in log] == [w.offset for w in safe.acked + after.acked]
    assert election.epoch_after > election.epoch_before and election.new_leader != election.old_leader
