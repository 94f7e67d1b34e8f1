"""A kafka-python producer writing a steady stream, as a driver process (the KIP-359 failover checks).

    python -m harness.clients.python_drivers.kafka_python_producer MARKER BOOTSTRAP TOPIC PREFIX

It sends "<PREFIX>.<n>" (n = 0, 1, ...) to partition 0 of TOPIC, about 200 a second, idempotent with
acks=all (KafkaProducer's defaults), until its input says `exit`; then it flushes. Events, in
VerifiableProducer's words as harness/clients/go/producer.go: ready, producer_send_success {value,
offset}, producer_send_error {value, exception, message}, stopped {sent, unreported}.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import kafka
from kafka import KafkaProducer

from harness.clients.python_drivers.lines import client_logs, commands, emit, qualified

IN_FLIGHT = 200  # sends without a report before the stream waits: a small, steady window, as the other producers
FLUSH_S = 60


def main(argv: list[str]) -> int:
    _marker, bootstrap, topic, prefix = argv[:4]
    client_logs("kafka.producer.sender", "kafka.producer.transaction_manager")
    lines = commands()
    stop = threading.Event()

    def read() -> None:
        while lines.get() != "exit":
            pass
        stop.set()

    threading.Thread(target=read, daemon=True).start()
    producer = KafkaProducer(
        bootstrap_servers=bootstrap.split(","), client_id="kcts-kafka-python-producer", acks="all",
        enable_idempotence=True, linger_ms=5,
        # A paused leader answers nothing: give up on a request after 10 s, not the default, and retry.
        request_timeout_ms=10_000,
        # Leader changes are noticed through metadata; the default age (5 min) would outlast the check.
        metadata_max_age_ms=1000, reconnect_backoff_max_ms=500)
    emit({"event": "ready", "client": f"kafka-python {kafka.__version__}"})
    window = threading.BoundedSemaphore(IN_FLIGHT)
    unreported = [0]
    count = threading.Lock()

    def reported(value: str, ok: bool, got: Any) -> None:
        with count:
            unreported[0] -= 1
        window.release()
        if ok:
            emit({"event": "producer_send_success", "value": value, "offset": got.offset})
        else:
            emit({"event": "producer_send_error", "value": value, "exception": qualified(got), "message": str(got)})

    n = 0
    while not stop.is_set():
        if not window.acquire(timeout=0.05):
            continue  # the window is full while a leader is down: wait for reports
        value = f"{prefix}.{n}"
        with count:
            unreported[0] += 1
        try:
            future = producer.send(topic, value.encode(), partition=0)
        except Exception as exc:  # noqa: BLE001 - a send refused at once (no metadata within max_block_ms) is reported
            reported(value, False, exc)
        else:
            future.add_callback(lambda meta, v=value: reported(v, True, meta))
            future.add_errback(lambda exc, v=value: reported(v, False, exc))
        n += 1
        time.sleep(0.005)  # a steady stream (about 200/s), not a flood, on 2 cores shared with the brokers
    try:
        producer.flush(timeout=FLUSH_S)
    except Exception as exc:  # noqa: BLE001 - what is left unreported is counted below
        print(f"flush: {exc!r}", file=sys.stderr)
    with count:
        left = unreported[0]
    emit({"event": "stopped", "sent": n, "unreported": left})
    producer.close(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
