"""A broker whose Metadata gives a leader at no epoch (-1): the scenes that need an epoch refuse their
premise at once, naming the check that judges the epoch, instead of waiting 30 s for it to rise."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.cluster.base import Cluster, NodeState
from harness.cluster.state import METADATA_EPOCH_CHECK, ClusterState, PartitionState, require_leader_epoch
from harness.cluster.target import parse
from harness.errors import TargetRefused
from harness.nemesis.faults import LeaderFailover
from harness.nemesis.leadership import move_leader


class ListedState(ClusterState):
    """Partition state from a list of answers, one per read (the last repeats)."""

    def __init__(self, cluster: Cluster, states: list[PartitionState]) -> None:
        super().__init__(cluster)
        self.states = states

    def partition_state(self, topic: str, partition: int = 0, broker: int | None = None) -> PartitionState:
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]


class StateCluster(Cluster):
    """A cluster of three running brokers whose partition state is `ListedState`'s."""

    def __init__(self, *states: PartitionState) -> None:
        self.target = parse("external:127.0.0.1:1")
        self.version = "stub"
        self.stopped: list[int] = []
        self.state = ListedState(self, list(states))

    def start(self) -> StateCluster:
        return self

    def close(self) -> None:
        pass

    @property
    def bootstrap_servers(self) -> str:
        return "127.0.0.1:1"

    @property
    def broker_ids(self) -> list[int]:
        return [1, 2, 3]

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        return "127.0.0.1", broker_id

    def node_state(self, broker_id: int) -> NodeState:
        return NodeState.RUNNING

    def start_node(self, broker_id: int) -> None:
        pass

    def stop_node(self, broker_id: int) -> None:
        self.stopped.append(broker_id)

    def kill_node(self, broker_id: int) -> None:
        pass

    def pause_node(self, broker_id: int) -> None:
        pass

    def resume_node(self, broker_id: int) -> None:
        pass


def _state(leader: int, epoch: int, isr: tuple[int, ...] = (1, 2, 3)) -> PartitionState:
    return PartitionState("t", 0, leader, epoch, (1, 2, 3), isr)


def test_a_leader_at_no_epoch_is_refused_naming_the_metadata_check() -> None:
    assert require_leader_epoch(_state(1, 0)).leader_epoch == 0
    assert require_leader_epoch(_state(-1, -1)).leader == -1, "no leader: nothing to say of its epoch"
    with pytest.raises(TargetRefused, match=rf"Metadata v12 carries no leader epoch \(-1\) for t-0.*KIP-320.*"
                                            rf"{METADATA_EPOCH_CHECK}"):
        require_leader_epoch(_state(2, -1))


def test_a_wait_for_an_epoch_to_rise_ends_at_once_when_the_leader_has_none() -> None:
    cluster = StateCluster(_state(1, -1), _state(1, -1), _state(2, -1))
    started = time.monotonic()
    with pytest.raises(TargetRefused, match=METADATA_EPOCH_CHECK):
        cluster.state.wait_for_partition("t", 0, lambda s: s.leader == 2 and s.leader_epoch > -1, "leader 2 above -1",
                                         30)
    assert time.monotonic() - started < 5, "decided from the answer, not by waiting"


def test_a_wait_for_anything_else_still_waits_and_holds_on_an_epochless_target() -> None:
    cluster = StateCluster(_state(1, -1, (1, 2)), _state(1, -1, (1, 2, 3)))
    assert cluster.state.wait_for_isr("t", 0, {1, 2, 3}, 5).isr == (1, 2, 3)
    # Refused at its deadline, as any ISR that never comes, not at once for the missing epoch.
    with pytest.raises(TargetRefused, match=r"did not get there within 0.3s; last state: t-0 ISR == \[1, 2, 3\]"):
        StateCluster(_state(1, -1, (1, 2))).state.wait_for_isr("t", 0, {1, 2, 3}, 0.3)


def test_leader_moves_and_failovers_are_refused_before_anything_moves() -> None:
    cluster = StateCluster(_state(1, -1))
    nothing: Any = None  # never reached: the refusal comes first
    with pytest.raises(TargetRefused, match=METADATA_EPOCH_CHECK):
        move_leader(cluster, nothing, nothing, "t")
    with pytest.raises(TargetRefused, match=METADATA_EPOCH_CHECK):
        LeaderFailover(cluster, "t").run()
    assert cluster.stopped == [], "no node was stopped for a scene that could not be judged"
