"""while_steady: a probe judged together is asked again when a leader moved during it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.cluster.state import PartitionState
from harness.errors import TargetRefused
from harness.scenarios.steady import STEADY_TRIES, while_steady


class Views:
    """Broker views that change at the reads named in `moves` (counted from 0)."""

    def __init__(self, moves: set[int]) -> None:
        self.moves, self.reads, self.epoch = moves, 0, 3

    def running_brokers(self) -> list[int]:
        return [1, 2]

    def partition_state(self, topic: str, partition: int, broker: int) -> PartitionState:
        if broker == 2 and self.reads in self.moves:
            self.epoch += 1
        if broker == 2:
            self.reads += 1
        return PartitionState(topic, partition, 3, self.epoch, (1, 2, 3), (1, 2, 3))


def cluster(moves: set[int]) -> SimpleNamespace:
    return SimpleNamespace(state=Views(moves))


def test_a_probe_during_which_nothing_moved_is_asked_once() -> None:
    asked: list[int] = []
    assert while_steady(cluster(set()), "t", lambda: asked.append(1) or "answers", "the probe") == "answers"
    assert asked == [1]


def test_a_probe_across_a_leader_move_is_asked_again() -> None:
    asked: list[int] = []
    # the first try's "after" read (read 1) sees the move; the second try is steady
    assert while_steady(cluster({1}), "t", lambda: asked.append(1) or len(asked), "the probe") == 2


def test_a_partition_that_moves_during_every_try_refuses_the_premise_with_the_views() -> None:
    moves = {2 * i + 1 for i in range(STEADY_TRIES)}
    with pytest.raises(TargetRefused) as exc:
        while_steady(cluster(moves), "t", lambda: None, "Metadata at every version")
    text = str(exc.value)
    assert f"during each of {STEADY_TRIES} tries" in text
    assert "broker 2: leader 3 epoch 3" in text and "broker 2: leader 3 epoch 4" in text
