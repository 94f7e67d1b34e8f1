"""What a read_committed consumer sees of a partition once no transaction on it is open any more."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, KafkaError, TopicPartition

from harness.clients.admin import QUIET
from harness.waiting import wait_until


def committed_values(config: dict[str, str], topic: str, partition: int = 0, timeout: float = 30.0) -> list[bytes]:
    """Values visible to read_committed, read until the consumer's position reaches the high watermark.

    The position passes the high watermark's last offset only once the last stable offset got there,
    i.e. once every transaction on the partition has its commit or abort marker.
    """
    consumer = Consumer({
        **config, **QUIET, "group.id": f"kcts-read-committed-{uuid.uuid4().hex[:8]}",
        "isolation.level": "read_committed", "enable.auto.commit": False, "auto.offset.reset": "earliest",
        # The last fetch before the end waits this long for data that will not come.
        "fetch.wait.max.ms": 50,
    })
    tp = TopicPartition(topic, partition, 0)
    consumer.assign([tp])
    values: list[bytes] = []
    state: dict[str, object] = {}

    def caught_up() -> bool:
        batch = consumer.consume(1000, 0.2)
        for msg in batch:
            err = msg.error()
            if err is None:
                values.append(msg.value())
            elif err.code() != KafkaError._PARTITION_EOF:
                raise AssertionError(f"read_committed consumer error on {topic}-{partition}: {err}")
        if batch:
            return False  # drain first: the watermark query queues behind the consumer's long-poll fetch
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=5, cached=False)
        position = consumer.position([TopicPartition(topic, partition)])[0].offset
        state.update(high_watermark=high, position=position, values=len(values))
        return high == 0 or position >= high

    try:
        wait_until(caught_up, timeout, lambda: f"read_committed of {topic}-{partition}: {state}", interval=0)
    finally:
        consumer.close()
    return values
