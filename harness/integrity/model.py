"""What the checker is told (expected ids, truncation windows, what the scene did) and what it finds
(named anomalies)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum

from harness.histories.observations import TimelineEvent
from harness.workload.write_log import IdRange, TxnOutcome


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


@dataclass(frozen=True)
class ReportMeta:
    """What a report says of the scene it judged (report.json's "meta", the head of summary.txt): the
    scene's name; a scene's own subclass (harness.scenarios.integrity, idempotent_writes) adds what it
    did, a field each, in the order the report lists them."""

    scenario: str

    def as_json(self) -> dict[str, object]:
        """The fields as the report writes them: sequences as lists, a timeline event as its EventLog line."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _plain(value: object) -> object:
    if isinstance(value, TimelineEvent):
        return value.flat()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class AnomalyRow:
    """One row of the checker's anomalies (harness.integrity.checker.ANOMALY_COLUMNS, its fields in
    order): the anomaly's `kind`, where it is (topic, partition, offset), which
    record (id, key, seq) and why (`detail`). A lost id that no acknowledged write placed has no
    partition or offset."""

    kind: Anomaly
    topic: str
    partition: int | None
    offset: int | None
    id: int | None
    key: str | None
    seq: int | None
    detail: str | None


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
    samples: dict[Anomaly, list[AnomalyRow]]
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
            f"  {r.topic}-{r.partition}@{r.offset} id={r.id} key={r.key} seq={r.seq}: {r.detail}"
            for r in rows
        ]
        return f"{self.count(kind)} {kind.value}, first {len(rows)}:\n" + "\n".join(lines)

    def describe_failures(self) -> str:
        if self.ok:
            return "no failures"
        return "\n".join(self.evidence(k) for k in self.failures)
