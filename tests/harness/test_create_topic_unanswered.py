"""A CreateTopics without an answer in time is no refusal: under load the answer comes late (a soak run
beside busy cores once read TimeoutError() as "the target refused to create topic"). The topic's
partitions appearing is the answer; a topic that never appears is the refused premise."""

from __future__ import annotations

import concurrent.futures
from typing import Any

import pytest

from harness.clients.admin import create_topic
from harness.cluster.state import PartitionState
from harness.errors import KctsError, TargetRefused
from tests.harness.test_epochless import ListedState, StateCluster


class SilentAdmin:
    """An admin client whose CreateTopics is never answered."""

    def create_topics(self, topics: list[Any]) -> dict[str, concurrent.futures.Future[None]]:
        return {t.topic: concurrent.futures.Future() for t in topics}


class LateTopic(ListedState):
    """No broker describes the topic for the first `absent` reads, then it is led and in sync."""

    def __init__(self, cluster: StateCluster, absent: int) -> None:
        super().__init__(cluster, [])
        self.absent = absent

    def no_create_topics(self) -> str | None:
        return None

    def partition_state(self, topic: str, partition: int = 0, broker: int | None = None) -> PartitionState:
        if self.absent > 0:
            self.absent -= 1
            raise KctsError(f"no running broker describes {topic}-{partition}")
        return PartitionState(topic, partition, 1, 0, (1, 2, 3), (1, 2, 3))


def LateTopicCluster(absent: int) -> StateCluster:
    cluster = StateCluster()
    cluster.state = LateTopic(cluster, absent)
    return cluster


def test_an_unanswered_create_is_answered_by_the_topic_appearing() -> None:
    cluster = LateTopicCluster(absent=3)
    assert create_topic(cluster, SilentAdmin(), "t", timeout=0.5) == "t"  # type: ignore[arg-type]


def test_an_unanswered_create_of_a_topic_that_never_appears_is_a_refused_premise() -> None:
    cluster = LateTopicCluster(absent=10**6)
    with pytest.raises(TargetRefused, match=r"did not create topic t: its CreateTopics got no answer in 0 s, and "
                                            r"then: .*no running broker describes t-0"):
        create_topic(cluster, SilentAdmin(), "t", timeout=0.5)  # type: ignore[arg-type]
