"""The librdkafka producer driver, the first real writer of client histories: against librdkafka's
own mock cluster (no broker to start), every send it reports on stdout is in its history file, with
the same offset, and its stdout events are unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from harness.clients.drivers.producer import HISTORY_ENV
from harness.histories.history import OpType, Outcome, read_file
from harness.waiting import wait_until

ACKED = 100  # sends the mock cluster acknowledges before the driver is told to exit


def test_the_producer_driver_appends_every_send_to_its_history(tmp_path: Path) -> None:
    path = tmp_path / "history" / "producer.jsonl"
    env = {**os.environ, HISTORY_ENV: str(path), "KCTS_CLIENT_CONFIG": json.dumps({"test.mock.num.brokers": 1})}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.clients.drivers.producer", "kcts-test", "127.0.0.1:1", "t", "w"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[str] = []

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)

    reader = threading.Thread(target=read, name="producer-stdout", daemon=True)
    reader.start()
    try:
        # Told to exit once the mock cluster has acknowledged some sends (or the driver ended): an
        # `exit` that came before its first send, as a fixed wait could on a loaded machine, leaves
        # nothing to compare.
        wait_until(lambda: sum('"producer_send_success"' in line for line in lines[:]) >= ACKED
                   or proc.poll() is not None, 60,
                   lambda: f"{ACKED} sends acknowledged; exit {proc.poll()}, stdout so far: {lines[-5:]}")
        proc.stdin.write("exit\n")
        proc.stdin.close()
        proc.wait(60)
        reader.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    events = [json.loads(line) for line in lines if line.startswith("{")]
    names = [e["event"] for e in events]
    assert names[0] == "ready" and names[-1] == "stopped", names
    acked = {e["value"]: e["offset"] for e in events if e["event"] == "producer_send_success"}
    assert acked, "the mock cluster acknowledged nothing"

    ops = list(read_file(path))
    assert {op.process for op in ops} == {"w"}
    assert all(op.type is OpType.SEND and op.sent is not None and op.sent.topic == "t" for op in ops)
    recorded = {op.sent.value: op.sent.offset for op in ops if op.sent is not None and op.outcome is Outcome.OK}
    assert recorded == acked
    assert len(ops) == sum(n in ("producer_send_success", "producer_send_error") for n in names)
    assert all(op.start_ns <= op.end_ns for op in ops)
    # In the order produce() took them, the acknowledged offsets of one partition only go up.
    offsets = [op.sent.offset for op in sorted(ops, key=lambda op: op.start_ns) if op.sent is not None]
    assert offsets == sorted(offsets)
