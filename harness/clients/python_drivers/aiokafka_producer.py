"""An aiokafka producer writing a steady stream, as a driver process (the KIP-359 failover checks).

    python -m harness.clients.python_drivers.aiokafka_producer MARKER BOOTSTRAP TOPIC PREFIX

It sends "<PREFIX>.<n>" (n = 0, 1, ...) to partition 0 of TOPIC, about 200 a second, idempotent with
acks=all, until its input says `exit`; then it flushes. Events, in VerifiableProducer's words as
harness/clients/go/producer.go: ready, producer_send_success {value, offset}, producer_send_error
{value, exception, message}, stopped {sent, unreported}.
"""

from __future__ import annotations

import asyncio
import sys
import threading

import aiokafka
from aiokafka import AIOKafkaProducer

from harness.clients.python_drivers.lines import client_logs, emit, qualified

IN_FLIGHT = 200  # sends without a report before the stream waits: a small, steady window, as the other producers
FLUSH_S = 60


async def serve(bootstrap: str, topic: str, prefix: str) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def read() -> None:
        for line in sys.stdin:
            if line.strip() == "exit":
                break
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=read, name="commands", daemon=True).start()
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, client_id="kcts-aiokafka-producer", acks="all", enable_idempotence=True,
        linger_ms=5,
        # A paused leader answers nothing: give up on a request after 10 s, not the default, and retry.
        request_timeout_ms=10_000,
        # Leader changes are noticed through metadata; the default age (5 min) would outlast the check.
        metadata_max_age_ms=1000)
    await producer.start()
    emit({"event": "ready", "client": f"aiokafka {aiokafka.__version__}"})
    window = asyncio.Semaphore(IN_FLIGHT)
    pending: set[asyncio.Task[None]] = set()

    async def send(value: str) -> None:
        try:
            delivered = await producer.send(topic, value.encode(), partition=0)
            meta = await delivered
        except Exception as exc:  # noqa: BLE001 - every failure is the send's report
            emit({"event": "producer_send_error", "value": value, "exception": qualified(exc), "message": str(exc)})
        else:
            emit({"event": "producer_send_success", "value": value, "offset": meta.offset})
        finally:
            window.release()

    n = 0
    while not stop.is_set():
        try:  # the window is full while a leader is down: wait for reports
            await asyncio.wait_for(window.acquire(), 0.05)
        except TimeoutError:
            continue
        task = asyncio.create_task(send(f"{prefix}.{n}"))
        pending.add(task)
        task.add_done_callback(pending.discard)
        n += 1
        await asyncio.sleep(0.005)  # a steady stream (about 200/s), not a flood, on 2 cores shared with the brokers
    if pending:
        await asyncio.wait(pending, timeout=FLUSH_S)
    emit({"event": "stopped", "sent": n, "unreported": len(pending)})
    try:
        await asyncio.wait_for(producer.stop(), 10)
    except Exception as exc:  # noqa: BLE001 - the stream's account is written; a slow stop is only logged
        print(f"stop: {exc!r}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    _marker, bootstrap, topic, prefix = argv[:4]
    client_logs("aiokafka.producer.sender")
    return asyncio.run(serve(bootstrap, topic, prefix))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
