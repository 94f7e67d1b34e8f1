"""The librdkafka producer driver, the first real writer of client histories: against librdkafka's
own mock cluster (no broker to start), every send it reports on stdout is in its history file, with
the same offset, and its stdout events are unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from harness.clients.drivers.producer import HISTORY_ENV
from harness.histories.history import OpType, Outcome, read_file


def test_the_producer_driver_appends_every_send_to_its_history(tmp_path: Path) -> None:
    path = tmp_path / "history" / "producer.jsonl"
    env = {**os.environ, HISTORY_ENV: str(path), "KCTS_CLIENT_CONFIG": json.dumps({"test.mock.num.brokers": 1})}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.clients.drivers.producer", "kcts-test", "127.0.0.1:1", "t", "w"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
    )
    try:
        time.sleep(2.0)  # a few hundred sends at about 200 a second
        out, _ = proc.communicate("exit\n", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
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
