"""Force an unclean leader election that really diverges the logs, and report what it cost.

Recipe (shared/KAFKA-NOTES.md): with the controller always up and the topic created with
unclean.leader.election.enable=true and min.insync.replicas=1,
1. stop every follower cleanly, so the ISR shrinks to the leader A alone;
2. the caller writes records that only A has (acks=1): they are the divergent suffix;
3. stop A; start one former follower B and elect it uncleanly: B leads a log without the suffix;
4. start A again: it truncates the suffix to follow B.
The result is verified, not assumed: A's log end offset is read before it stops and after it
rejoins, and the truncated range is exactly the records A had beyond B's log end.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from confluent_kafka import ElectionType, TopicPartition

from harness import confluent, progress
from harness.cluster.base import Cluster, NodeState
from harness.cluster.state import PartitionState, require_leader_epoch
from harness.errors import ClusterError
from harness.histories.epochs import UncleanElection
from harness.waiting import Owed, wait_until


def force_unclean_election(
    cluster: Cluster,
    topic: str,
    partition: int = 0,
    write_divergent: Callable[[], None] | None = None,
    timeout: float = 60.0,
) -> UncleanElection:
    """Run the recipe on `topic`-`partition`; `write_divergent` writes to the lone leader (acks=1).

    Every broker stopped here is running again on return, and the old leader is back in the ISR.
    """
    before = cluster.state.wait_for_partition(
        topic, partition, lambda s: len(s.isr) >= 2 and s.leader >= 0, "a leader and at least one in-sync follower"
    )
    old_leader = before.leader
    followers = [b for b in before.replicas if b != old_leader]
    new_leader = next(b for b in followers if b in before.isr)
    # In the ISR is not the same as caught up: wait until the future leader holds everything the
    # leader has, so that only what is written from here on can diverge.
    def log_ends() -> tuple[int, int]:
        return tuple(cluster.state.log_end_offset(topic, partition, b) for b in (new_leader, old_leader))  # type: ignore[return-value]

    wait_until(
        lambda: len(set(log_ends())) == 1,
        timeout,
        lambda: f"{topic}-{partition}: follower {new_leader} and leader {old_leader} log ends {log_ends()}",
        owed=Owed.PREMISE,
    )
    progress.step(f"nemesis: stopping followers {followers} of {topic}-{partition}, leaving leader {old_leader} "
                  "alone in the ISR")
    for b in followers:
        cluster.stop_node(b)
    # The epoch the lone leader writes at: before 3.6 the KRaft controller bumped the leader epoch when
    # a stopped follower left the ISR (KAFKA-15021 stopped that), so it may be above `before`'s.
    alone = cluster.state.wait_for_isr(topic, partition, {old_leader})
    if write_divergent is not None:
        write_divergent()
    leo_before = cluster.state.log_end_offset(topic, partition, old_leader)
    log_mark = cluster.node_log_size(old_leader)

    progress.step(f"nemesis: stopping leader {old_leader}; electing broker {new_leader} uncleanly")
    cluster.stop_node(old_leader)
    cluster.start_node(new_leader)
    state = elect_unclean(cluster, topic, partition, new_leader, alone.leader_epoch, timeout)
    divergence = cluster.state.log_end_offset(topic, partition, new_leader)

    progress.step(f"nemesis: broker {new_leader} leads at epoch {state.leader_epoch}; restarting {old_leader}, "
                  f"which truncates from offset {divergence}")
    cluster.start_node(old_leader)
    cluster.state.wait_for_partition(
        topic, partition, lambda s: old_leader in s.isr, f"old leader {old_leader} back in the ISR", timeout
    )
    leo_after = cluster.state.log_end_offset(topic, partition, old_leader)
    leader_leo = cluster.state.log_end_offset(topic, partition, new_leader)
    for b in followers:
        if cluster.node_state(b) is not NodeState.RUNNING:
            cluster.start_node(b)
    if leo_after != leader_leo:
        raise ClusterError(
            f"old leader {old_leader} rejoined {topic}-{partition} with log end {leo_after}, "
            f"but the leader {new_leader} has {leader_leo}"
        )
    return UncleanElection(
        topic, partition, old_leader, new_leader, alone.leader_epoch, state.leader_epoch,
        divergence, leo_before, leo_after, logged_truncation(cluster, old_leader, topic, partition, log_mark),
    )


def elect_unclean(
    cluster: Cluster, topic: str, partition: int, candidate: int, epoch: int, timeout: float
) -> PartitionState:
    attempts: list[str] = []
    with confluent.admin(cluster.client_config()) as admin:

        def elected() -> PartitionState | None:
            state = cluster.state.partition_state(topic, partition)
            if state.leader == candidate:
                require_leader_epoch(state)
            if state.leader == candidate and state.leader_epoch > epoch:
                return state
            if cluster.elect_unclean_itself(topic, partition, candidate):  # the operator's own command
                attempts.append("the target's own unclean election command ran")
                return None
            try:
                confluent.admin_result(
                    admin, admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition(topic, partition)]), 10)
                attempts.append("elect_leaders(UNCLEAN) accepted")
            except Exception as exc:  # noqa: BLE001 - ELECTION_NOT_NEEDED etc. are retried, kept as evidence
                attempts.append(repr(exc)[:200])
            return None

        return wait_until(
            elected, timeout,
            lambda: f"{topic}-{partition}: {cluster.state.partition_state(topic, partition)}; "
                    f"attempts: {attempts[-3:]}",
            interval=0.5, owed=Owed.PREMISE,
        )


def logged_truncation(cluster: Cluster, broker: int, topic: str, partition: int, since: int) -> int | None:
    """The offset the broker's replica fetcher says it truncated to, "due to leader epoch"."""
    text = cluster.node_log(broker, since)
    pattern = (
        rf"Truncating partition {re.escape(topic)}-{partition} with TruncationState\(offset=(\d+), "
        r"completed=true\) due to leader epoch"
    )
    found = re.findall(pattern, text or "")
    return int(found[-1]) if found else None
