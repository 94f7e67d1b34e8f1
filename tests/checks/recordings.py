"""Helpers of the check tests: where the recorded answers live, and how to break a recorded log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.protocol.records import RecordBatch, parse_batches, set_partition_leader_epoch

DATA = Path(__file__).resolve().parent / "data"

Recording = Callable[[str], dict[str, Any]]  # the `recording` fixture: name -> a fresh copy, free to alter


def batches(blob: bytes) -> list[RecordBatch]:
    return parse_batches(blob)


def restamp(blob: bytes, offset: int, epoch: int) -> bytes:
    """The recorded log with the batch holding `offset` stamped `epoch` (as a broker that got it wrong would)."""
    out, pos = [], 0
    for b in parse_batches(blob):
        raw = blob[pos:pos + b.size]
        out.append(set_partition_leader_epoch(raw, epoch) if b.base_offset <= offset <= b.last_offset else raw)
        pos += b.size
    return b"".join(out)
