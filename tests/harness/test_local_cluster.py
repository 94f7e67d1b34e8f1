"""The local backend keeps the Cluster interface's promises on real brokers."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest
from confluent_kafka import Producer

from fixtures.topics import TopicFactory
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster, NodeState
from harness.cluster.external import ExternalCluster
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.cluster.target import parse
from harness.errors import ClusterError, SetupError
from harness.nemesis.faults import Crash, Pause

pytestmark = pytest.mark.live


def test_node_operations_are_idempotent(fault_cluster: Cluster) -> None:
    b = fault_cluster.broker_ids[-1]
    fault_cluster.stop_node(b)
    fault_cluster.stop_node(b)
    assert fault_cluster.node_state(b) is NodeState.STOPPED
    fault_cluster.start_node(b)
    fault_cluster.start_node(b)
    assert fault_cluster.node_state(b) is NodeState.RUNNING


def test_every_replica_reports_the_same_log_end_offset_after_acks_all(
    cluster: Cluster, topic: str, producer_factory: Callable[..., Producer]
) -> None:
    history = produce(producer_factory(acks="all"), topic, [b"r"] * 123)
    state = cluster.state.wait_for_isr(topic, 0, set(cluster.broker_ids))
    leos = {b: cluster.state.log_end_offset(topic, 0, b) for b in state.replicas}
    assert set(leos.values()) == {history.acked[-1].offset + 1}, leos


def test_crashed_leader_is_replaced_with_a_higher_epoch(fault_cluster: Cluster, topic: str) -> None:
    before = fault_cluster.state.partition_state(topic)
    crash = Crash(fault_cluster, "leader", topic)
    assert crash.inject() == before.leader
    after = fault_cluster.state.wait_for_partition(
        topic, 0, lambda s: s.leader not in (-1, before.leader), "a new leader after the crash", 30
    )
    crash.heal()
    assert after.leader_epoch > before.leader_epoch, (before, after)
    fault_cluster.state.wait_for_isr(topic, 0, set(before.replicas), 60)


def test_paused_leader_is_fenced_and_rejoins_after_resume(fault_cluster: Cluster, topic: str) -> None:
    before = fault_cluster.state.partition_state(topic)
    pause = Pause(fault_cluster, "leader", topic)
    pause.inject()
    assert fault_cluster.node_state(before.leader) is NodeState.PAUSED
    after = fault_cluster.state.wait_for_partition(
        topic, 0, lambda s: s.leader not in (-1, before.leader), "a new leader while the old one is frozen", 30
    )
    pause.heal()
    assert after.leader_epoch > before.leader_epoch
    fault_cluster.state.wait_for_isr(topic, 0, set(before.replicas), 60)


def test_broker_that_will_not_start_fails_fast_with_its_log(tmp_path_factory: pytest.TempPathFactory) -> None:
    spec = LocalClusterSpec(brokers=1, broker_overrides={"num.io.threads": "many"})
    with pytest.raises(ClusterError, match=r"broker-1 exited with code \d+ during start-up(?s:.*)num.io.threads"):
        LocalCluster(spec).__enter__()


def test_port_in_use_is_named(tmp_path_factory: pytest.TempPathFactory) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        spec = LocalClusterSpec(brokers=1, per_node_overrides={1: {"listeners": f"CLIENT://127.0.0.1:{port}"}})
        with pytest.raises(ClusterError, match=f"port 127.0.0.1:{port} is in use"):
            LocalCluster(spec).__enter__()


def test_bad_bootstrap_is_one_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    with pytest.raises(SetupError, match=f"no broker answers at --bootstrap-servers 127.0.0.1:{dead}"):
        ExternalCluster(parse(f"external:127.0.0.1:{dead}")).start()


def test_topic_factory_waits_for_a_full_isr(cluster: Cluster, topic_factory: TopicFactory) -> None:
    name = topic_factory(partitions=2, replication_factor=3)
    for p in (0, 1):
        assert len(cluster.state.isr(name, p)) == min(3, len(cluster.broker_ids))
