"""What the checker is told (expected ids, truncation windows) and what it finds (named anomalies)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from harness.workload.history import IdRange, TxnOutcome


class Anomaly(StrEnum):
    """Anomaly names, after Jepsen's Kafka checker where one exists."""

    LOST = "lost"  # lost write: an expected record is absent and no truncation window explains it
    LOST_IN_TRUNCATION = "lost_in_truncation"  # absent, and last written inside a reported truncation window
    DUPLICATE = "duplicate"  # one id more than once in a topic under read_committed
    ABORTED_VISIBLE = "aborted_visible"  # aborted read (G1a): a record of an aborted transaction is visible
    ORDER_VIOLATION = "order_violation"  # nonmonotonic: a key's sequence number goes down along the offsets
    CHECKSUM_MISMATCH = "checksum_mismatch"  # payload does not match its CRC-32, or the value does not parse
    UNEXPECTED = "unexpected"  # a well-formed record whose id the generator never wrote

    @property
    def is_failure(self) -> bool:
        return self is not Anomaly.LOST_IN_TRUNCATION


@dataclass(frozen=True)
class TruncationWindow:
    """Offsets [start, end) of one partition that the nemesis reports as truncated."""

    topic: str
    partition: int
    start: int
    end: int

    def __contains__(self, where: tuple[str, int, int]) -> bool:
        topic, partition, offset = where
        return topic == self.topic and partition == self.partition and self.start <= offset < self.end

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition} [{self.start}, {self.end})"


@dataclass(frozen=True)
class Expectation:
    """What the topics should hold: every committed id once in every topic, in per-key order.

    Ids of `unknown` transactions may be absent from the inputs; an output must hold each of them
    that its input holds.
    """

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    ranges: tuple[IdRange, ...]
    windows: tuple[TruncationWindow, ...] = ()

    def of(self, outcome: TxnOutcome) -> list[IdRange]:
        return [r for r in self.ranges if r.outcome is outcome]

    @property
    def expected_per_topic(self) -> int:
        return sum(len(r) for r in self.of(TxnOutcome.COMMITTED))

    @property
    def topics(self) -> tuple[str, ...]:
        return self.inputs + self.outputs


@dataclass
class TopicTotals:
    topic: str
    role: str
    records: int  # everything read under read_committed
    distinct_valid: int  # distinct ids of well-formed, committed-flagged, expected records
    expected: int
    aborted_in_log: int | None = None  # aborted-flagged records seen under read_uncommitted
    uncommitted_records: int | None = None  # everything read under read_uncommitted
    uncommitted_capped: bool = False  # that read covered only a prefix of some partition
    anomalies: dict[Anomaly, int] = field(default_factory=dict)


@dataclass
class Findings:
    counts: dict[Anomaly, int]
    samples: dict[Anomaly, list[dict[str, object]]]
    totals: list[TopicTotals]
    windows: tuple[TruncationWindow, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)

    def count(self, kind: Anomaly) -> int:
        return self.counts.get(kind, 0)

    @property
    def failures(self) -> dict[Anomaly, int]:
        return {k: n for k, n in self.counts.items() if n and k.is_failure}

    @property
    def ok(self) -> bool:
        return not self.failures

    def evidence(self, kind: Anomaly, n: int = 5) -> str:
        """The first few rows of one anomaly, one line each, for assertion messages."""
        rows = self.samples.get(kind, [])[:n]
        if not rows:
            return f"no {kind.value}"
        lines = [
            f"  {r['topic']}-{r['partition']}@{r['offset']} id={r['id']} key={r['key']} seq={r['seq']}: {r['detail']}"
            for r in rows
        ]
        return f"{self.count(kind)} {kind.value}, first {len(rows)}:\n" + "\n".join(lines)

    def describe_failures(self) -> str:
        if self.ok:
            return "no failures"
        return "\n".join(self.evidence(k) for k in self.failures)
