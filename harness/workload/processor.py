"""The confluent-kafka exactly-once processor: consume, transform, produce to every output, commit.

It runs as a child process (`python -m harness.workload.processor`, started by processor_group.py)
and reports what it did as events (harness.process.events): the writes of every committed
transaction, counts (`bump`), and what happened to its clients.
Each instance is one consumer of the group and one transactional producer. Per batch it opens a
transaction, writes every input record to each output topic (same key, same partition number,
its own stage), adds the consumed positions with `send_offsets_to_transaction`, and commits.
Every `abort_every`-th transaction is written with flag `A` and aborted on purpose; after any
abort the consumer goes back to the group's committed offsets and the batch is processed again.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from harness.clients import txn_refusal
from harness.clients.produce_read import produce_one, retry_retriable
from harness.process import child
from harness.process.child import CLIENT_LOGS
from harness.workload import pipeline_record

TXN_TIMEOUT_MS = 15000
HANG_GRACE_S = 10.0


class ClientHang(Exception):
    """A client call blocked well past its own timeout."""


class TxnProcessor:
    def __init__(
        self,
        name: str,
        client_config: dict[str, str],
        group: str,
        input_topic: str,
        outputs: list[str],
        out: child.Channel,
        abort_every: int = 5,
        max_batch: int = 100,
        pace: float = 0.0,
        timeout: float = 15.0,
    ) -> None:
        self.name = name
        self.client_config = client_config
        self.group = group
        self.input_topic = input_topic
        self.outputs = outputs
        self.out = out
        self.abort_every = abort_every
        self.max_batch = max_batch
        self.pace = pace
        self.timeout = timeout
        self.transactional_id = f"{group}-{name}"
        self.halt = threading.Event()
        self.txns = 0

    # -- lifecycle -----------------------------------------------------------------------
    def run(self) -> int:
        """Process until halted; 0 when halted, 3 when the processing itself failed (reported first)."""
        consumer = Consumer({
            **self.client_config, **CLIENT_LOGS,
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
            self.out.event("ready")
            while not self.halt.is_set():
                batch = [m for m in consumer.consume(self.max_batch, 0.2) if self._usable(m)]
                if batch:
                    producer = self._process(consumer, producer, batch)
                    if self.pace:
                        self.halt.wait(self.pace)
        except txn_refusal.TransactionRefused as exc:
            # The target's answer, not the processor's failure: the parent ends the check as refused.
            self.out.event(txn_refusal.EVENT, **exc.refusal.fields())
            return 3
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the check
            self.out.event("crashed", error=repr(exc), traceback=traceback.format_exc()[-3000:])
            return 3
        finally:
            consumer.close()
            if producer is not None:
                producer.close()
        return 0

    def _new_producer(self) -> Producer:
        producer = Producer({
            **self.client_config, **CLIENT_LOGS,
            "transactional.id": self.transactional_id,
            "client.id": self.name,
            "transaction.timeout.ms": TXN_TIMEOUT_MS,
            "linger.ms": 5,
            "queue.buffering.max.messages": 1_000_000,
            "batch.num.messages": 10_000,
        })
        retry_retriable(lambda: txn_refusal.init_transactions(producer, self.transactional_id, self.timeout,
                                                              f"processor {self.name}"), self.timeout * 3)
        return producer

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.out.event("assigned", partitions=[p.partition for p in partitions])

    def _revoked(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.out.event("revoked", partitions=[p.partition for p in partitions])

    def _usable(self, msg: Message) -> bool:
        err = msg.error()
        if err is None:
            return True
        if err.code() != KafkaError._PARTITION_EOF:
            self.out.event("consumer-error", error=str(err))
        return False

    # -- one transaction -------------------------------------------------------------------
    def _process(self, consumer: Consumer, producer: Producer, batch: list[Message]) -> Producer:
        self.txns += 1
        abort = self.abort_every > 0 and self.txns % self.abort_every == 0
        flag = pipeline_record.ABORT if abort else pipeline_record.COMMIT
        delivered: list[tuple[int, str, int, int]] = []
        failures: list[str] = []

        def report(err: KafkaError | None, msg: Message) -> None:
            if err is None:
                delivered.append((pipeline_record.record_id(msg.value()), msg.topic(), msg.partition(), msg.offset()))
            else:
                failures.append(str(err))

        stages = [f"{self.name}>{i}" for i in range(len(self.outputs))]
        try:
            producer.begin_transaction()
            for msg in batch:
                value, key, partition = msg.value(), msg.key(), msg.partition()
                for topic, stage in zip(self.outputs, stages, strict=True):
                    restaged = pipeline_record.rewrite_stage(value, stage, flag)
                    produce_one(producer, topic, restaged, partition, report, key)
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
                self.out.event("bump", deliberate_aborts=1, aborted_records=len(batch) * len(self.outputs))
                self._rewind(consumer)
                return producer
            retry_retriable(lambda: producer.commit_transaction(self.timeout), self.timeout)
        except KafkaException as exc:
            return self._recover(consumer, producer, exc.args[0])
        except ClientHang as hang:
            # The wedged producer is left to its stuck thread; a new one with the same
            # transactional id fences it, and the coordinator aborts its open transaction.
            self.out.event("bump", client_hangs=1)
            self.out.event("producer-restart", reason=str(hang))
            new = self._new_producer()
            self._rewind(consumer)
            return new
        if failures:
            raise AssertionError(f"{self.name}: transaction committed although deliveries failed: {failures[:3]}")
        self.out.event("committed", writes=delivered)
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
            self.out.event("client-hang", call=what, waited_s=self.timeout + HANG_GRACE_S)
            raise ClientHang(f"{what} did not return within {self.timeout + HANG_GRACE_S}s")
        if outcome and outcome[0] is not None:
            raise outcome[0]

    def _recover(self, consumer: Consumer, producer: Producer, err: KafkaError) -> Producer:
        """Abort when the client allows it, else start a new producer (which fences the old one)."""
        self.out.event("bump", error_aborts=1)
        self.out.event("txn-failed", error=str(err), abortable=err.txn_requires_abort())
        if not err.fatal():
            try:
                retry_retriable(lambda: producer.abort_transaction(self.timeout), self.timeout)
                self._rewind(consumer)
                return producer
            except KafkaException as exc:
                self.out.event("abort-failed", error=str(exc.args[0]))
        self.out.event("producer-restart")
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




def main() -> None:
    spec = child.setup()
    out = child.Channel()
    processor = TxnProcessor(out=out, **spec)
    child.serve(lambda cmd: processor.halt.set() if cmd.get("cmd") == "stop" else None, processor.halt.set)
    code = processor.run()
    out.event("stopped", code=code)
    child.exit_now(code)


if __name__ == "__main__":
    main()
