"""Partitions with a past: records written in several leader epochs, and what each election did.

Two histories feed the KIP-320 broker checks. `leader_moves` changes leaders by reassignment and
preferred election only (no fault, so it runs on any target). `nemesis_history` changes them the
hard ways: a clean stop, a crash, a failback, and a forced unclean election that truncates the old
leader. Every write is acknowledged by all replicas and lands in one known epoch: the partition's
epoch is read before and after it, and a write whose epoch moved under it is an error.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from harness.clients import raw as rr
from harness.clients.history import produce
from harness.cluster.base import Cluster, NodeState
from harness.errors import ClusterError
from harness.nemesis.faults import Crash, LeaderFailover
from harness.nemesis.leadership import elect_preferred, move_leader
from harness.nemesis.unclean import UncleanElection, force_unclean_election
from harness.protocol.client import RawClient
from harness.waiting import WaitTimeout, wait_until

RECORDS_PER_EPOCH = 5


@dataclass(frozen=True)
class Append:
    """Acknowledged writes [first, last], all appended while `leader` led at `epoch`."""

    first: int
    last: int
    epoch: int
    leader: int


@dataclass(frozen=True)
class Step:
    """The partition after one step: its leader, and the epoch each running broker's Metadata gives."""

    step: str
    leader: int
    epochs: dict[int, int]


@dataclass
class EpochHistory:
    name: str
    topic: str
    topic_id: uuid.UUID
    appends: list[Append] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    unclean: UncleanElection | None = None

    def append_dicts(self) -> list[dict[str, int]]:
        return [{"first": a.first, "last": a.last, "epoch": a.epoch} for a in self.appends]

    def step_dicts(self) -> list[dict[str, Any]]:
        return [{"step": s.step, "leader": s.leader, "epochs": s.epochs} for s in self.steps]


class HistoryWriter:
    """Writes and observes one partition's history through a raw connection to every broker."""

    def __init__(self, cluster: Cluster, raw: rr.RawConnector, producer: Producer, history: EpochHistory) -> None:
        self.cluster = cluster
        self.raw = raw
        self.producer = producer
        self.history = history
        self._clients: dict[int, RawClient] = {}

    def _client(self, broker: int) -> RawClient:
        if broker not in self._clients or self._clients[broker].closed:
            self._clients[broker] = self.raw(broker)
        return self._clients[broker]

    def write(self, tag: str, n: int = RECORDS_PER_EPOCH) -> None:
        topic = self.history.topic
        before = self.cluster.partition_state(topic)
        written = produce(self.producer, topic, [f"{tag}-{i}".encode() for i in range(n)])
        after = self.cluster.partition_state(topic)
        if written.failed or after.leader_epoch != before.leader_epoch:
            raise ClusterError(
                f"write '{tag}' to {topic} did not land in one epoch: epoch {before.leader_epoch} -> "
                f"{after.leader_epoch}, failed {written.failed[:3]}"
            )
        offsets = [w.offset for w in written.acked]
        self.history.appends.append(Append(min(offsets), max(offsets), before.leader_epoch, before.leader))

    def observe(self, step: str) -> None:
        """Record each running broker's own Metadata epoch, once they all agree (or as they stand after 15 s)."""
        topic = self.history.topic
        seen: dict[int, int] = {}
        leader = [-1]

        def agreed() -> bool:
            seen.clear()
            for b in self.cluster.running_brokers():
                p = rr.partition_metadata(self._client(b), topic)
                seen[b] = p["LeaderEpoch"]
                leader[0] = p["LeaderId"]
            return len(set(seen.values())) == 1

        try:
            wait_until(agreed, 15, lambda: f"{topic}: brokers' epochs {seen}")
        except WaitTimeout:
            pass  # the disagreement itself is recorded below; the Metadata check judges it
        self.history.steps.append(Step(step, leader[0], dict(seen)))

    def close(self) -> None:
        for c in self._clients.values():
            c.close()


def build_leader_moves(
    cluster: Cluster, admin: AdminClient, raw: rr.RawConnector, producer: Producer, topic: str, moves: int = 3
) -> EpochHistory:
    """Write in the first epoch, then `moves` times: move the leader to the next in-sync replica, write."""
    mover = raw(cluster.broker_ids[0])
    history = EpochHistory("leader-moves", topic, rr.topic_id(mover, topic))
    w = HistoryWriter(cluster, raw, producer, history)
    try:
        w.write("created")
        w.observe("created")
        for i in range(moves):
            state = move_leader(cluster, mover, admin, topic)
            w.observe(f"leader move to {state.leader}")
            w.write(f"move{i}")
    finally:
        w.close()
    return history


def build_nemesis_history(
    cluster: Cluster, admin: AdminClient, raw: rr.RawConnector, producer: Producer, divergent: Producer, topic: str
) -> EpochHistory:
    """Elections by clean stop, failback, crash and forced unclean election, with writes in each epoch.

    The topic has two replicas, min.insync.replicas=1 and unclean election enabled, as the
    unclean-election recipe needs. Every node runs again when this returns.
    """
    history = EpochHistory("nemesis", topic, rr.topic_id(raw(cluster.broker_ids[0]), topic))
    w = HistoryWriter(cluster, raw, producer, history)
    replicas = set(cluster.partition_state(topic).replicas)
    try:
        w.write("created")
        w.observe("created")

        old, _, _, _ = LeaderFailover(cluster, topic).run()
        w.observe(f"clean stop of leader {old}")
        w.write("after-clean-stop")
        cluster.start_node(old)
        cluster.wait_for_isr(topic, 0, replicas)

        state = elect_preferred(cluster, admin, topic)
        w.observe(f"failback to preferred leader {state.leader}")
        w.write("after-failback")

        crash = Crash(cluster, "leader", topic)
        crashed = crash.inject()
        before = history.steps[-1]
        cluster.wait_for_partition(
            topic, 0, lambda s: s.leader not in (-1, crashed) and s.leader_epoch > max(before.epochs.values()),
            f"a leader other than the crashed {crashed}",
        )
        w.observe(f"crash of leader {crashed}")
        w.write("after-crash")
        crash.heal()
        cluster.wait_for_isr(topic, 0, replicas)

        history.unclean = force_unclean_election(
            cluster, topic, write_divergent=lambda: produce(divergent, topic, [b"divergent"] * RECORDS_PER_EPOCH)
        )
        w.observe(f"unclean election of {history.unclean.new_leader}")
        w.write("after-unclean")
    finally:
        w.close()
        for b in cluster.broker_ids:
            if cluster.node_state(b) is not NodeState.RUNNING:
                cluster.start_node(b)
    return history
