"""Tansu through the command backend: its clusters start and answer, and nothing of one outlives a
killed runner. These check the harness's hold on Tansu's processes, not Tansu's conformance (the
suites judge that: `kcts run --target tansu`).

Skipped until Tansu is built: `kcts run --target tansu` builds it once (cargo, 15-25 minutes).
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
from confluent_kafka.admin import NewTopic

from harness import confluent, session
from harness.cluster import probe
from harness.cluster.base import Cluster, NodeState
from harness.cluster.builds import build_root
from harness.cluster.command import CommandCluster
from harness.cluster.target import parse
from harness.errors import TargetRefused
from harness.reaper import tagged_pids
from harness.waiting import wait_until
from tests.harness.holder import HOLD, REPO, hold, report_held

TANSU = build_root("tansu", "0.6.0") / "bin" / "tansu"
TANSU_NODE_ID = 111  # every Tansu 0.6.0 broker calls itself this (tansu_broker::NODE_ID)

pytestmark = [
    pytest.mark.tansu,
    pytest.mark.skipif(not TANSU.exists(), reason=f"Tansu 0.6.0 is not built ({TANSU} is missing): "
                       "`kcts run --target tansu` builds it once with cargo"),
    pytest.mark.timeout(180),
]


def create_topic(cluster: Cluster, topic: str, partitions: int) -> None:
    with confluent.admin(cluster.client_config()) as admin:
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def test_a_one_broker_tansu_starts_answers_and_restarts() -> None:
    with CommandCluster(parse("tansu-memory")) as cluster:
        # One node, which says it is broker 111: that is its id here, so leaders and nodes agree.
        assert cluster.broker_ids == [TANSU_NODE_ID]
        create_topic(cluster, "kcts-tansu-one", 2)
        state = cluster.state.partition_state("kcts-tansu-one", 1)
        assert (state.leader, state.replicas) == (TANSU_NODE_ID, (TANSU_NODE_ID,))
        cluster.restart_node(TANSU_NODE_ID)
        assert cluster.node_state(TANSU_NODE_ID) is NodeState.RUNNING
        assert "tansu broker 0.6.0" in (cluster.node_log(TANSU_NODE_ID) or "")


def test_three_tansu_brokers_share_postgresql_and_each_says_it_is_broker_111() -> None:
    with CommandCluster(parse("tansu")) as cluster:
        assert cluster.broker_ids == [1, 2, 3]
        assert {n.reported_id for n in cluster.nodes.values()} == {TANSU_NODE_ID}
        create_topic(cluster, "kcts-tansu-three", 3)
        for node in cluster.nodes.values():  # the topic is in the shared storage: every broker serves it
            md = probe.metadata("127.0.0.1", node.port, ["kcts-tansu-three"])
            assert md.broker_ids == (TANSU_NODE_ID,)
            assert md.partitions[("kcts-tansu-three", 0)].leader == TANSU_NODE_ID
        # Broker 111 is any of them: reachable at a running one, running while one runs; but it is no
        # one process, so stopping it alone is refused (a premise verdict), not an error.
        with pytest.raises(TargetRefused, match="names no single process"):
            cluster.kill_node(TANSU_NODE_ID)
        cluster.kill_node(1)
        assert cluster.broker_address(TANSU_NODE_ID) == ("127.0.0.1", cluster.nodes[2].port)
        assert cluster.node_state(TANSU_NODE_ID) is NodeState.RUNNING
        assert cluster.state.partition_state("kcts-tansu-three", 2).leader == TANSU_NODE_ID
        cluster.start_node(1)
        cluster.kill_node(2)
        cluster.start_node(2)
        assert cluster.state.running_brokers() == [1, 2, 3]
        assert "kcts-tansu-three" in {t for t, _ in probe.metadata("127.0.0.1", cluster.nodes[2].port).partitions}


@pytest.mark.skipif(HOLD not in os.environ, reason="the holder of the leak test below, run only by it")
def test_hold_tansu_for_the_leak_test(cluster: Cluster) -> None:
    """Run by the test below in a child pytest: hold a Tansu-with-PostgreSQL cluster (the session's
    own, from --target-profile tansu), report its processes, wait to be killed."""
    pids = tagged_pids(session.current().id)
    names = {pid: Path(f"/proc/{pid}/comm").read_text().strip() for pid in pids}
    info = {"session": session.current().id, "root": str(session.current().root), "pids": names}
    report_held(info)
    threading.Event().wait(600)


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                out.append(pid)
        except OSError:
            continue
    return out


def test_sigkill_of_a_runner_holding_tansu_leaves_no_tansu_or_postgres(tmp_path: Path) -> None:
    """SIGKILL the pytest process that holds a three-broker Tansu on PostgreSQL: 15 s later no Tansu
    and no PostgreSQL process of its session runs, and its scratch directory is gone."""
    proc, info = hold(tmp_path, "tansu", f"{Path(__file__).relative_to(REPO)}::test_hold_tansu_for_the_leak_test", 120)
    pids = {int(p): name for p, name in info["pids"].items()}
    assert sorted(set(pids.values()) & {"tansu", "postgres"}) == ["postgres", "tansu"], info
    assert list(pids.values()).count("tansu") == 3, info
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    wait_until(
        lambda: not alive(list(pids)) and not tagged_pids(info["session"]) and not Path(info["root"]).exists(),
        15,
        lambda: f"alive {[(p, pids[p]) for p in alive(list(pids))]}, tagged {tagged_pids(info['session'])}, "
        f"root exists {Path(info['root']).exists()}",
    )
