"""Each consumer's history across the forced unclean election of harness.scenarios.truncation, judged by
Jepsen's anomaly checks in Spark.

A consumer's history is the scene's sends (every record the harness's writers sent, with what the
broker acknowledged) and that consumer's polls (every record its driver reported), written in the
history format into a folder of its own and judged alone: Jepsen's checks are per partition, so
judged together the consumers would vouch for each other's reads (a record one of them skipped is no
lost write while another read it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.histories.history import SUFFIX, HistoryWriter, Operation, OpType
from harness.histories.unclean_anomalies import AnomalySeen, ConsumerAnomalies
from harness.integrity.anomaly_checks import AnomalyFindings, check_anomalies
from harness.integrity.anomaly_frames import load_jsonl
from harness.integrity.timeline_plot import NemesisEvent
from harness.scenarios.truncation import TruncationHistory

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EVERY_CASE = 100_000  # examples asked of the checks: every case of a scene's few hundred operations


@dataclass(frozen=True)
class JudgedConsumer:
    """One consumer's history as written and judged: the verdict's record (`seen`), the checks' own
    findings, the operations and their folder, and the election on the same clock, for the report."""

    seen: ConsumerAnomalies
    findings: AnomalyFindings
    operations: tuple[Operation, ...]
    folder: Path
    events: tuple[NemesisEvent, ...]


def consumer_history(truncation: TruncationHistory, consumer: str) -> tuple[Operation, ...]:
    """Every send of the scene and the polls of `consumer`, in time order."""
    return tuple(sorted((op for op in truncation.operations
                         if op.type is OpType.SEND or op.process == consumer),
                        key=lambda op: (op.start_ns, op.process)))


def write_history(ops: tuple[Operation, ...], folder: Path) -> None:
    """`ops` as one `<process>.jsonl` per process in `folder`, which is emptied first."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"*{SUFFIX}"):
        old.unlink()
    writers: dict[str, HistoryWriter] = {}
    try:
        for op in ops:
            if op.process not in writers:
                path = folder / f"{op.process.replace('/', '-')}{SUFFIX}"
                writers[op.process] = HistoryWriter(folder, op.process, path)
            writers[op.process].write(op)
    finally:
        for w in writers.values():
            w.close()


def judge_consumer(spark: SparkSession, truncation: TruncationHistory, consumer: str, folder: Path) -> JudgedConsumer:
    """Write `consumer`'s history into `folder` and judge it with every anomaly class."""
    ops = consumer_history(truncation, consumer)
    write_history(ops, folder)
    findings = check_anomalies(load_jsonl(spark, folder), read_committed=False, examples=EVERY_CASE)
    cases = tuple(AnomalySeen(c.kind.value, c.offset, c.value, c.detail)
                  for class_cases in findings.examples.values() for c in class_cases)
    seen = ConsumerAnomalies(consumer, truncation.clients.get(consumer.split("/")[0]),
                             sum(len(op.polled) for op in ops), findings.found, cases,
                             truncation.divergence, truncation.position_before,
                             truncation.new_leader_writes[0].offset if truncation.new_leader_writes else None)
    start, end = truncation.election_ns
    events = (NemesisEvent(start, "unclean election", end),) if start else ()
    return JudgedConsumer(seen, findings, ops, folder, events)
