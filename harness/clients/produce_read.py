"""Clients that write down what happened; assertions read these histories, not client internals."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from harness.errors import require_target
from harness.waiting import Owed, wait_until

T = TypeVar("T")


@dataclass(frozen=True)
class Delivery:
    """One produce attempt and its outcome, as the delivery report told it."""

    value: bytes
    acked: bool
    partition: int
    offset: int
    error: str | None = None


@dataclass(frozen=True)
class PartitionRecord:
    """One record `read_partition` read back, with the leader epoch its batch carried (None: not exposed)."""

    partition: int
    offset: int
    value: bytes
    leader_epoch: int | None


@dataclass
class ProduceHistory:
    writes: list[Delivery] = field(default_factory=list)

    @property
    def acked(self) -> list[Delivery]:
        return [w for w in self.writes if w.acked]

    @property
    def failed(self) -> list[Delivery]:
        return [w for w in self.writes if not w.acked]


def produce_one(
    producer: Producer, topic: str, value: bytes, partition: int,
    report: Callable[[KafkaError | None, Message], None], key: bytes | None = None, timestamp: int = 0,
) -> None:
    """Hand one record to the client (`timestamp`: its CreateTime in ms; 0, the client's clock), serving
    delivery reports while its local queue is full."""
    while True:
        try:
            producer.produce(topic, value, key, partition=partition, timestamp=timestamp, on_delivery=report)
            return
        except BufferError:
            producer.poll(0.05)


def retry_retriable(op: Callable[[], T], timeout: float) -> T:
    """Run a client call again while its error is retriable, until `timeout` has passed; at least once
    again, as harness.waiting.asked_again does (a first call that outlived the bound on a starved machine)."""
    deadline = time.monotonic() + timeout
    retried = False
    while True:
        try:
            return op()
        except KafkaException as exc:
            err: KafkaError = exc.args[0]
            if not err.retriable() or (retried and time.monotonic() > deadline):
                raise
            retried = True


def produce(
    producer: Producer, topic: str, values: list[bytes], partition: int = 0, timeout: float = 60.0,
    timestamps: list[int] | None = None,
) -> ProduceHistory:
    """Send every value (with its CreateTime from `timestamps` where given) and wait for every
    delivery report; returns the history of outcomes.

    A record still without a report after `timeout` is the target's refused premise, not a verdict:
    the check that wrote it judges outcomes, and "no answer yet" is none (under load it may be the
    machine's, so it must not become a FAIL)."""
    history = ProduceHistory()

    def report(err: KafkaError | None, msg: Message) -> None:
        if err is None:
            history.writes.append(Delivery(msg.value(), True, msg.partition(), msg.offset()))
        else:
            history.writes.append(Delivery(msg.value(), False, partition, -1, str(err)))

    for i, v in enumerate(values):
        produce_one(producer, topic, v, partition, report, timestamp=timestamps[i] if timestamps else 0)
    remaining = producer.flush(timeout)
    require_target(not remaining, f"{remaining} of {len(values)} records to {topic} had no delivery report after "
                                  f"{timeout} s")
    return history


def read_through(consumer: Consumer, last: int, what: str, timeout: float = 30.0, *, owed: Owed = Owed.PREMISE,
                 promise: str = "") -> list[tuple[int, int | None]]:
    """Poll a subscribed or assigned consumer until it returned the record at offset `last`; the
    (offset, leader epoch) of every record it returned on the way. `owed`: records the target does
    not serve refuse the scene's premise, unless serving them is what `promise` owes."""
    got: list[tuple[int, int | None]] = []

    def through() -> bool:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append((msg.offset(), msg.leader_epoch()))
        return bool(got) and got[-1][0] >= last

    wait_until(through, timeout, lambda: f"{what} reading through {last}: last {got[-3:]}", interval=0, owed=owed,
               promise=promise)
    return got


def read_partition(
    consumer: Consumer, topic: str, partition: int, start: int, end: int, timeout: float = 30.0, *,
    owed: Owed = Owed.PREMISE, promise: str = "",
) -> list[PartitionRecord]:
    """Every record of [start, end) on one partition, read with an assignment (no group). `owed`:
    records the target does not serve refuse the scene's premise, unless serving them is what
    `promise` owes (acknowledged records read back)."""
    consumer.assign([TopicPartition(topic, partition, start)])
    records: list[PartitionRecord] = []

    def done() -> bool:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            records.append(PartitionRecord(msg.partition(), msg.offset(), msg.value(), msg.leader_epoch()))
        elif msg is not None and msg.error().code() != KafkaError._PARTITION_EOF:
            raise AssertionError(f"consumer error reading {topic}-{partition}: {msg.error()}")
        return bool(records) and records[-1].offset >= end - 1

    if end > start:
        wait_until(done, timeout, lambda: f"read {len(records)} records of {topic}-{partition} [{start}, {end}), "
                   f"last offset {records[-1].offset if records else None}", interval=0, owed=owed, promise=promise)
    consumer.unassign()
    return [r for r in records if r.offset < end]
