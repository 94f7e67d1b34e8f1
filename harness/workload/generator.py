"""The generator: seeds input topics with checkable records, in transactions, some aborted on purpose.

Ids are consecutive from 0; id `i` belongs to key `i % keys`, and key `k` to partition `k % partitions`.
Every `abort_every`-th transaction is written with flag `A` and aborted, so the log holds records
that read_committed must hide. A transaction that fails is aborted (its per-key sequence numbers
are reused) or, when the client cannot tell how it ended, recorded as `unknown`.

Without transactions (`transactional=False`: a target with none, or the idempotent pipeline), one
idempotent producer (enable.idempotence, acks=all) writes batches of `txn_size` records and flushes
each: a record acknowledged is `committed`, one whose delivery failed or never reported is
`unknown` (the write may be in the log or not); every record takes its key's next sequence number.

The generator runs as a child process (`python -m harness.workload.generator`, driven by
generator_process.py) and reports each transaction as it ends, as a `txn` event: its id range, its
outcome and, when committed, the offset of every write.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from harness.clients import txn_refusal
from harness.clients.produce_read import produce_one, retry_retriable
from harness.process import child
from harness.process.child import CLIENT_LOGS
from harness.workload import pipeline_record
from harness.workload.write_log import TxnOutcome, outcome_ranges

TXN_TIMEOUT_MS = 20000


@dataclass(frozen=True)
class GeneratorSpec:
    client_config: dict[str, str]
    topic: str
    partitions: int
    keys: int = 64
    txn_size: int = 200
    abort_every: int = 7
    transactional_id: str | None = None
    log_writes: bool = True  # False: ids are not logged (a million-record benchmark)
    timeout: float = 60.0
    transactional: bool = True  # False: an idempotent producer, no transactions (see the module's docstring)


class Generator:
    """Writes `n` more records per `write(n)` call; one instance owns its id space."""

    def __init__(self, out: child.Channel, spec: GeneratorSpec) -> None:
        self.config: dict[str, str | int | bool] = {
            **spec.client_config, **CLIENT_LOGS,
            "acks": "all",
            "linger.ms": 5,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "batch.num.messages": 10_000,
        }
        self.transactional = spec.transactional
        if spec.transactional:
            self.config["transactional.id"] = spec.transactional_id or f"{spec.topic}-generator"
            self.config["transaction.timeout.ms"] = TXN_TIMEOUT_MS
        else:
            # Its idempotence state changes go to its log: an epoch bump for skipped sequence
            # numbers is the signature of a duplicate librdkafka is known to write
            # (harness/client_gaps.toml), which the check must tell from the target's.
            self.config.update({"enable.idempotence": True, "debug": "eos"})
        self.topic = spec.topic
        self.partitions = spec.partitions
        self.keys = spec.keys
        self.txn_size = spec.txn_size
        self.abort_every = spec.abort_every
        self.log_writes = spec.log_writes
        self.timeout = spec.timeout
        self.out = out
        self.next_id = 0
        self.next_seq = [0] * spec.keys
        self.txns = 0
        self.stop = threading.Event()
        self._producer = self._new_producer()

    def _new_producer(self) -> Producer:
        producer = Producer(self.config)
        if not self.transactional:
            return producer
        tid = str(self.config["transactional.id"])
        retry_retriable(lambda: txn_refusal.init_transactions(producer, tid, self.timeout, "the generator"),
                        self.timeout * 2)
        return producer

    def close(self) -> None:
        self._producer.close()

    def write(self, n: int, rate: float | None = None) -> None:
        """Write `n` records in transactions (or idempotent batches); `rate` (records/s) spreads them over
        time, stop() ends early."""
        t0 = time.monotonic()
        written = 0
        while written < n and not self.stop.is_set():
            size = min(self.txn_size, n - written)
            if self.transactional:
                self._transaction(size)
            else:
                self._batch(size)
            written += size
            if rate:
                self.stop.wait(max(0.0, t0 + written / rate - time.monotonic()))

    def write_tail(self) -> None:
        """One committed record per partition, written last, so that "processed past the last
        committed offset of every partition" is an exact end-of-input condition."""
        keys = [next(k for k in range(self.keys) if k % self.partitions == p) for p in range(self.partitions)]
        if self.transactional:
            self._transaction(len(keys), key_indexes=keys, deliberate_abort=False)
        else:
            self._batch(len(keys), key_indexes=keys)

    def _batch(self, size: int, key_indexes: list[int] | None = None) -> None:
        """`size` records through the idempotent producer, flushed; reported as `txn` events, one per
        run of ids with one outcome: acknowledged (`committed`, with offsets) or not (`unknown`)."""
        first = self.next_id
        self.next_id += size
        self.out.event("begin", first=first, size=size)
        acked: dict[int, tuple[int, str, int, int]] = {}
        failures: list[str] = []
        fatal: list[str] = []

        def report(err: KafkaError | None, msg: Message) -> None:
            rid = pipeline_record.record_id(msg.value())
            if err is not None:
                failures.append(f"{rid}: {err}")
                if err.fatal():
                    fatal.append(str(err))
            else:
                acked[rid] = (rid if self.log_writes else 0, msg.topic(), msg.partition(), msg.offset())

        for j in range(size):
            rid = first + j
            k = key_indexes[j] if key_indexes is not None else rid % self.keys
            seq = self.next_seq[k]
            self.next_seq[k] += 1
            key = f"k{k:04d}"
            produce_one(self._producer, self.topic, pipeline_record.make(rid, key, seq).encode(), k % self.partitions,
                        report, key.encode())
        unreported = self._producer.flush(self.timeout)
        for r in outcome_ranges(first, [first + j in acked for j in range(size)]):
            writes = [acked[i] for i in range(r.first, r.end) if i in acked]
            self.out.event("txn", first=r.first, end=r.end, outcome=r.outcome.value, writes=writes)
        if failures or unreported:
            self.out.event("send-failed", first=first, size=size, errors=failures[:5], unreported=unreported)
        if fatal:
            # A fatal idempotence error leaves the producer refusing every send: a new one (a new
            # producer id) goes on; the records it could not place stay `unknown`.
            self.out.event("producer-restart", error=fatal[0])
            self._producer.close()
            self._producer = self._new_producer()

    def _transaction(
        self, size: int, key_indexes: list[int] | None = None, deliberate_abort: bool | None = None
    ) -> None:
        self.txns += 1
        abort = deliberate_abort if deliberate_abort is not None else (
            self.abort_every > 0 and self.txns % self.abort_every == 0
        )
        first = self.next_id
        self.next_id += size
        self.out.event("begin", first=first, size=size)
        seq_before = list(self.next_seq)
        delivered: list[tuple[int, str, int, int]] = []
        failures: list[str] = []
        report = _delivery_recorder(delivered, failures, self.log_writes)
        producer = self._producer
        try:
            producer.begin_transaction()
            for j in range(size):
                rid = first + j
                k = key_indexes[j] if key_indexes is not None else rid % self.keys
                if abort:
                    seq, flag = -1, pipeline_record.ABORT
                else:
                    seq, flag = self.next_seq[k], pipeline_record.COMMIT
                    self.next_seq[k] += 1
                key = f"k{k:04d}"
                value = pipeline_record.make(rid, key, seq, flag).encode()
                produce_one(producer, self.topic, value, k % self.partitions, report, key.encode())
            if abort:
                # abort_transaction purges what is still queued; flushed first, the aborted records
                # really are in the log, where read_committed must hide them.
                producer.flush(self.timeout)
                retry_retriable(lambda: producer.abort_transaction(self.timeout), self.timeout)
                self._end(first, size, TxnOutcome.ABORTED, seq_before)
                return
            retry_retriable(lambda: producer.commit_transaction(self.timeout), self.timeout)
        except KafkaException as exc:
            self._failed(first, size, exc.args[0], seq_before)
            return
        if failures:
            raise AssertionError(f"generator: transaction committed although deliveries failed: {failures[:3]}")
        self.out.event("txn", first=first, end=first + size, outcome=TxnOutcome.COMMITTED.value, writes=delivered)

    def _end(self, first: int, size: int, outcome: TxnOutcome, seq_before: list[int]) -> None:
        if outcome is TxnOutcome.ABORTED:
            self.next_seq = seq_before
        self.out.event("txn", first=first, end=first + size, outcome=outcome.value)

    def _failed(self, first: int, size: int, err: KafkaError, seq_before: list[int]) -> None:
        self.out.event("txn-failed", error=str(err), first=first, size=size)
        if err.txn_requires_abort():
            try:
                retry_retriable(lambda: self._producer.abort_transaction(self.timeout), self.timeout)
                self._end(first, size, TxnOutcome.ABORTED, seq_before)
                return
            except KafkaException as exc:
                err = exc.args[0]
        # Fatal, or the abort itself failed: a new producer with the same transactional id fences
        # the old one and lets the coordinator finish its transaction one way or the other.
        self._end(first, size, TxnOutcome.UNKNOWN, seq_before)
        self.out.event("producer-restart", error=str(err))
        self._producer = self._new_producer()


def _delivery_recorder(
    delivered: list[tuple[int, str, int, int]], failures: list[str], log_writes: bool
) -> Callable[[KafkaError | None, Message], None]:
    def report(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            failures.append(str(err))
        elif log_writes:
            delivered.append((pipeline_record.record_id(msg.value()), msg.topic(), msg.partition(), msg.offset()))
        else:
            delivered.append((0, msg.topic(), msg.partition(), msg.offset()))

    return report




def main() -> None:
    """Commands: write (n, rate), tail, halt (end the current write early, and every later one), stop."""
    spec = child.setup()
    out = child.Channel()
    try:
        generator = Generator(out, GeneratorSpec(**spec))
    except txn_refusal.TransactionRefused as exc:
        # The parent raises the refusal from this event (generator_process.py); the exit says no more.
        out.event(txn_refusal.EVENT, **exc.refusal.fields())
        raise
    out.event("ready")
    commands: queue.Queue[child.Message] = queue.Queue()

    def on_command(cmd: child.Message) -> None:
        if cmd["cmd"] in ("halt", "stop"):
            generator.stop.set()
        if cmd["cmd"] != "halt":
            commands.put(cmd)

    child.serve(on_command, lambda: commands.put({"cmd": "stop"}))
    while (cmd := commands.get())["cmd"] != "stop":
        try:
            if cmd["cmd"] == "write":
                generator.write(cmd["n"], cmd.get("rate"))
            elif cmd["cmd"] == "tail":
                generator.write_tail()
            out.event("done", id=cmd["id"])
        except Exception as exc:  # noqa: BLE001 - the parent's write() raises it, with this traceback
            out.event("done", id=cmd["id"], error=repr(exc), traceback=traceback.format_exc()[-3000:])
    generator.close()
    out.event("stopped", code=0)
    child.exit_now(0)


if __name__ == "__main__":
    main()
