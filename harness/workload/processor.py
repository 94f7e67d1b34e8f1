"""The confluent-kafka exactly-once processor: consume, transform, produce to every output, commit.

Each instance is one consumer of the group and one transactional producer. Per batch it opens a
transaction, writes every input record to each output topic (same key, same partition number,
its own stage), adds the consumed positions with `send_offsets_to_transaction`, and commits.
Every `abort_every`-th transaction is written with flag `A` and aborted on purpose; after any
abort the consumer goes back to the group's committed offsets and the batch is processed again.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from harness.clients.history import produce_one, retry_retriable
from harness.workload import records
from harness.workload.history import EventLog, WriteLog
from harness.workload.logs import client_logging

TXN_TIMEOUT_MS = 15000
HANG_GRACE_S = 10.0


class ClientHang(Exception):
    """A client call blocked well past its own timeout."""



@dataclass
class ProcessorHistory:
    """Shared by every instance of one processor group."""

    writes: WriteLog = field(default_factory=WriteLog)
    events: EventLog = field(default_factory=EventLog)
    committed_txns: int = 0
    deliberate_aborts: int = 0
    error_aborts: int = 0
    aborted_records: int = 0  # records written into transactions aborted on purpose
    client_hangs: int = 0  # calls that blocked past their timeout (producer replaced)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def bump(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)


class TxnProcessor(threading.Thread):
    def __init__(
        self,
        name: str,
        client_config: dict[str, str],
        group: str,
        input_topic: str,
        outputs: list[str],
        history: ProcessorHistory,
        abort_every: int = 5,
        max_batch: int = 100,
        pace: float = 0.0,
        timeout: float = 15.0,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.client_config = client_config
        self.group = group
        self.input_topic = input_topic
        self.outputs = outputs
        self.history = history
        self.abort_every = abort_every
        self.max_batch = max_batch
        self.pace = pace
        self.timeout = timeout
        self.transactional_id = f"{group}-{name}"
        self.halt = threading.Event()
        self.error: BaseException | None = None
        self.ready = threading.Event()
        self.txns = 0

    # -- lifecycle -----------------------------------------------------------------------
    def stop(self, timeout: float = 90.0) -> None:
        self.halt.set()
        self.join(timeout)
        if self.is_alive():
            frame = sys._current_frames().get(self.ident or 0)
            stack = "".join(traceback.format_stack(frame)[-6:]) if frame is not None else "?"
            mine = [e for e in self.history.events.events if e["who"] == self.name][-8:]
            raise AssertionError(
                f"processor {self.name} did not stop within {timeout}s; its events {mine}; it is at:\n{stack}"
            )

    def run(self) -> None:
        consumer = Consumer({
            **self.client_config, **client_logging(),
            "group.id": self.group,
            "client.id": self.name,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "max.poll.interval.ms": 60000,
            "fetch.wait.max.ms": 50,
            "topic.metadata.refresh.interval.ms": 5000,
        })
        producer: Producer | None = None
        try:
            consumer.subscribe([self.input_topic], on_assign=self._assigned, on_revoke=self._revoked)
            producer = self._new_producer()
            self.ready.set()
            while not self.halt.is_set():
                batch = [m for m in consumer.consume(self.max_batch, 0.2) if self._usable(m)]
                if batch:
                    producer = self._process(consumer, producer, batch)
                    if self.pace:
                        self.halt.wait(self.pace)
        except BaseException as exc:  # noqa: BLE001 - kept for the test to raise, with the event log
            self.error = exc
            self.history.events.add(self.name, "crashed", error=repr(exc))
        finally:
            self.ready.set()
            consumer.close()
            if producer is not None:
                producer.close()

    def _new_producer(self) -> Producer:
        producer = Producer({
            **self.client_config, **client_logging(),
            "transactional.id": self.transactional_id,
            "client.id": self.name,
            "transaction.timeout.ms": TXN_TIMEOUT_MS,
            "linger.ms": 5,
            "queue.buffering.max.messages": 1_000_000,
            "batch.num.messages": 10_000,
        })
        retry_retriable(lambda: producer.init_transactions(self.timeout), self.timeout * 3)
        return producer

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.history.events.add(self.name, "assigned", partitions=[p.partition for p in partitions])

    def _revoked(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.history.events.add(self.name, "revoked", partitions=[p.partition for p in partitions])

    def _usable(self, msg: Message) -> bool:
        err = msg.error()
        if err is None:
            return True
        if err.code() != KafkaError._PARTITION_EOF:
            self.history.events.add(self.name, "consumer-error", error=str(err))
        return False

    # -- one transaction -------------------------------------------------------------------
    def _process(self, consumer: Consumer, producer: Producer, batch: list[Message]) -> Producer:
        self.txns += 1
        abort = self.abort_every > 0 and self.txns % self.abort_every == 0
        flag = records.ABORT if abort else records.COMMIT
        delivered: list[tuple[int, str, int, int]] = []
        failures: list[str] = []

        def report(err: KafkaError | None, msg: Message) -> None:
            if err is None:
                delivered.append((records.record_id(msg.value()), msg.topic(), msg.partition(), msg.offset()))
            else:
                failures.append(str(err))

        stages = [f"{self.name}>{i}" for i in range(len(self.outputs))]
        try:
            producer.begin_transaction()
            for msg in batch:
                value, key, partition = msg.value(), msg.key(), msg.partition()
                for topic, stage in zip(self.outputs, stages, strict=True):
                    produce_one(producer, topic, records.rewrite_stage(value, stage, flag), partition, report, key)
            positions = [tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0]
            metadata = consumer.consumer_group_metadata()
            self._bounded(
                "send_offsets_to_transaction",
                lambda: producer.send_offsets_to_transaction(positions, metadata, self.timeout),
            )
            if abort:
                # Flushed first, so that the aborted records are in the log rather than purged.
                producer.flush(self.timeout)
                retry_retriable(lambda: producer.abort_transaction(self.timeout), self.timeout)
                self.history.bump(deliberate_aborts=1, aborted_records=len(batch) * len(self.outputs))
                self._rewind(consumer)
                return producer
            retry_retriable(lambda: producer.commit_transaction(self.timeout), self.timeout)
        except KafkaException as exc:
            return self._recover(consumer, producer, exc.args[0])
        except ClientHang as hang:
            # The wedged producer is left to its stuck thread; a new one with the same
            # transactional id fences it, and the coordinator aborts its open transaction.
            self.history.bump(client_hangs=1)
            self.history.events.add(self.name, "producer-restart", reason=str(hang))
            new = self._new_producer()
            self._rewind(consumer)
            return new
        if failures:
            raise AssertionError(f"{self.name}: transaction committed although deliveries failed: {failures[:3]}")
        self.history.writes.extend(delivered)
        self.history.bump(committed_txns=1)
        return producer

    def _bounded(self, what: str, op: Callable[[], None]) -> None:
        """Run a client call that should end within `timeout` but may not (librdkafka #5456, #5511:
        send_offsets_to_transaction can block past its timeout when the group coordinator moves)."""
        outcome: list[BaseException | None] = []
        done = threading.Event()

        def call() -> None:
            try:
                op()
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
                outcome.append(exc)
            finally:
                done.set()

        threading.Thread(target=call, name=f"{self.name}-{what}", daemon=True).start()
        if not done.wait(self.timeout + HANG_GRACE_S):
            self.history.events.add(self.name, "client-hang", call=what, waited_s=self.timeout + HANG_GRACE_S)
            raise ClientHang(f"{what} did not return within {self.timeout + HANG_GRACE_S}s")
        if outcome and outcome[0] is not None:
            raise outcome[0]

    def _recover(self, consumer: Consumer, producer: Producer, err: KafkaError) -> Producer:
        """Abort when the client allows it, else start a new producer (which fences the old one)."""
        self.history.events.add(self.name, "txn-failed", error=str(err), abortable=err.txn_requires_abort())
        self.history.bump(error_aborts=1)
        if not err.fatal():
            try:
                retry_retriable(lambda: producer.abort_transaction(self.timeout), self.timeout)
                self._rewind(consumer)
                return producer
            except KafkaException as exc:
                self.history.events.add(self.name, "abort-failed", error=str(exc.args[0]))
        self.history.events.add(self.name, "producer-restart")
        new = self._new_producer()
        self._rewind(consumer)
        return new

    def _rewind(self, consumer: Consumer) -> None:
        """Back to the group's committed offsets, so that the aborted batch is processed again."""
        assignment = consumer.assignment()
        if not assignment:
            return
        committed = retry_retriable(lambda: consumer.committed(assignment, timeout=self.timeout), self.timeout)
        for tp in committed:
            target = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
            consumer.seek(TopicPartition(tp.topic, tp.partition, target))


