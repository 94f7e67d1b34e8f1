"""An aiokafka consume-transform-produce loop, the twin of harness/clients/go/copier.go: a group member
(AIOKafkaConsumer, read_committed) copies what it polls to partition 0 of SINK in transactions of a
transactional AIOKafkaProducer, each committing the consumed offsets with
send_offsets_to_transaction(offsets, group_id), as aiokafka's documentation has it (its examples'
transactional_consume_process_produce).

    python -m harness.clients.python_drivers.aiokafka_copier MARKER BOOTSTRAP SOURCE SINK GROUP
        TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS

SOURCE may name several topics, comma separated. A transaction holds what polls returned within 2 s
(up to TRANSACTION_SIZE records), so that one spans every input topic. A transaction that fails is
aborted and redone: the consumer goes back to the group's committed offsets (seek_to_committed), as
kgo's GroupTransactSession does. Events: ready {client}, transaction_committed {records, copied} |
transaction_aborted {records, error}, poll_error {code, message}, done {outcome: copied | timed_out |
failed, copied}.
"""

from __future__ import annotations

import asyncio
import sys
import time

import aiokafka
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from harness.clients.python_drivers.lines import client_logs, emit, qualified

FILL_S = 2.0
POLL_MS = 200


async def copy(bootstrap: str, source: str, sink: str, group: str, txn_id: str, wanted: int, size: int,
               deadline: float) -> int:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id="kcts-aiokafka-copier",
                                transactional_id=txn_id, enable_idempotence=True, acks="all")
    consumer = AIOKafkaConsumer(*source.split(","), bootstrap_servers=bootstrap, client_id="kcts-aiokafka-copier",
                                group_id=group, enable_auto_commit=False, auto_offset_reset="earliest",
                                isolation_level="read_committed")
    copied, outcome = 0, "copied"
    emit({"event": "ready", "client": f"aiokafka {aiokafka.__version__}"})
    try:
        await producer.start()  # InitProducerId: aiokafka initializes transactions on start
        await consumer.start()
        while copied < wanted:
            if time.monotonic() > deadline:
                outcome = "timed_out"
                break
            batch: list[tuple[TopicPartition, int, bytes | None, bytes | None]] = []
            fill = time.monotonic() + FILL_S
            while len(batch) < min(size, wanted - copied) and time.monotonic() < fill:
                try:
                    polled = await consumer.getmany(timeout_ms=POLL_MS,
                                                    max_records=min(size, wanted - copied) - len(batch))
                except Exception as exc:  # noqa: BLE001 - reported; the loop polls again
                    emit({"event": "poll_error", "code": type(exc).__name__, "message": str(exc)})
                    continue
                for tp, records in polled.items():
                    batch += [(tp, r.offset, r.key, r.value) for r in records]
            if not batch:
                continue
            offsets = {tp: offset + 1 for tp, offset, _, _ in batch}
            try:
                await producer.begin_transaction()
                for _, _, key, value in batch:
                    await producer.send(sink, value=value, key=key, partition=0)
                await producer.send_offsets_to_transaction(offsets, group)
                await producer.commit_transaction()
            except Exception as exc:  # noqa: BLE001 - the transaction is aborted and redone
                emit({"event": "transaction_aborted", "records": len(batch), "error": f"{qualified(exc)}: {exc}"})
                await producer.abort_transaction()
                await consumer.seek_to_committed()
                continue
            copied += len(batch)
            emit({"event": "transaction_committed", "records": len(batch), "copied": copied})
    except Exception as exc:  # noqa: BLE001 - it could not start, or a failure past the abort (fenced, fatal)
        emit({"event": "done", "outcome": "failed", "copied": copied, "message": f"{qualified(exc)}: {exc}"})
        return 1
    finally:
        for stop in (producer.stop, consumer.stop):
            try:
                await asyncio.wait_for(stop(), 10)
            except Exception as exc:  # noqa: BLE001 - the copy's account is written; a slow stop is only logged
                print(f"stop: {exc!r}", file=sys.stderr)
    emit({"event": "done", "outcome": outcome, "copied": copied})
    return 0 if outcome == "copied" else 1


def main(argv: list[str]) -> int:
    _marker, bootstrap, source, sink, group, txn_id, messages, size, timeout_ms = argv[:9]
    client_logs("aiokafka.producer.transaction_manager")
    deadline = time.monotonic() + int(timeout_ms) / 1000
    return asyncio.run(copy(bootstrap, source, sink, group, txn_id, int(messages), int(size), deadline))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
