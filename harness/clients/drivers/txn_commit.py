"""One librdkafka transaction with send_offsets_to_transaction, as a driver process (the KIP-1319
client check's librdkafka side), run under the interpreter of the confluent-kafka release tested.

    python -m harness.clients.drivers.txn_commit MARKER BOOTSTRAP TRANSACTIONAL_ID GROUP SINK SOURCE:PARTITION:OFFSET

It writes "rdkafka-txn" to partition 0 of SINK, sends the offset for GROUP (the group metadata of a
consumer of it, outside any generation) and commits. Settings (TLS, SASL) come as JSON in
$KCTS_CLIENT_CONFIG. Events: ready {client, librdkafka}, done {outcome: committed | failed, message}.
"""

from __future__ import annotations

import json
import os
import sys

from confluent_kafka import Consumer, Producer, TopicPartition

from harness.clients.drivers.kip320_consumers import emit, release

WRITTEN = b"rdkafka-txn"


def main(argv: list[str]) -> int:
    _marker, bootstrap, transactional_id, group, sink, offset = argv[:6]
    topic, partition, at = offset.rsplit(":", 2)
    config = {**json.loads(os.environ.get("KCTS_CLIENT_CONFIG", "{}")), "bootstrap.servers": bootstrap}
    import confluent_kafka

    emit({"event": "ready", "client": f"confluent-kafka {release(confluent_kafka.version())}",
          "librdkafka": confluent_kafka.libversion()[0]})
    producer = Producer({**config, "transactional.id": transactional_id})
    member = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(sink, WRITTEN, partition=0)
        producer.send_offsets_to_transaction([TopicPartition(topic, int(partition), int(at))],
                                             member.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
        emit({"event": "done", "outcome": "committed"})
        return 0
    except Exception as e:  # noqa: BLE001 - the failure is the answer
        emit({"event": "done", "outcome": "failed", "exception": type(e).__name__, "message": str(e)})
        return 1
    finally:
        member.close()
        producer.flush(10)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
