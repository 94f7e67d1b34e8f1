"""Destroying confluent-kafka clients at a point the harness chooses.

A client left to the garbage collector is destroyed wherever the collector happens to run, which
can be one of librdkafka's own threads (an admin result callback runs Python there); destroying a
client from there aborts or crashes the process (confluent-kafka-python #1761, #2129). So every
client the harness makes in-process is closed by the code that made it: consumers with close(),
admin clients as context managers, producers with `close_producer`.
"""

from __future__ import annotations

from confluent_kafka import Producer


def close_producer(producer: Producer, timeout: float = 10.0) -> int:
    """Flush for up to `timeout`, purge what is still queued (close() would wait for it as long as
    message.timeout.ms), and destroy the client now. Returns how many messages were purged."""
    left = producer.flush(timeout)
    if left:
        producer.purge()
        producer.flush(1)
    producer.close()
    return left
