"""One history format for every client stack: each operation a client performed, as it performed it.

After Jepsen's Kafka workload (jepsen/src/jepsen/tests/kafka.clj in jepsen-io/jepsen), which records
every send and poll of every client with an outcome of ok, fail or info, and checks the whole history
afterwards. Jepsen's ops are transactions of micro-ops (`[:send k v]`, `[:poll]`); here an operation is
one client call, and a transaction is the operations that share a `txn` id between a `txn-begin` and
its `txn-commit` or `txn-abort`:

- `send`: one record produced; its payload `Sent` (topic, partition, value, and the acknowledged
  offset, or the error);
- `poll`: one consumer poll; its payload the records it returned, `Polled` (topic, partition, offset,
  value, the leader epoch of its batch);
- `commit`: a consumer offset commit (no payload here: the offsets belong to the group checks);
- `txn-begin`, `txn-commit`, `txn-abort`: the transaction's own calls.

Outcomes follow Jepsen's op types: `ok` (it happened), `fail` (it certainly did not), `info` (unknown:
a timeout, a crash). Times are `time.monotonic_ns()`: on Linux that clock is one for the whole machine,
so the operations of driver processes on one host are ordered against each other.

Files: one JSON-lines file per process (`<process>.jsonl`), one operation a line, appended and flushed
as each operation ends, so a driver killed mid-run leaves every operation it finished. The line is the
flat JSON of `Operation` (`encode`); values are text, so Spark's JSON reader loads the folder without
Python touching a row (harness.integrity.anomaly_frames).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from harness.histories.json_codec import HistoryFormatError

SUFFIX = ".jsonl"


class OpType(StrEnum):
    SEND = "send"
    POLL = "poll"
    COMMIT = "commit"
    TXN_BEGIN = "txn-begin"
    TXN_COMMIT = "txn-commit"
    TXN_ABORT = "txn-abort"


class Outcome(StrEnum):
    """Jepsen's completion types: :ok, :fail (certainly not done), :info (indeterminate)."""

    OK = "ok"
    FAIL = "fail"
    INFO = "info"


@dataclass(frozen=True)
class Sent:
    """A send's payload: where the record was meant to go, and the offset the broker acknowledged
    (None: no acknowledgement) or the error the client reported instead."""

    topic: str
    partition: int
    value: str
    offset: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class Polled:
    """One record a poll returned, with the leader epoch its batch carried (None: not exposed)."""

    topic: str
    partition: int
    offset: int
    value: str
    leader_epoch: int | None = None


@dataclass(frozen=True)
class Operation:
    """One client call: who (`process`), what (`type`), how it ended (`outcome`), when (`start_ns`,
    `end_ns`, monotonic), in which transaction (`txn`: an id unique to one transaction attempt, not
    the producer's transactional.id, which many attempts share), and its payload (`sent` for a send,
    `polled` for a poll)."""

    process: str
    type: OpType
    outcome: Outcome
    start_ns: int
    end_ns: int
    txn: str | None = None
    sent: Sent | None = None
    polled: tuple[Polled, ...] = field(default=())

    def __post_init__(self) -> None:
        # A history that says "send" without saying what was sent cannot be checked: refuse it at
        # the writer, not in the checker a million rows later.
        if (self.type is OpType.SEND) != (self.sent is not None):
            raise HistoryFormatError(f"{self.type} operation with sent={self.sent!r}")
        if self.polled and self.type is not OpType.POLL:
            raise HistoryFormatError(f"{self.type} operation with polled records")

    def encode(self) -> dict[str, Any]:
        return {
            "process": self.process, "type": self.type.value, "outcome": self.outcome.value,
            "start_ns": self.start_ns, "end_ns": self.end_ns, "txn": self.txn,
            "sent": None if self.sent is None else vars(self.sent),
            "polled": [vars(p) for p in self.polled],
        }

    @classmethod
    def decode(cls, data: dict[str, Any]) -> Operation:
        try:
            sent = data.get("sent")
            return cls(
                str(data["process"]), OpType(data["type"]), Outcome(data["outcome"]),
                int(data["start_ns"]), int(data["end_ns"]), data.get("txn"),
                None if sent is None else Sent(**sent),
                tuple(Polled(**p) for p in data.get("polled") or ()),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise HistoryFormatError(f"not an operation: {json.dumps(data)[:200]} ({exc})") from exc


class HistoryWriter:
    """Appends one process's operations to `<folder>/<process>.jsonl`, each flushed as it is written
    (a crash loses at most the operation in progress)."""

    def __init__(
        self, folder: str | os.PathLike[str], process: str, path: str | os.PathLike[str] | None = None,
    ) -> None:
        """`path` names the file itself, when a caller (a driver told by an env var) chose it."""
        self.process = process
        self.path = Path(path) if path is not None else Path(folder) / f"{process}{SUFFIX}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Append, line-buffered: a driver restarted under the same process name continues its file.
        self._file: IO[str] = self.path.open("a", buffering=1)

    def write(self, op: Operation) -> None:
        if op.process != self.process:
            raise HistoryFormatError(f"{self.path} holds process {self.process}, not {op.process}")
        self._file.write(json.dumps(op.encode(), separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_file(path: str | os.PathLike[str]) -> Iterator[Operation]:
    """The operations of one file, in order. A last line cut short by a crash is skipped: it is the
    operation in progress, which never completed."""
    lines = Path(path).read_text().splitlines()
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines) - 1:
                return
            raise HistoryFormatError(f"{path}:{n + 1}: not JSON") from None
        yield Operation.decode(data)


def read_folder(folder: str | os.PathLike[str]) -> list[Operation]:
    """Every operation of every process file in `folder`, ordered by start time."""
    ops = [op for path in sorted(Path(folder).glob(f"*{SUFFIX}")) for op in read_file(path)]
    return sorted(ops, key=lambda op: (op.start_ns, op.process))
