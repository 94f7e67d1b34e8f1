"""librdkafka's mock cluster as a target: its control through the holder, and nothing left running.

Live (the holder loads confluent-kafka's librdkafka) but quick; it runs in `tox -e vendor` with the
target's column, not in the gate.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.clients.admin import admin_client, create_topic
from harness.cluster.base import NodeState
from harness.cluster.librdkafka_mock import LibrdkafkaMockCluster
from harness.cluster.registry import serve
from harness.cluster.target import parse
from harness.errors import TargetRefused
from harness.reaper import tagged_pids
from harness.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.live, pytest.mark.heavy]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LibrdkafkaMockCluster]:
    mock = serve(parse("librdkafka-mock"))
    with mock.make(None) as c:
        assert isinstance(c, LibrdkafkaMockCluster)
        yield c


def test_topics_come_from_the_mock_api_and_configs_it_cannot_keep_are_refused(cluster: LibrdkafkaMockCluster) -> None:
    why = cluster.state.no_create_topics()
    assert why is not None and "API 19 is not among" in why and "OffsetForLeaderEpoch 2-2" in why
    with admin_client(cluster) as admin:
        topic = create_topic(cluster, admin, "kcts-mock-topic", 2, 3)
        assert cluster.state.partition_state(topic, 1).isr == (1, 2, 3)
        with pytest.raises(TargetRefused, match="no topic configs"):
            create_topic(cluster, admin, "kcts-mock-config", 1, 3, {"cleanup.policy": "compact"})
        create_topic(cluster, admin, "kcts-mock-min-isr", 1, 3, {"min.insync.replicas": "2"})


def test_a_move_a_stop_and_a_pause_move_leadership_at_a_higher_epoch(cluster: LibrdkafkaMockCluster) -> None:
    with admin_client(cluster) as admin:
        topic = create_topic(cluster, admin, "kcts-mock-moves", 1, 3)
    before = cluster.state.partition_state(topic)
    to = next(b for b in cluster.broker_ids if b != before.leader)
    cluster.move_leader_to(topic, 0, to)
    moved = cluster.state.partition_state(topic)
    assert (moved.leader, moved.leader_epoch) == (to, before.leader_epoch + 1)
    cluster.stop_node(to)
    assert cluster.node_state(to) is NodeState.STOPPED
    failed_over = cluster.state.partition_state(topic)
    assert failed_over.leader != to and failed_over.leader_epoch == moved.leader_epoch + 1
    cluster.start_node(to)
    leader = failed_over.leader
    cluster.pause_node(leader)
    fenced = cluster.state.wait_for_partition(topic, 0, lambda s: s.leader != leader, "a running leader", timeout=15)
    assert fenced.leader_epoch == failed_over.leader_epoch + 1
    cluster.resume_node(leader)
    assert cluster.state.running_brokers() == cluster.broker_ids


def test_sigkill_of_the_runner_leaves_no_holder(tmp_path: Path) -> None:
    """SIGKILL the pytest process that holds the mock cluster: its holder dies with it
    (PR_SET_PDEATHSIG), and the reaper finds nothing of the session (the marker on its command line)."""
    hold = tmp_path / "hold.json"
    with open(tmp_path / "runner.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--backend", "librdkafka-mock",
             "--reports-dir", str(tmp_path / "reports"), str(REPO / "tests" / "sessions" / "hold_cluster.py")],
            cwd=REPO, env={**os.environ, "KCTS_HOLD_FILE": str(hold)}, stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        wait_until(hold.exists, 120, lambda: f"runner (pid {proc.pid}, exit {proc.poll()}) has not reported: "
                   f"{(tmp_path / 'runner.log').read_text(errors='replace')[-2000:]}")
    except BaseException:
        proc.kill()
        raise
    info = json.loads(hold.read_text())
    (holder,) = info["pids"]
    assert f"kcts.session={info['session']}".encode() in Path(f"/proc/{holder}/cmdline").read_bytes()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)

    def gone() -> bool:
        try:
            state = Path(f"/proc/{holder}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            state = "gone"
        return state in ("gone", "Z") and not tagged_pids(info["session"]) and not Path(info["root"]).exists()

    wait_until(gone, 15, lambda: f"holder {holder} alive, tagged {tagged_pids(info['session'])}, "
               f"root exists {Path(info['root']).exists()}")
