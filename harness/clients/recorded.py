"""A confluent-kafka producer and consumer that write every call they make in the history format
(harness.histories.history), in this process: what the live anomaly scenes give the anomaly checker.

Each is one process of the history (its own `<process>.jsonl`). The producer sends one record at a
time and waits for its delivery report, so every send is its own batch and its own Produce request;
the consumer polls one record per call (`poll`), or up to a number of them per call (`consume`).
Times are `time.monotonic_ns()` around the client call, as the format asks.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from harness import confluent
from harness.clients import txn_refusal
from harness.histories.history import HistoryWriter, Operation, OpType, Outcome, Polled, Sent
from harness.waiting import Owed, wait_until


@dataclass
class RecordingProducer:
    """Sends to partition 0 of `topic`, one record at a time, each written down as it ends."""

    producer: Producer
    history: HistoryWriter
    topic: str
    timeout: float = 30.0
    txn: str | None = None
    _txns: Iterator[int] = field(default_factory=itertools.count, init=False)

    @property
    def process(self) -> str:
        return self.history.process

    def send(self, value: str, partition: int = 0) -> Operation:
        """Produce `value` and wait for its delivery report: ok with its offset, or info with the error
        (librdkafka does not say whether a failed record was persisted; only a read may prove it)."""
        reports: list[tuple[KafkaError | None, Message]] = []
        start = time.monotonic_ns()
        self.producer.produce(self.topic, value.encode(), partition=partition,
                              on_delivery=lambda e, m: reports.append((e, m)))
        left = self.producer.flush(self.timeout)
        if left or not reports:
            raise AssertionError(f"{self.process}: no delivery report for {value} after {self.timeout}s")
        err, msg = reports[0]
        ok = err is None
        return self._write(OpType.SEND, Outcome.OK if ok else Outcome.INFO, start, sent=Sent(
            self.topic, partition, value, msg.offset() if ok else None, None if ok else err.name()))

    def send_many(self, values: list[str], between: Callable[[], None]) -> list[Operation]:
        """Produce each value without waiting for the one before to be acknowledged, calling
        `between()` after each but the last (a scene's wait for its request to leave), then wait for
        every delivery report. Written down in the order produced."""
        reports: dict[str, tuple[KafkaError | None, Message, int]] = {}

        def report(err: KafkaError | None, msg: Message) -> None:
            reports[msg.value().decode()] = (err, msg, time.monotonic_ns())

        starts = []
        for n, value in enumerate(values):
            if n:
                between()
            starts.append(time.monotonic_ns())
            self.producer.produce(self.topic, value.encode(), partition=0, on_delivery=report)
            self.producer.poll(0)
        left = self.producer.flush(self.timeout)
        if left or len(reports) != len(values):
            raise AssertionError(f"{self.process}: {left} of {values} without a delivery report after {self.timeout}s")
        ops = []
        for value, start in zip(values, starts, strict=True):
            err, msg, end = reports[value]
            ok = err is None
            ops.append(self._write(OpType.SEND, Outcome.OK if ok else Outcome.INFO, start, sent=Sent(
                self.topic, 0, value, msg.offset() if ok else None, None if ok else err.name()), end=end))
        return ops

    def begin(self) -> str:
        """Begin a transaction (the producer must be transactional, its transactions initialised)."""
        self.txn = f"{self.process}.t{next(self._txns)}"
        start = time.monotonic_ns()
        self.producer.begin_transaction()
        self._write(OpType.TXN_BEGIN, Outcome.OK, start)
        return self.txn

    def commit(self) -> None:
        start = time.monotonic_ns()
        self.producer.commit_transaction(self.timeout)
        self._write(OpType.TXN_COMMIT, Outcome.OK, start)
        self.txn = None

    def abort(self) -> None:
        start = time.monotonic_ns()
        self.producer.abort_transaction(self.timeout)
        self._write(OpType.TXN_ABORT, Outcome.OK, start)
        self.txn = None

    def _write(self, type: OpType, outcome: Outcome, start: int, sent: Sent | None = None,
               end: int | None = None) -> Operation:
        op = Operation(self.process, type, outcome, start, end or time.monotonic_ns(), self.txn, sent)
        self.history.write(op)
        return op


@dataclass
class RecordingConsumer:
    """Reads one partition of `topic` from an assigned offset (no group, no commits); every call that
    returned records is written down, as part of transaction `txn` when a scene sets it (a
    transaction that reads, then writes). Errors the client reported are kept apart, in `errors`:
    they are events, not reads."""

    consumer: Consumer
    history: HistoryWriter
    topic: str
    txn: str | None = None
    read: list[Polled] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def process(self) -> str:
        return self.history.process

    def assign(self, offset: int, partition: int = 0) -> None:
        self.consumer.assign([TopicPartition(self.topic, partition, offset)])

    def poll(self, timeout: float = 0.2, batch: int = 1) -> tuple[Polled, ...]:
        """One client call: `poll` for one record, or `consume` for up to `batch` (librdkafka waits
        for the whole batch or the timeout)."""
        start = time.monotonic_ns()
        if batch == 1:
            msg = self.consumer.poll(timeout)
            msgs = [] if msg is None else [msg]
        else:
            msgs = self.consumer.consume(batch, timeout)
        end = time.monotonic_ns()
        polled = []
        for m in msgs:
            if m.error() is not None:
                if m.error().code() != KafkaError._PARTITION_EOF:
                    self.errors.append(str(m.error()))
                continue
            value = m.value()
            polled.append(Polled(m.topic(), m.partition(), m.offset(), "" if value is None else value.decode(),
                                 m.leader_epoch()))
        if polled:
            self.history.write(Operation(self.process, OpType.POLL, Outcome.OK, start, end, self.txn,
                                         polled=tuple(polled)))
            self.read += polled
        return tuple(polled)

    def read_until(self, done: Callable[[RecordingConsumer], bool], what: str, timeout: float = 60.0,
                   batch: int = 1, poll_timeout: float = 0.2) -> None:
        """Poll until `done(self)` holds; a timeout names what was read and reported."""

        def step() -> bool:
            self.poll(poll_timeout, batch)
            return done(self)

        # The recorded clients build the scenes that test kcts's own anomaly checker (the protocol
        # proxy shapes what the broker serves them): no promise of the target is judged there, and a
        # read that never ends is the harness's to explain, not a refusal to skip past.
        wait_until(step, timeout, lambda: (
            f"{self.process} {what}: read {[(p.offset, p.value) for p in self.read[-5:]]} "
            f"({len(self.read)} in all), errors {self.errors[:3]}"), interval=0, owed=Owed.HARNESS)

    def read_through(self, offset: int, timeout: float = 60.0, batch: int = 1) -> None:
        """Poll until a record at `offset` or beyond was returned."""
        self.read_until(lambda c: any(p.offset >= offset for p in c.read), f"reading through offset {offset}",
                        timeout, batch)


@contextmanager
def recording_producer(config: dict[str, object], folder: Path, process: str, topic: str,
                       transactional_id: str | None = None) -> Iterator[RecordingProducer]:
    """A producer whose sends and transactions go to `<folder>/<process>.jsonl`; closed on exit.
    Transactional when `transactional_id` is given (its transactions initialised here)."""
    extra: dict[str, object] = {} if transactional_id is None else {"transactional.id": transactional_id}
    with HistoryWriter(folder, process) as history, confluent.producer({**config, **extra}) as producer:
        if transactional_id is not None:
            txn_refusal.init_transactions(producer, transactional_id, 30)
        yield RecordingProducer(producer, history, topic)


@contextmanager
def recording_consumer(config: dict[str, object], folder: Path, process: str, topic: str,
                       offset: int = 0, partition: int = 0) -> Iterator[RecordingConsumer]:
    """A consumer assigned to `topic`-`partition` at `offset`, its reads going to `<folder>/<process>.jsonl`."""
    settings = {"group.id": process, "enable.auto.commit": False, "auto.offset.reset": "earliest", **config}
    with HistoryWriter(folder, process) as history, confluent.consumer(settings) as consumer:
        c = RecordingConsumer(consumer, history, topic)
        c.assign(offset, partition)
        yield c
