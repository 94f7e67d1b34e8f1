"""Leader changes that need no fault: reorder the replicas, then a preferred election.

`move_leader` makes another in-sync replica lead: by the target's own way where it has one (kfake's
control API, a profile's hook), else by making it the preferred replica (the same replicas,
reordered, so no data moves) and electing it. That works on any target that applies partition
reassignment, so the checks that only need "a partition with a past" run on external targets too;
faults are left to the checks about faults.
"""

from __future__ import annotations

from confluent_kafka import ElectionType, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from harness import confluent
from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.cluster.state import PartitionState, require_leader_epoch
from harness.cluster.target import API, HOOK, REASSIGNMENT
from harness.errors import NotSupported, TargetRefused
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.waiting import Owed, wait_until


def move_leader(
    cluster: Cluster, raw: RawClient, admin: AdminClient, topic: str, partition: int = 0, to: int | None = None,
    timeout: float = 30.0,
) -> PartitionState:
    """Make `to` (default: the first in-sync follower) lead; return the state once it leads at a higher epoch.

    The target's own way is used where its capabilities name one (kfake's control API, a profile's
    hook); reassignment and a preferred election otherwise. A target that cannot move this leader
    (one broker, no reassignment, a reordering it does not apply) raises `TargetRefused`: no
    verdict on the KIP, the check could not set up its premise.
    """
    caps = cluster.capabilities
    if caps.leader_moves is None and caps.replication is False:
        # One log per partition and no way of its own to move a leader (Tansu: every broker names
        # itself leader, at epoch 0): there is no leader change to ask for.
        raise NotSupported("moving a partition's leader", caps.no_replication)
    # The move is judged by its epoch rising: a leader without one is refused before anything moves.
    before = require_leader_epoch(cluster.state.partition_state(topic, partition))
    target = to if to is not None else _next_leader(cluster, before)
    how = caps.leader_moves
    if how in (API, HOOK):
        cluster.move_leader_to(topic, partition, target)
        return cluster.state.wait_for_partition(
            topic, partition, lambda s: s.leader == target and s.leader_epoch > before.leader_epoch,
            f"leader {target} above epoch {before.leader_epoch} after the target's own leader move ({how})", timeout,
        )
    _reorder(cluster, raw, topic, partition, target, before, timeout)
    return _elect_preferred_until(cluster, admin, topic, partition, target, before, timeout)


def move_leader_away(cluster: Cluster, topic: str, partition: int = 0) -> tuple[PartitionState, PartitionState]:
    """`move_leader` to the next in-sync replica with clients of its own: the partition (before, after)."""
    with confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        before = cluster.state.partition_state(topic, partition)
        return before, move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic, partition)


def _next_leader(cluster: Cluster, before: PartitionState) -> int:
    followers = [b for b in before.isr if b != before.leader]
    if followers:
        return followers[0]
    if len(cluster.broker_ids) < 2:
        raise TargetRefused(f"{cluster.target.label} runs {len(cluster.broker_ids)} broker: moving the leader of "
                            f"{before.topic}-{before.partition} needs a second one")
    raise TargetRefused(f"{before.topic}-{before.partition} has no in-sync follower to take the lead: {before}")


def _reorder(
    cluster: Cluster, raw: RawClient, topic: str, partition: int, target: int, before: PartitionState,
    timeout: float,
) -> None:
    order = [target, *(b for b in before.replicas if b != target)]
    for api in ("AlterPartitionReassignments", "ElectLeaders"):
        if not raw.supports(api, 0):
            raise TargetRefused(f"moving a leader by reassignment needs {api}, which {raw.host}:{raw.port} "
                                "does not offer in ApiVersions")
    caps = cluster.capabilities
    body = {"TimeoutMs": 10000, "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": partition,
                                                                            "Replicas": order}]}]}
    resp = raw.send("AlterPartitionReassignments", 0, body)
    code = resp["ErrorCode"] or resp["Responses"][0]["Partitions"][0]["ErrorCode"]
    if code:
        raise TargetRefused(f"reordering the replicas of {topic}-{partition} to {order} to move its leader: "
                            f"{errors.describe(code)}")
    try:
        cluster.state.wait_for_partition(
            topic, partition, lambda s: list(s.replicas) == order, f"replicas in order {order}",
            timeout if caps.leader_moves == REASSIGNMENT else 10.0,
        )
    except TargetRefused as exc:
        if caps.leader_moves == REASSIGNMENT:
            raise  # a target known to apply a reordering at once: the wait's refusal names the state it kept
        # Some targets answer success and apply nothing (kfake: "we don't actually perform
        # reassignment, just validate"); no leader can be moved there, so the premise is missing.
        raise TargetRefused(f"{cluster.target.label} accepted reordering {topic}-{partition} to {order} "
                            f"but did not apply it, so no leader can be moved there ({exc})") from None


def _elect_preferred_until(
    cluster: Cluster, admin: AdminClient, topic: str, partition: int, target: int, before: PartitionState,
    timeout: float,
) -> PartitionState:
    attempts: list[str] = []

    def elected() -> PartitionState | None:
        state = cluster.state.partition_state(topic, partition)
        if state.leader == target:
            require_leader_epoch(state)
        if state.leader == target and state.leader_epoch > before.leader_epoch:
            return state
        try:
            result = confluent.admin_result(
                admin, admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, partition)]), 10)
            attempts.append(f"elect_leaders(PREFERRED) -> {result}")
        except KafkaException as exc:  # ELECTION_NOT_NEEDED while the reorder settles: asked again
            attempts.append(repr(exc)[:200])
        return None

    return wait_until(
        elected, timeout,
        lambda: f"{topic}-{partition} leader {target} above epoch {before.leader_epoch}: "
        f"{cluster.state.partition_state(topic, partition)}; attempts {attempts[-3:]}",
        interval=0.2, owed=Owed.PREMISE,
    )


def elect_preferred(cluster: Cluster, admin: AdminClient, topic: str, partition: int = 0) -> PartitionState:
    """Give leadership back to the first replica (it must be in sync), as the brief's failback does."""
    state = require_leader_epoch(cluster.state.partition_state(topic, partition))
    preferred = state.replicas[0]
    if state.leader == preferred:
        return state
    cluster.state.wait_for_partition(topic, partition, lambda s: preferred in s.isr, f"{preferred} in sync")
    confluent.admin_result(admin, admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, partition)]), 30)
    return cluster.state.wait_for_partition(
        topic, partition, lambda s: s.leader == preferred and s.leader_epoch > state.leader_epoch,
        f"preferred leader {preferred} above epoch {state.leader_epoch}",
    )

