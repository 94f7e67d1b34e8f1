"""What the workload did, written down as it happened; the checker reads this, never client internals.

- `IdRange`: a run of ids the generator wrote in one transaction, and how that transaction ended;
  without transactions, a run of ids acknowledged (`committed`) or not (`unknown`).
- `WriteLog`: every write of a committed transaction with the offset its delivery report gave;
  a lost record is attributed to a truncation window through this log. Columnar arrays, because
  a million-record run logs millions of writes.
"""

from __future__ import annotations

import csv
import threading
from array import array
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class TxnOutcome(StrEnum):
    COMMITTED = "committed"
    ABORTED = "aborted"
    # The client failed in a way that leaves the transaction's fate to the coordinator.
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class IdRange:
    first: int
    end: int  # exclusive
    outcome: TxnOutcome

    def __len__(self) -> int:
        return self.end - self.first


def merge_ranges(ranges: list[IdRange]) -> list[IdRange]:
    """Adjacent ranges with the same outcome as one; the checker's expressions stay short."""
    merged: list[IdRange] = []
    for r in sorted(ranges, key=lambda r: r.first):
        if merged and merged[-1].outcome is r.outcome and merged[-1].end == r.first:
            merged[-1] = IdRange(merged[-1].first, r.end, r.outcome)
        else:
            merged.append(r)
    return merged


def outcome_ranges(first: int, acknowledged: list[bool]) -> list[IdRange]:
    """Ids `first`, `first + 1`, ... of one idempotent batch as runs: acknowledged ones `committed`,
    the others `unknown` (a write whose delivery failed or never reported may still be in the log)."""
    runs: list[IdRange] = []
    for i, acked in enumerate(acknowledged):
        outcome = TxnOutcome.COMMITTED if acked else TxnOutcome.UNKNOWN
        if runs and runs[-1].outcome is outcome:
            runs[-1] = IdRange(runs[-1].first, first + i + 1, outcome)
        else:
            runs.append(IdRange(first + i, first + i + 1, outcome))
    return runs


@dataclass
class WriteLog:
    """Acknowledged writes of committed transactions: (id, topic, partition, offset)."""

    topics: list[str] = field(default_factory=list)
    ids: array = field(default_factory=lambda: array("q"))
    topic_index: array = field(default_factory=lambda: array("h"))
    partitions: array = field(default_factory=lambda: array("i"))
    offsets: array = field(default_factory=lambda: array("q"))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def extend(self, writes: list[tuple[int, str, int, int]]) -> None:
        with self._lock:
            for rid, topic, partition, offset in writes:
                try:
                    t = self.topics.index(topic)
                except ValueError:
                    self.topics.append(topic)
                    t = len(self.topics) - 1
                self.ids.append(rid)
                self.topic_index.append(t)
                self.partitions.append(partition)
                self.offsets.append(offset)

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self) -> list[tuple[int, str, int, int]]:
        return [
            (self.ids[i], self.topics[self.topic_index[i]], self.partitions[i], self.offsets[i])
            for i in range(len(self.ids))
        ]

    def write_csv(self, path: Path) -> Path:
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            for i in range(len(self.ids)):
                w.writerow((self.ids[i], self.topics[self.topic_index[i]], self.partitions[i], self.offsets[i]))
        return path

    def absorb(self, other: WriteLog) -> None:
        self.extend(other.rows())


