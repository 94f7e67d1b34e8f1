"""A kafka-python consume-transform-produce loop, the twin of harness/clients/go/copier.go: a group member
(KafkaConsumer, read_committed) copies what it polls to partition 0 of SINK in transactions of a
transactional KafkaProducer, each committing the consumed offsets with send_offsets_to_transaction
(offsets, consumer.group_metadata()), as the client's documentation has it.

    python -m harness.clients.python_drivers.kafka_python_copier MARKER BOOTSTRAP SOURCE SINK GROUP
        TRANSACTIONAL_ID MESSAGES TRANSACTION_SIZE TIMEOUT_MS

SOURCE may name several topics, comma separated. A transaction holds what polls returned within 2 s
(up to TRANSACTION_SIZE records), so that one spans every input topic. A transaction that fails is
aborted and redone: the consumer goes back to the group's committed offsets (as kgo's
GroupTransactSession does). Events: ready {client}, transaction_committed {records, copied} | transaction_aborted
{records, error}, poll_error {code, message}, done {outcome: copied | timed_out | failed, copied}.
"""

from __future__ import annotations

import sys
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from harness.clients.python_drivers.lines import client_logs, emit, qualified

FILL_S = 2.0
POLL_MS = 200


def rewind(consumer: KafkaConsumer) -> None:
    """Every assigned partition back to the group's committed offset (its start where none): an aborted
    transaction's records are copied again."""
    for tp in consumer.assignment():
        committed = consumer.committed(tp, timeout_ms=10_000)
        if committed is None:
            consumer.seek_to_beginning(tp)
        else:
            consumer.seek(tp, committed)


def main(argv: list[str]) -> int:
    _marker, bootstrap, source, sink, group, txn_id, messages, size_arg, timeout_ms = argv[:9]
    wanted, size = int(messages), int(size_arg)
    deadline = time.monotonic() + int(timeout_ms) / 1000
    client_logs("kafka.producer.transaction_manager")
    servers = bootstrap.split(",")
    emit({"event": "ready", "client": f"kafka-python {kafka.__version__}"})
    copied = 0
    try:
        producer = KafkaProducer(bootstrap_servers=servers, client_id="kcts-kafka-python-copier",
                                 transactional_id=txn_id, enable_idempotence=True, acks="all", max_block_ms=30_000)
        consumer = KafkaConsumer(bootstrap_servers=servers, client_id="kcts-kafka-python-copier", group_id=group,
                                 enable_auto_commit=False, auto_offset_reset="earliest",
                                 isolation_level="read_committed")
        consumer.subscribe(source.split(","))
        producer.init_transactions()
    except Exception as exc:  # noqa: BLE001 - the copier's answer: it could not start
        emit({"event": "done", "outcome": "failed", "copied": 0, "message": f"{qualified(exc)}: {exc}"})
        return 1
    outcome = "copied"
    try:
        while copied < wanted:
            if time.monotonic() > deadline:
                outcome = "timed_out"
                break
            batch: list[tuple[TopicPartition, int, int, bytes | None, bytes | None]] = []
            fill = time.monotonic() + FILL_S
            while len(batch) < min(size, wanted - copied) and time.monotonic() < fill:
                try:
                    polled = consumer.poll(timeout_ms=POLL_MS, max_records=min(size, wanted - copied) - len(batch))
                except Exception as exc:  # noqa: BLE001 - reported; the loop polls again
                    emit({"event": "poll_error", "code": type(exc).__name__, "message": str(exc)})
                    continue
                for tp, records in polled.items():
                    batch += [(tp, r.offset, r.leader_epoch, r.key, r.value) for r in records]
            if not batch:
                continue
            offsets: dict[TopicPartition, OffsetAndMetadata] = {}
            for tp, offset, epoch, _, _ in batch:
                offsets[tp] = OffsetAndMetadata(offset + 1, "", epoch)
            try:
                producer.begin_transaction()
                for _, _, _, key, value in batch:
                    producer.send(sink, value=value, key=key, partition=0)
                producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
                producer.commit_transaction()
            except Exception as exc:  # noqa: BLE001 - the transaction is aborted and redone
                emit({"event": "transaction_aborted", "records": len(batch), "error": f"{qualified(exc)}: {exc}"})
                producer.abort_transaction()
                rewind(consumer)
                continue
            copied += len(batch)
            emit({"event": "transaction_committed", "records": len(batch), "copied": copied})
    except Exception as exc:  # noqa: BLE001 - a failure past the abort (fenced, fatal): the copier's answer
        emit({"event": "done", "outcome": "failed", "copied": copied, "message": f"{qualified(exc)}: {exc}"})
        return 1
    finally:
        producer.close(timeout=5)
        consumer.close(autocommit=False)
    emit({"event": "done", "outcome": outcome, "copied": copied})
    return 0 if outcome == "copied" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
