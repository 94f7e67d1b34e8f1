"""Tansu in containers through the command backend (harness/profiles/tansu-docker.toml): three brokers,
each a container of the image built from the Tansu binary kcts built, sharing a PostgreSQL on this
machine. These check the harness's hold on the containers, not Tansu's conformance (the suites judge
that: `kcts run --target tansu-docker`).

Skipped until Tansu is built (`kcts run --target tansu` builds it once with cargo), or when no Docker
daemon answers.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import OFFSET_BEGINNING, TopicPartition
from confluent_kafka.admin import NewTopic

from harness import confluent, docker_engine, session
from harness.cluster import probe
from harness.cluster.base import Cluster, NodeState
from harness.cluster.builds import build_root
from harness.cluster.command import CommandCluster
from harness.cluster.services import PostgresService
from harness.cluster.target import parse
from harness.errors import SetupError, TargetRefused
from harness.reaper import tagged_pids
from harness.waiting import wait_until
from tests.harness.holder import HOLD, REPO, hold, report_held

if TYPE_CHECKING:
    import docker

TANSU = build_root("tansu", "0.6.0") / "bin" / "tansu"
TANSU_NODE_ID = 111

pytestmark = [
    pytest.mark.tansu,
    pytest.mark.docker,
    pytest.mark.skipif(not TANSU.exists(), reason=f"Tansu 0.6.0 is not built ({TANSU} is missing): "
                       "`kcts run --target tansu` builds it once with cargo"),
    pytest.mark.timeout(120),
]


@pytest.fixture(scope="module")
def client() -> Iterator[docker.DockerClient]:
    try:
        c = docker_engine.client(timeout=10)
    except SetupError as exc:
        pytest.skip(f"no Docker engine: {exc}")
    yield c
    c.close()


def answers(port: int) -> bool:
    try:
        probe.metadata("127.0.0.1", port, topics=[], timeout=1)
        return True
    except OSError:
        return False


def test_tansu_in_containers_serves_records_and_obeys_kill_pause_and_isolation(client: docker.DockerClient) -> None:
    started = time.monotonic()
    cluster = CommandCluster(parse("tansu-docker"))
    with cluster:
        took = time.monotonic() - started
        label = f"{docker_engine.CLUSTER_LABEL}={cluster.docker.name}"
        assert cluster.broker_ids == [1, 2, 3] and took < 60, took
        assert {n.reported_id for n in cluster.nodes.values()} == {TANSU_NODE_ID}
        assert cluster.capabilities.partitions and cluster.capabilities.fault_control
        containers = client.containers.list(filters={"label": label})
        assert len(containers) == 3
        assert all(c.labels[docker_engine.SESSION_LABEL] == session.current().id for c in containers)
        assert cluster.environment()["image"].startswith("kcts/tansu:0.6.0-")
        # PostgreSQL listens on loopback and on the run's network gateway, nowhere else.
        server = cluster.services[0]
        assert isinstance(server, PostgresService) and server.server is not None and server.containers
        listen = server.server.argv[server.server.argv.index("-h") + 1]
        assert listen == f"127.0.0.1,{server.containers[0]}", listen

        # A record produced through one broker is read through another (the storage is shared).
        topic = "kcts-tansu-docker"
        with confluent.admin(cluster.client_config()) as admin:
            admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        with confluent.producer({"bootstrap.servers": f"127.0.0.1:{cluster.nodes[1].port}"}) as producer:
            producer.produce(topic, b"in a container", partition=0)
            assert producer.flush(20) == 0
        config = {"bootstrap.servers": f"127.0.0.1:{cluster.nodes[2].port}", "group.id": "kcts-tansu-docker",
                  "enable.auto.commit": False}
        with confluent.consumer(config) as consumer:
            consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
            deadline, value = time.monotonic() + 30, None
            while value is None and time.monotonic() < deadline:
                message = consumer.poll(1)
                if message is not None and message.error() is None:
                    value = message.value()
        assert value == b"in a container"

        # Broker 111 is every node: no single container to act on.
        with pytest.raises(TargetRefused, match="names no single process"):
            cluster.kill_node(TANSU_NODE_ID)
        cluster.kill_node(1)
        assert cluster.node_state(1) is NodeState.STOPPED and not answers(cluster.nodes[1].port)
        assert client.containers.get(f"{cluster.docker.name}-node-1").attrs["State"]["ExitCode"] == 137
        cluster.start_node(1)
        assert cluster.node_state(1) is NodeState.RUNNING and answers(cluster.nodes[1].port)
        assert (cluster.node_log(1) or "").count("tansu broker 0.6.0") == 2

        cluster.pause_node(2)
        assert cluster.node_state(2) is NodeState.PAUSED and not answers(cluster.nodes[2].port)
        assert client.containers.get(f"{cluster.docker.name}-node-2").status == "paused"
        cluster.resume_node(2)
        assert cluster.node_state(2) is NodeState.RUNNING
        # Thawed, it answers again: in its own time (a 1 s probe at the thaw is a race on a loaded machine).
        wait_until(lambda: answers(cluster.nodes[2].port), 30, lambda: "node 2 answering after its resume")

        cluster.isolate_node(3)
        assert cluster.node_state(3) is NodeState.RUNNING and not answers(cluster.nodes[3].port)
        cluster.heal_node(3)  # returns once it answers again
        assert answers(cluster.nodes[3].port)
        assert cluster.state.running_brokers() == [1, 2, 3]
    assert docker_engine.leftovers(client, label) == []
    assert server.server.state is NodeState.STOPPED


@pytest.mark.skipif(HOLD not in os.environ, reason="the holder of the leak test below, run only by it")
def test_hold_tansu_in_containers_for_the_leak_test(cluster: Cluster) -> None:
    """Run by the test below in a child pytest: hold the session's tansu-docker cluster, say what it
    is, wait to be killed."""
    assert isinstance(cluster, CommandCluster)
    info = {"session": session.current().id, "root": str(session.current().root), "cluster": cluster.docker.name,
            "pids": tagged_pids(session.current().id)}
    report_held(info)
    threading.Event().wait(600)


def test_sigkill_of_a_runner_holding_tansu_in_containers_leaves_nothing_labelled(
        client: docker.DockerClient, tmp_path: Path) -> None:
    """SIGKILL the pytest process that holds a tansu-docker cluster: soon after, no container or network
    of its session is left, nor its PostgreSQL, nor its scratch directory (the session reaper's work)."""
    node = f"{Path(__file__).relative_to(REPO)}::test_hold_tansu_in_containers_for_the_leak_test"
    proc, info = hold(tmp_path, "tansu-docker", node, 90)
    label = f"{docker_engine.SESSION_LABEL}={info['session']}"
    assert len(client.containers.list(filters={"label": label})) == 3 and info["pids"], info
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    wait_until(
        lambda: not docker_engine.leftovers(client, label) and not tagged_pids(info["session"])
        and not Path(info["root"]).exists(),
        30,
        lambda: f"left: {docker_engine.leftovers(client, label)}, tagged {tagged_pids(info['session'])}, "
        f"root exists {Path(info['root']).exists()}",
    )
