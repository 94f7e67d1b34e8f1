"""Where a pipeline stands, read from the brokers: group offsets, and open transactions on outputs."""

from __future__ import annotations

from confluent_kafka import ConsumerGroupTopicPartitions, IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

TIMEOUT = 10.0


def committed_offsets(admin: AdminClient, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offset per partition of `topic`; -1 where it has none."""
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(partitions)])
    result = admin.list_consumer_group_offsets([request], request_timeout=TIMEOUT)[group].result(TIMEOUT)
    return {tp.partition: tp.offset for tp in result.topic_partitions}


def end_offsets(admin: AdminClient, topic: str, partitions: int, committed: bool) -> dict[int, int]:
    """Per partition: the last stable offset (`committed`) or the high watermark."""
    level = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
    futures = admin.list_offsets(
        {TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)},
        isolation_level=level, request_timeout=TIMEOUT,
    )
    return {tp.partition: f.result(TIMEOUT).offset for tp, f in futures.items()}


def open_transactions(admin: AdminClient, topics: dict[str, int]) -> dict[str, list[tuple[int, int, int]]]:
    """Partitions whose last stable offset trails the high watermark: (partition, LSO, HW) per topic."""
    found: dict[str, list[tuple[int, int, int]]] = {}
    for topic, partitions in topics.items():
        lso = end_offsets(admin, topic, partitions, committed=True)
        hw = end_offsets(admin, topic, partitions, committed=False)
        lagging = [(p, lso[p], hw[p]) for p in range(partitions) if lso[p] != hw[p]]
        if lagging:
            found[topic] = lagging
    return found
