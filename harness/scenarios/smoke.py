"""Smoke situations: writes read back on a healthy cluster, across a clean failover, across an unclean election.

Each writes with a confluent-kafka producer, reads the partition back with an assigned consumer
(no group membership; `group` only names the client), and returns the writes' histories, what was
read, and what the fault did.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness import confluent
from harness.clients.produce_read import PartitionRecord, ProduceHistory, produce, read_partition
from harness.cluster.base import Cluster
from harness.nemesis.faults import LeaderFailover
from harness.nemesis.leadership import move_leader_away
from harness.nemesis.unclean import UncleanElection, force_unclean_election
from harness.scenarios.premises import require_idempotence


def values(tag: str, n: int) -> list[bytes]:
    return [f"{tag}-{i:05d}".encode() for i in range(n)]


def _consumer_config(cluster: Cluster, group: str) -> dict[str, object]:
    return {**cluster.client_config(), "group.id": group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "enable.partition.eof": True}


@dataclass(frozen=True)
class PartitionRoundTrip:
    """What was sent to one partition, what the producer was told, and what a consumer read back."""

    partition: int
    sent: list[bytes]
    written: ProduceHistory
    read: list[PartitionRecord]


def acknowledged_reads(cluster: Cluster, topic: str, group: str, partitions: int = 3, n: int = 200) -> list[
        PartitionRoundTrip]:
    """Produce `n` records with an idempotent acks=all producer to each partition in turn, and read each
    partition back from 0. Idempotent: a send retried after its first copy was written (a response lost
    to a leader that was fenced, or that the machine starved past its session timeout) is not written
    twice, so the log holds each record once at its acknowledged offset; without it, the client's retry
    writes a second copy, which the protocol allows."""
    require_idempotence(cluster)
    trips = []
    with (confluent.producer({**cluster.client_config(), "acks": "all", "enable.idempotence": True}) as producer,
          confluent.consumer(_consumer_config(cluster, group)) as consumer):
        for p in range(partitions):
            sent = values(f"p{p}", n)
            written = produce(producer, topic, sent, partition=p)
            got = read_partition(consumer, topic, p, 0, len(sent)) if not written.failed else []
            trips.append(PartitionRoundTrip(p, sent, written, got))
    return trips


@dataclass(frozen=True)
class CleanFailover:
    """Writes before and after a clean stop of the leader, the election, and the log read back
    up to the last acknowledged offset."""

    first: ProduceHistory
    second: ProduceHistory
    old: int
    old_epoch: int
    new: int
    new_epoch: int
    log: list[PartitionRecord]


def clean_failover(cluster: Cluster, topic: str, group: str, n: int = 300) -> CleanFailover:
    """An idempotent acks=all producer writes `n` records, the leader stops cleanly, it writes `n` more;
    the old leader starts again and the log is read back (`topic`: min.insync.replicas=2)."""
    require_idempotence(cluster)
    with confluent.producer({**cluster.client_config(), "acks": "all", "enable.idempotence": True}) as producer:
        first = produce(producer, topic, values("before", n))
        if cluster.capabilities.fault_control:
            old, old_epoch, new, new_epoch = LeaderFailover(cluster, topic).run()
        else:  # a target whose nodes are not ours: a leader move is the clean failover
            before, after = move_leader_away(cluster, topic)
            old, old_epoch, new, new_epoch = before.leader, before.leader_epoch, after.leader, after.leader_epoch
        second = produce(producer, topic, values("after", n))
    if cluster.capabilities.fault_control:
        cluster.start_node(old)
    acked = first.acked + second.acked
    log: list[PartitionRecord] = []
    if acked and not (first.failed or second.failed):  # else there is nothing to judge but the failed writes
        with confluent.consumer(_consumer_config(cluster, group)) as consumer:
            log = read_partition(consumer, topic, 0, 0, max(w.offset for w in acked) + 1)
    return CleanFailover(first, second, old, old_epoch, new, new_epoch, log)


@dataclass(frozen=True)
class UncleanLoss:
    """Replicated writes, the divergent writes only the old leader held, the new leader's writes,
    what the election did, and the log read back through the last of the new leader's writes."""

    safe: ProduceHistory
    divergent: list[ProduceHistory]
    after: ProduceHistory
    election: UncleanElection
    log: list[PartitionRecord]


def unclean_loss(cluster: Cluster, topic: str, group: str) -> UncleanLoss:
    """100 records with acks=all, then the unclean-election recipe with 50 acks=1 records written to the
    lone leader, then 100 records to the new leader (`topic`: 2 replicas, min.insync.replicas=1,
    unclean election enabled)."""
    config = cluster.client_config()
    divergent: list[ProduceHistory] = []
    with confluent.producer({**config, "acks": "all"}) as safe_writer:
        safe = produce(safe_writer, topic, values("replicated", 100))
    with confluent.producer({**config, "acks": "1", "enable.idempotence": False}) as divergent_writer:
        election = force_unclean_election(
            cluster, topic,
            write_divergent=lambda: divergent.append(produce(divergent_writer, topic, values("divergent", 50))),
        )
    with confluent.producer({**config, "acks": "all"}) as new_writer:
        after = produce(new_writer, topic, values("new-leader", 100))
    log: list[PartitionRecord] = []
    if after.acked:
        with confluent.consumer(_consumer_config(cluster, group)) as consumer:
            log = read_partition(consumer, topic, 0, 0, after.acked[-1].offset + 1)
    return UncleanLoss(safe, divergent, after, election, log)
