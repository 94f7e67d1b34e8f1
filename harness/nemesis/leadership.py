"""Leader changes that need no fault: reorder the replicas, then a preferred election.

`move_leader` makes another in-sync replica the preferred one (the same replicas, reordered, so
no data moves) and elects it. It works on any target that allows partition reassignment, so the
checks that only need "a partition with a past" run on external targets too; faults are left to
the checks about faults.
"""

from __future__ import annotations

from confluent_kafka import ElectionType, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from harness.cluster.base import Cluster, PartitionState
from harness.errors import TargetRefused
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.waiting import WaitTimeout, wait_until


def move_leader(
    cluster: Cluster, raw: RawClient, admin: AdminClient, topic: str, partition: int = 0, to: int | None = None,
    timeout: float = 30.0,
) -> PartitionState:
    """Make `to` (default: the first in-sync follower) lead; return the state once it leads at a higher epoch.

    A target that refuses the reordering raises `TargetRefused` (no verdict on the KIP: the check
    could not set up its premise).
    """
    before = cluster.partition_state(topic, partition)
    target = to if to is not None else next(b for b in before.isr if b != before.leader)
    order = [target, *(b for b in before.replicas if b != target)]
    if not raw.supports("AlterPartitionReassignments", 0):
        raise TargetRefused(f"moving a leader needs AlterPartitionReassignments, which {raw.host}:{raw.port} "
                            "does not offer")
    caps = cluster.capabilities
    body = {"TimeoutMs": 10000, "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": partition,
                                                                            "Replicas": order}]}]}
    resp = raw.send("AlterPartitionReassignments", 0, body)
    code = resp["ErrorCode"] or resp["Responses"][0]["Partitions"][0]["ErrorCode"]
    if code:
        raise TargetRefused(f"reordering the replicas of {topic}-{partition} to {order} to move its leader: "
                            f"{errors.describe(code)}")
    try:
        cluster.wait_for_partition(
            topic, partition, lambda s: list(s.replicas) == order, f"replicas in order {order}",
            timeout if caps.owned and caps.fault_control else 10.0,
        )
    except WaitTimeout as exc:
        if caps.leader_moves:
            raise  # a target known to apply a reordering at once: not doing so is a failure here
        # Some targets answer success and apply nothing (kfake: "we don't actually perform
        # reassignment, just validate"); no leader can be moved there, so the premise is missing.
        raise TargetRefused(f"{cluster.target.label} accepted reordering {topic}-{partition} to {order} "
                            f"but did not apply it, so no leader can be moved there ({exc})") from None
    attempts: list[str] = []

    def elected() -> PartitionState | None:
        state = cluster.partition_state(topic, partition)
        if state.leader == target and state.leader_epoch > before.leader_epoch:
            return state
        try:
            result = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, partition)]).result(timeout=10)
            attempts.append(f"elect_leaders(PREFERRED) -> {result}")
        except KafkaException as exc:  # ELECTION_NOT_NEEDED while the reorder settles: asked again
            attempts.append(repr(exc)[:200])
        return None

    return wait_until(
        elected, timeout,
        lambda: f"{topic}-{partition} leader {target} above epoch {before.leader_epoch}: "
        f"{cluster.partition_state(topic, partition)}; attempts {attempts[-3:]}",
        interval=0.2,
    )


def elect_preferred(cluster: Cluster, admin: AdminClient, topic: str, partition: int = 0) -> PartitionState:
    """Give leadership back to the first replica (it must be in sync), as the brief's failback does."""
    state = cluster.partition_state(topic, partition)
    preferred = state.replicas[0]
    if state.leader == preferred:
        return state
    cluster.wait_for_partition(topic, partition, lambda s: preferred in s.isr, f"{preferred} in sync")
    admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, partition)]).result(timeout=30)
    return cluster.wait_for_partition(
        topic, partition, lambda s: s.leader == preferred and s.leader_epoch > state.leader_epoch,
        f"preferred leader {preferred} above epoch {state.leader_epoch}",
    )

