"""kfake under the harness's control: leader moves, stopped and restarted brokers, paused brokers,
errors and a dead kcts-kfake, against a real kcts-kfake (harness/cluster/kcts_kfake/main.go)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException

from harness import confluent, session
from harness.clients.admin import create_topic
from harness.cluster import probe
from harness.cluster.base import NodeState
from harness.cluster.kfake import FENCE_AFTER_MS, KfakeCluster
from harness.cluster.local import SaslConfig
from harness.errors import ClusterError, NodeExited
from harness.protocol.client import RawClient
from harness.protocol.exceptions import ConnectionFailed, RequestTimeout
from harness.reaper import tagged_pids
from harness.waiting import wait_until

pytestmark = pytest.mark.live
HELD = 1.5  # seconds a paused node must leave a request unanswered (kfake answers others in milliseconds)


@pytest.fixture(scope="module")
def kfake() -> Iterator[KfakeCluster]:
    with KfakeCluster() as c:
        yield c  # type: ignore[misc]


@pytest.fixture
def cluster(kfake: KfakeCluster) -> Iterator[KfakeCluster]:
    """The module's kfake; every broker runs again after each test, whatever it did."""
    yield kfake
    for b in kfake.broker_ids:
        kfake.start_node(b)


_topics = iter(range(1_000_000))


def topic(cluster: KfakeCluster, partitions: int = 1, replication_factor: int = 3) -> str:
    name = f"kfake-control-{next(_topics)}-{os.getpid()}"
    with confluent.admin(cluster.client_config()) as admin:
        return create_topic(cluster, admin, name, partitions, replication_factor)


def kfake_pids() -> set[int]:
    """This session's kcts-kfake processes."""
    found = set()
    for pid in tagged_pids(session.current().id):
        try:
            if b"kcts-kfake" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.add(pid)
        except OSError:
            continue  # gone meanwhile
    return found


def test_move_makes_the_node_lead_at_a_higher_epoch(cluster: KfakeCluster) -> None:
    t = topic(cluster)
    before = cluster.state.partition_state(t)
    to = next(b for b in cluster.broker_ids if b != before.leader)
    cluster.move_leader_to(t, 0, to)
    for b in cluster.broker_ids:  # kfake applies it on its loop before answering: every broker says so at once
        after = cluster.state.partition_state(t, broker=b)
        assert after.leader == to and after.leader_epoch > before.leader_epoch, (before, after)


def test_a_move_kfake_refuses_is_a_cluster_error_naming_it(cluster: KfakeCluster) -> None:
    t = topic(cluster)
    with pytest.raises(ClusterError, match=r"node 99 not found"):
        cluster.move_leader_to(t, 0, 99)
    with pytest.raises(ClusterError, match=r"topic/partition not found"):
        cluster.move_leader_to(t, 7, cluster.broker_ids[0])


def test_stopped_node_leaves_metadata_and_its_leaderships(cluster: KfakeCluster) -> None:
    t = topic(cluster, partitions=6)
    victim = cluster.state.partition_state(t, 0).leader
    before = {p: cluster.state.partition_state(t, p) for p in range(6)}
    host, port = cluster.broker_address(victim)
    open_conn = RawClient.connect(host, port, spec=probe.SPECS, timeout=5, negotiate=False)
    try:
        cluster.kill_node(victim)
        cluster.kill_node(victim)  # idempotent
        assert cluster.node_state(victim) is NodeState.STOPPED
        assert victim in cluster.broker_ids and victim not in cluster.state.running_brokers()
        other = cluster.state.running_brokers()[0]
        md = probe.metadata(*cluster.probe_address(other), [t])
        assert victim not in md.broker_ids, md
        for p in range(6):
            after = md.partitions[(t, p)]
            assert after.leader != victim and after.leader_epoch > before[p].leader_epoch, (before[p], after)
        with pytest.raises(OSError):
            probe.metadata(host, port, [], timeout=2)  # its listener is closed
        with pytest.raises((ConnectionFailed, RequestTimeout)):
            open_conn.send("Metadata", probe.METADATA_VERSION, {"Topics": [], "AllowAutoTopicCreation": False})
    finally:
        open_conn.close()


def test_started_node_is_back_on_its_port(cluster: KfakeCluster) -> None:
    victim = cluster.broker_ids[0]
    address = cluster.broker_address(victim)
    cluster.stop_node(victim)
    cluster.start_node(victim)
    cluster.start_node(victim)  # idempotent
    assert cluster.node_state(victim) is NodeState.RUNNING
    assert cluster.broker_address(victim) == address
    for b in cluster.broker_ids:
        assert victim in probe.metadata(*cluster.probe_address(b), []).broker_ids
    t = topic(cluster)  # a restarted node leads and answers like the others
    cluster.move_leader_to(t, 0, victim)
    assert cluster.state.partition_state(t, broker=victim).leader == victim


def test_topics_are_created_while_and_after_the_controller_is_stopped(cluster: KfakeCluster) -> None:
    """kfake's controller is one fixed broker; stopping it hands the role to a running one (as any
    live KRaft broker is named controller), so CreateTopics keeps working, during and after."""
    host, port = cluster.probe_address(cluster.broker_ids[0])
    controller = probe.metadata(host, port, []).controller_id
    cluster.stop_node(controller)
    other = cluster.state.running_brokers()[0]
    topic(cluster, replication_factor=len(cluster.state.running_brokers()))
    assert probe.metadata(*cluster.probe_address(other), []).controller_id in cluster.state.running_brokers()
    cluster.start_node(controller)
    topic(cluster)


def test_paused_node_holds_requests_until_resumed(cluster: KfakeCluster) -> None:
    paused, other = cluster.broker_ids[0], cluster.broker_ids[1]
    request = {"Topics": [], "AllowAutoTopicCreation": False}
    held: dict[str, object] = {}
    host, port = cluster.broker_address(paused)
    with RawClient.connect(host, port, spec=probe.SPECS, timeout=30, negotiate=False) as conn:
        cluster.pause_node(paused)
        assert cluster.node_state(paused) is NodeState.PAUSED
        assert paused not in cluster.state.running_brokers()

        def send_held() -> None:
            try:
                held["answer"] = conn.send("Metadata", probe.METADATA_VERSION, request)
            except Exception as exc:  # noqa: BLE001 - shown by the assertion below
                held["answer"] = exc

        sender = threading.Thread(target=send_held, name="held-metadata")
        sender.start()
        try:
            with pytest.raises(OSError, match="no response"):
                probe.metadata(host, port, [], timeout=HELD)  # a second connection: held too
            assert probe.metadata(*cluster.probe_address(other), [], timeout=10).broker_ids  # others answer
            assert "answer" not in held, held
        finally:
            cluster.resume_node(paused)
            sender.join(30)
    answer = held.get("answer")
    assert isinstance(answer, dict) and paused in {b["NodeId"] for b in answer["Brokers"]}, answer
    assert cluster.node_state(paused) is NodeState.RUNNING
    assert probe.metadata(host, port, [], timeout=5).broker_ids


def test_paused_node_is_fenced_its_leaderships_move(cluster: KfakeCluster) -> None:
    """As a controller fences a frozen broker: after FENCE_AFTER_MS the partitions it led have other
    leaders at higher epochs, while it still answers nothing; resumed, it answers again. Paused,
    kfake's controller hands the role on, so topics are still created."""
    t = topic(cluster, partitions=3)
    paused = probe.metadata(*cluster.probe_address(cluster.broker_ids[0]), []).controller_id
    for p in range(3):
        cluster.move_leader_to(t, p, paused)
    before = {p: cluster.state.partition_state(t, p) for p in range(3)}
    cluster.pause_node(paused)
    try:
        for p in range(3):
            cluster.state.wait_for_partition(
                t, p, lambda s, e=before[p].leader_epoch: s.leader not in (-1, paused) and s.leader_epoch > e,
                f"a leader other than paused {paused}", timeout=FENCE_AFTER_MS / 1000 + 10,
            )
        with pytest.raises(OSError, match="no response"):
            probe.metadata(*cluster.broker_address(paused), [], timeout=HELD)
        topic(cluster)
    finally:
        cluster.resume_node(paused)
    assert probe.metadata(*cluster.broker_address(paused), [t], timeout=5).partitions[(t, 0)].leader != paused


def test_stopping_a_paused_node_stops_it(cluster: KfakeCluster) -> None:
    b = cluster.broker_ids[1]
    cluster.pause_node(b)
    cluster.stop_node(b)
    assert cluster.node_state(b) is NodeState.STOPPED
    with pytest.raises(OSError):
        probe.metadata(*cluster.broker_address(b), [], timeout=2)
    cluster.start_node(b)
    assert probe.metadata(*cluster.broker_address(b), [], timeout=5).broker_ids


def test_a_dead_kfake_is_node_exited_and_close_leaves_no_process() -> None:
    before = kfake_pids()
    c = KfakeCluster().start()
    try:
        assert c.proc is not None
        assert kfake_pids() - before == {c.proc.pid}
        os.kill(c.proc.pid, signal.SIGKILL)
        c.proc.wait(10)
        with pytest.raises(NodeExited, match="kfake exited"):
            c.stop_node(0)
    finally:
        c.close()
    c2 = KfakeCluster().start()
    c2.close()
    c2.close()  # safe twice
    wait_until(lambda: kfake_pids() <= before, 10, lambda: f"kcts-kfake processes left: {kfake_pids() - before}")


def test_sasl_kfake_refuses_a_user_without_acls() -> None:
    """-sasl-users: admin (super user) produces, alice (no ACLs) is refused; the harness's probes
    reach it without credentials."""
    with KfakeCluster(sasl=SaslConfig()) as c:
        with confluent.admin(c.client_config()) as admin:
            t = create_topic(c, admin, f"kfake-sasl-{os.getpid()}")
        assert c.probe_address(0) != c.broker_address(0)
        assert c.state.partition_state(t).leader in c.broker_ids
        outcomes: dict[str, KafkaError | None] = {}
        for user in ("admin", "alice"):
            config = {**c.client_config(user), "message.timeout.ms": 10000}
            with confluent.producer(config, flush_timeout=15) as producer:

                def report(err: KafkaError | None, _msg: object, user: str = user) -> None:
                    outcomes[user] = err

                try:
                    producer.produce(t, b"x", on_delivery=report)
                except KafkaException as exc:
                    outcomes[user] = exc.args[0]
        assert outcomes["admin"] is None, outcomes
        alice = outcomes["alice"]
        assert alice is not None and alice.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, outcomes
        with pytest.raises(ClusterError, match="no SASL user 'mallory'"):
            c.client_config("mallory")
