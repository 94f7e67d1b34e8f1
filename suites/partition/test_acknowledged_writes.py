"""Acknowledged writes across network partitions: a leader cut off on the minority side, and a
controller cut off from every broker."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.network_splits import assert_no_acknowledged_write_lost, assert_served_without_the_controller
from harness.histories import store
from harness.scenarios.network_splits import controller_cut_off, minority_leader

pytestmark = [pytest.mark.partition, pytest.mark.needs_fault_control]

SAFE = {"min.insync.replicas": "2"}


@pytest.mark.promise("replication.no-acked-loss-on-failover")
def test_minority_leader_loses_no_acknowledged_write(
    replica_link_cluster: Cluster, topic_factory: TopicFactory
) -> None:
    """acks=all with min.insync.replicas 2 on 3 replicas (KIP-320 "Motivation": the leader that cannot
    reach the others is the one whose writes may be lost): the leader is cut off from the controller
    and both followers while an idempotent acks=all producer writes on, through the election on the
    majority side and the heal. Every write that was acknowledged is in the final log, once, at the
    offset its acknowledgement gave; the cut-off leader could acknowledge none of its own."""
    run = minority_leader(replica_link_cluster, topic_factory(replication_factor=3, config=SAFE))
    store.save("partition-minority-leader", {"writes": run.writes, "log": run.log,
                                             "timeline": [e.flat() for e in run.timeline]})
    # The scene waited for a new leader on the majority side: an epoch that did not rise with it
    # breaks KIP-320's, not this check's promise.
    assert run.after.leader_epoch > run.before.leader_epoch, (
        f"KIP-320 \"Protocol Changes / Metadata\": the leader epoch rises with every change of leader; a new "
        f"leader was elected on the majority side, yet Metadata's epoch went from {run.before.leader_epoch} to "
        f"{run.after.leader_epoch}: {run.evidence()}")
    try:
        assert_no_acknowledged_write_lost(run.writes, run.log)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {run.evidence()}") from None


@pytest.mark.promise("kraft.brokers-serve-without-controller")
def test_brokers_serve_while_the_controller_is_cut_off(link_cluster: Cluster, topic_factory: TopicFactory) -> None:
    """KRaft with the controller cut off from every broker, longer than twice the broker session
    timeout: the brokers keep their leaders and epochs and go on serving (acks=all writes are
    acknowledged, consumers read them). After the heal the brokers learn they were fenced, the
    partition is led again at a later epoch (KIP-320: a new epoch with every leadership change), and
    no acknowledged write is lost."""
    run = controller_cut_off(link_cluster, topic_factory(replication_factor=3, config=SAFE))
    w = run.writes
    store.save("partition-controller-cut-off", {"writes": w.writes, "reads": run.reads_during, "log": w.log,
                                                "timeline": [e.flat() for e in w.timeline]})
    try:
        assert_served_without_the_controller(w.writes, run.reads_during, run.cut_for, run.session_timeout)
        assert_no_acknowledged_write_lost(w.writes, w.log)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {w.evidence()}") from None
