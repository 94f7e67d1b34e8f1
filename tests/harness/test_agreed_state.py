"""After a heal the broker that was cut off answers from its stale view for a while: a scene that
reads the settled state asks every broker and waits for them to agree (a CI run read the cut-off
leader's "I still lead at epoch 0" and failed a correct broker)."""

from __future__ import annotations

import pytest

from harness.cluster.state import PartitionState
from harness.errors import TargetRefused
from tests.harness.test_epochless import ListedState, StateCluster

STALE = PartitionState("t", 0, 1, 0, (1, 2, 3), (1, 2, 3))
MOVED = PartitionState("t", 0, 2, 1, (1, 2, 3), (1, 2, 3))


class Views(ListedState):
    """Each broker's answers from its own list, one per read (the last repeats)."""

    def __init__(self, cluster: StateCluster, views: dict[int, list[PartitionState]]) -> None:
        super().__init__(cluster, [STALE])
        self.views = views

    def partition_state(self, topic: str, partition: int = 0, broker: int | None = None) -> PartitionState:
        answers = self.views[broker if broker is not None else 1]
        return answers.pop(0) if len(answers) > 1 else answers[0]


def ViewsCluster(views: dict[int, list[PartitionState]]) -> StateCluster:
    cluster = StateCluster(STALE)
    cluster.state = Views(cluster, views)
    return cluster


def in_sync(s: PartitionState) -> bool:
    return len(s.isr) == 3


def test_the_first_broker_alone_may_give_a_stale_view() -> None:
    cluster = ViewsCluster({1: [STALE], 2: [MOVED], 3: [MOVED]})
    assert cluster.state.wait_for_partition("t", 0, in_sync, "3 in sync", 1) == STALE


def test_agreed_waits_until_the_cut_off_broker_has_caught_up() -> None:
    cluster = ViewsCluster({1: [STALE, STALE, MOVED], 2: [MOVED], 3: [MOVED]})
    assert cluster.state.wait_for_partition("t", 0, in_sync, "3 in sync", 5, agreed=True) == MOVED


def test_brokers_that_never_agree_refuse_the_premise_naming_each_view() -> None:
    cluster = ViewsCluster({1: [STALE], 2: [MOVED], 3: [MOVED]})
    with pytest.raises(TargetRefused, match=r"the brokers disagree: broker 1: leader 1@0 .*broker 2: leader 2@1"):
        cluster.state.wait_for_partition("t", 0, in_sync, "3 in sync", 1, agreed=True)
