"""A librdkafka producer writing a steady stream, as a driver process (the KIP-359 failover check's
librdkafka side), run under the interpreter of the confluent-kafka release tested.

    python -m harness.clients.drivers.producer MARKER BOOTSTRAP TOPIC PREFIX

It sends "<PREFIX>.<n>" (n = 0, 1, ...) to partition 0 of TOPIC, about 200 a second, until its
input says `exit`; then it flushes. Producer settings come as JSON in $KCTS_CLIENT_CONFIG. Events,
in VerifiableProducer's words: ready, producer_send_success {value, offset}, producer_send_error
{value, exception, message}, stopped {sent, unreported}.

With $KCTS_HISTORY_FILE set it also appends every send to that file in the history format
(harness.histories.history; process PREFIX), as its delivery report arrives: start is the produce()
call, end the report. An error is `info`, not `fail`: librdkafka's Python binding does not say
whether a failed message was possibly persisted (a timed-out one may well be), and only a read may
prove it (Jepsen's must-have-committed?). The stdout events stay as they are.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from confluent_kafka import Producer

from harness.clients.drivers.kip320_consumers import emit, release
from harness.histories.history import HistoryWriter, Operation, OpType, Outcome, Sent

HISTORY_ENV = "KCTS_HISTORY_FILE"


def main(argv: list[str]) -> int:
    _marker, bootstrap, topic, prefix = argv[:4]
    config = {**json.loads(os.environ.get("KCTS_CLIENT_CONFIG", "{}")), "bootstrap.servers": bootstrap}
    stop = threading.Event()

    def read() -> None:
        for line in sys.stdin:
            if line.strip() == "exit":
                break
        stop.set()

    threading.Thread(target=read, daemon=True).start()
    import confluent_kafka

    emit({"event": "ready", "client": f"confluent-kafka {release(confluent_kafka.version())}",
          "librdkafka": confluent_kafka.libversion()[0]})
    producer = Producer(config)
    history_file = os.environ.get(HISTORY_ENV)
    history = HistoryWriter("", prefix, path=history_file) if history_file else None
    started: dict[str, int] = {}  # value -> when produce() took it; values are unique

    def report(err: Any, msg: Any) -> None:
        value = msg.value().decode()
        if history is not None:
            ok = err is None
            history.write(Operation(
                prefix, OpType.SEND, Outcome.OK if ok else Outcome.INFO, started.pop(value), time.monotonic_ns(),
                sent=Sent(topic, 0, value, msg.offset() if ok else None, None if ok else err.name())))
        if err is None:
            emit({"event": "producer_send_success", "value": value, "offset": msg.offset()})
        else:
            emit({"event": "producer_send_error", "value": value, "exception": err.name(), "message": err.str()})

    n = 0
    while not stop.is_set():
        value = f"{prefix}.{n}"
        started[value] = time.monotonic_ns()
        try:
            producer.produce(topic, value.encode(), partition=0, on_delivery=report)
        except BufferError:
            started.pop(value)
            producer.poll(0.05)  # the queue is full while a leader is down: wait for acks
            continue
        n += 1
        producer.poll(0)
        time.sleep(0.005)  # a steady stream (about 200/s), not a flood, on 2 cores shared with 4 JVMs
    left = producer.flush(60)
    if history is not None:
        history.close()
    emit({"event": "stopped", "sent": n, "unreported": left})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
