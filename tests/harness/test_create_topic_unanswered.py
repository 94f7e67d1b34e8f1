"""A CreateTopics without an answer in time is no refusal: under load the answer comes late (a soak run
beside busy cores once read TimeoutError() as "the target refused to create topic"). The topic's
partitions appearing is the answer; a topic that never appears is the refused premise. Nor is
INVALID_REPLICATION_FACTOR while every broker is fenced (a gate run once read a side cluster's one broker,
fenced for a missed heartbeat, as a refusal): it is asked again within the bound."""

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

    def list_topics(self, timeout: float) -> None:
        """What harness.confluent.admin_result asks while it waits: no answer here either."""


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


class FencedAdmin:
    """An admin client whose CreateTopics is answered INVALID_REPLICATION_FACTOR `fenced` times, as Apache
    Kafka answers while every broker is fenced (one that missed its session timeout under load), then
    created."""

    def __init__(self, fenced: int) -> None:
        self.fenced = fenced
        self.asked = 0

    def create_topics(self, topics: list[Any]) -> dict[str, concurrent.futures.Future[None]]:
        self.asked += 1
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        if self.asked <= self.fenced:
            done.set_exception(Exception('KafkaError{code=INVALID_REPLICATION_FACTOR,val=38,str="Unable to replicate '
                                         'the partition 1 time(s): All brokers are currently fenced."}'))
        else:
            done.set_result(None)
        return {t.topic: done for t in topics}


def test_a_create_answered_while_every_broker_is_fenced_is_asked_again() -> None:
    admin = FencedAdmin(fenced=2)
    assert create_topic(LateTopicCluster(absent=0), admin, "t", timeout=5) == "t"  # type: ignore[arg-type]
    assert admin.asked == 3


def test_too_few_unfenced_brokers_past_the_bound_is_the_refused_premise() -> None:
    admin = FencedAdmin(fenced=10**6)
    with pytest.raises(TargetRefused, match=r"INVALID_REPLICATION_FACTOR.*All brokers are currently fenced.*"
                                            r"\(the same for \d+ asks over at least 1 s\)"):
        create_topic(LateTopicCluster(absent=0), admin, "t", timeout=1)  # type: ignore[arg-type]
    assert admin.asked >= 2
