"""The checker as the idempotent pipeline uses it (one topic, no output, acknowledged ids committed and
the others unknown) can fail: each damage to a correct history is found and named, and a send that
failed may be absent but is judged like any other record when present."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from integrity_build import IN, Log

from harness.integrity.checker import check
from harness.integrity.model import Expectation, Findings
from harness.integrity.run import reaching
from harness.workload import pipeline_record
from harness.workload.write_log import IdRange, TxnOutcome, outcome_ranges

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

N, KEYS, PARTITIONS = 12, 3, 2
FAILED = 7  # the one send whose delivery failed (unknown: it may or may not be in the log)


def history(present: Callable[[int], bool] = lambda i: True) -> tuple[Log, tuple[IdRange, ...]]:
    """An idempotent producer's log: ids 0..N-1, key i % KEYS, each key numbered in send order; every
    send acknowledged but FAILED; records `present` are in the log."""
    log, seq = Log(), [0] * KEYS
    for i in range(N):
        k = i % KEYS
        rec = pipeline_record.make(i, f"k{k}", seq[k])
        seq[k] += 1
        if present(i):
            log.write(IN, k % PARTITIONS, rec, logged=i != FAILED)
    return log, tuple(outcome_ranges(0, [i != FAILED for i in range(N)]))


def judge(spark: SparkSession, log: Log, ranges: tuple[IdRange, ...]) -> Findings:
    raw = spark.createDataFrame(log.rows, "topic string, partition int, offset bigint, raw string")
    writes = spark.createDataFrame(log.writes, "id bigint, topic string, partition int, offset bigint")
    findings, anomalies = check(raw, Expectation((IN,), (), ranges), writes)
    anomalies.unpersist()
    return findings


def counts(findings: Findings) -> dict[str, int]:
    return {k.value: n for k, n in findings.counts.items() if n}


def test_outcome_ranges_are_runs_of_acknowledged_and_unknown_ids() -> None:
    assert outcome_ranges(10, [True, True, False, True]) == [
        IdRange(10, 12, TxnOutcome.COMMITTED), IdRange(12, 13, TxnOutcome.UNKNOWN),
        IdRange(13, 14, TxnOutcome.COMMITTED),
    ]
    assert outcome_ranges(0, []) == []


@pytest.mark.parametrize("failed_in_log", [True, False], ids=["failed-send-in-log", "failed-send-absent"])
def test_a_correct_history_has_no_anomaly(spark: SparkSession, failed_in_log: bool) -> None:
    """Every acknowledged record once, keys in order: nothing, whether the failed send landed or not."""
    log, ranges = history(lambda i: failed_in_log or i != FAILED)
    findings = judge(spark, log, ranges)
    assert counts(findings) == {}, findings.describe_failures()
    (t,) = findings.totals
    assert (t.records, t.distinct_valid, t.expected) == (N - (not failed_in_log), N - 1, N - 1)


@dataclass(frozen=True)
class Damage:
    """One alteration of a correct log and the anomalies the checker must name for it."""

    name: str
    alter: Callable[[Log], None]
    expected: dict[str, int]


def _append_copy(rid: int) -> Callable[[Log], None]:
    """A retry written twice: the record appended again at the end of its partition."""
    def alter(log: Log) -> None:
        topic, partition, _, raw = next(r for r in log.rows if pipeline_record.record_id(r[3].encode()) == rid)
        log.append(topic, partition, raw)
    return alter


def _drop(rid: int) -> Callable[[Log], None]:
    def alter(log: Log) -> None:
        log.rows = [r for r in log.rows if pipeline_record.record_id(r[3].encode()) != rid]
    return alter


def _swap(a: int, b: int) -> Callable[[Log], None]:
    """Two records of one key exchange offsets: the later-sent one is read first."""
    def alter(log: Log) -> None:
        value = {pipeline_record.record_id(r[3].encode()): r[3] for r in log.rows}
        swapped = {a: value[b], b: value[a]}
        log.rows = [(t, p, o, swapped.get(pipeline_record.record_id(v.encode()), v)) for t, p, o, v in log.rows]
    return alter


def _corrupt(rid: int) -> Callable[[Log], None]:
    def alter(log: Log) -> None:
        rec = pipeline_record.make(rid, "x", 0)
        log.rows = [(t, p, o, v.replace(rec.payload, "0" * len(rec.payload))) for t, p, o, v in log.rows]
    return alter


def _foreign(log: Log) -> None:
    log.append(IN, 0, pipeline_record.make(99, "k0", 9).encode())


DAMAGES = [
    Damage("acknowledged-record-written-twice", _append_copy(3), {"duplicate": 1}),
    Damage("failed-send-written-twice", _append_copy(FAILED), {"duplicate": 1}),
    Damage("acknowledged-record-lost", _drop(4), {"lost": 1}),
    Damage("key-out-of-send-order", _swap(0, 3), {"order_violation": 1}),
    Damage("payload-changed", _corrupt(5), {"checksum_mismatch": 1, "lost": 1}),
    Damage("record-never-sent", _foreign, {"unexpected": 1}),
]


@pytest.mark.parametrize("damage", DAMAGES, ids=[d.name for d in DAMAGES])
def test_each_damage_is_found_and_named(spark: SparkSession, damage: Damage) -> None:
    log, ranges = history()
    damage.alter(log)
    findings = judge(spark, log, ranges)
    assert counts(findings) == damage.expected, findings.describe_failures()
    assert not findings.ok


def test_the_read_reaches_the_last_acknowledged_write_past_a_short_log_end() -> None:
    """Tansu 0.6.0 in memory answers ListOffsets LATEST 11 for a partition whose acknowledged writes
    end at 15: the read goes to 15; where LATEST is already past the acknowledged end, it stays."""
    ranges = {"t": {"0": [0, 11], "1": [3, 20]}}
    assert reaching(ranges, {"t": {0: 15, 1: 12}}) == {"t": {"0": [0, 15], "1": [3, 20]}}
    assert reaching(ranges, {"other": {0: 99}}) == ranges
