"""The integrity checker on small hand-built histories: each anomaly is found, named and located."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from integrity_build import IN, OUT, Log, committed, pipeline

from harness.integrity.checker import WRITE_COLUMNS, InPlace, check, with_outcome
from harness.integrity.model import Anomaly, Expectation, Findings, TruncationWindow
from harness.integrity.read import VALUES_SCHEMA, write_values
from harness.workload import pipeline_record
from harness.workload.write_log import IdRange, TxnOutcome

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


# How the records reach the checker's tasks: as Spark's Kafka source deals them (a partition or
# two to a task), from a Parquet layout read in place (a file per partition; files of two records,
# a task each; two files whose offsets interleave), one record per task (every partition split, so
# each key's order is decided across tasks), and dealt in turn (offsets of one partition
# interleaved between tasks).
LAYOUTS = ("dataframe", "in_place", "in_place_rolled", "in_place_interleaved", "record_per_task", "interleaved")
# The gate judges each case on the layout the checker reads in a run (in_place) and on the one that
# decides every key's order across tasks (record_per_task); the other four are heavy (tox -e integrity),
# as each case costs a few Spark jobs per layout.
GATE_LAYOUTS = ("in_place", "record_per_task")


def layouts() -> list[object]:
    return [pytest.param(name, marks=() if name in GATE_LAYOUTS else pytest.mark.heavy) for name in LAYOUTS]


def records_in(spark: SparkSession, log: Log, layout: str, folder: Path) -> DataFrame | InPlace:
    from pyspark.sql import functions as F

    raw = spark.createDataFrame(log.rows, VALUES_SCHEMA)
    if layout in ("in_place", "in_place_rolled"):
        write_values(raw, folder, records_per_file=2 if layout == "in_place_rolled" else None)
        return InPlace(folder)
    if layout == "in_place_interleaved":
        write_values(raw.where(F.col("offset") % 2 == 0), folder)
        raw.where(F.col("offset") % 2 == 1).write.mode("append").partitionBy("topic", "partition").parquet(str(folder))
        return InPlace(folder)
    if layout == "record_per_task":
        return spark.createDataFrame(spark.sparkContext.parallelize(log.rows, len(log.rows)), VALUES_SCHEMA)
    if layout == "interleaved":
        return raw.repartition(3)
    return raw


def run(
    spark: SparkSession, log: Log, ranges: tuple[IdRange, ...], windows: tuple[TruncationWindow, ...] = (),
    outputs: tuple[str, ...] = (OUT,), with_writes: bool = True, layout: str = "dataframe",
    folder: Path | None = None,
) -> Findings:
    writes = spark.createDataFrame(log.writes, "id bigint, topic string, partition int, offset bigint")
    assert tuple(writes.columns) == WRITE_COLUMNS
    expect = Expectation((IN,), outputs, ranges, windows)
    with tempfile.TemporaryDirectory(prefix="kcts-layout-") as tmp:
        records = records_in(spark, log, layout, Path(folder or tmp) / "records")
        findings, anomalies = check(records, expect, writes if with_writes else None)
        anomalies.unpersist()
    return findings


def only(findings: Findings, **expected: int) -> None:
    counts = {k.value: n for k, n in findings.counts.items() if n}
    assert counts == expected, f"anomalies {counts}, expected {expected}:\n{findings.describe_failures()}"


@pytest.mark.parametrize("layout", layouts())
def test_a_correct_pipeline_has_no_anomaly(spark: SparkSession, layout: str) -> None:
    """Every id once per topic, keys in order, checksums right: nothing is reported, totals add up."""
    findings = run(spark, pipeline(n=12), committed(12), layout=layout)
    only(findings)
    assert [(t.topic, t.records, t.distinct_valid, t.expected) for t in findings.totals] == [
        (IN, 12, 12, 12), (OUT, 12, 12, 12),
    ]


@pytest.mark.parametrize("layout", layouts())
def test_a_missing_output_record_outside_every_window_is_a_lost_write(spark: SparkSession, layout: str) -> None:
    """An output record acknowledged at out-1@1 is absent, and the only truncation window is elsewhere:
    the checker reports it as `lost` (a failure), with where it was written."""
    log = pipeline(n=6, keys=2, partitions=2)
    log.rows = [r for r in log.rows if not (r[0] == OUT and r[1] == 1 and r[2] == 1)]
    findings = run(spark, log, committed(6), windows=(TruncationWindow(OUT, 0, 0, 3),), layout=layout)
    only(findings, lost=1)
    (row,) = findings.samples[Anomaly.LOST]
    assert (row.topic, row.partition, row.offset, row.id) == (OUT, 1, 1, 3), row
    assert "outside every reported truncation window" in str(row.detail)
    assert not findings.ok


def test_a_missing_record_inside_a_reported_window_is_explained(spark: SparkSession) -> None:
    """The same loss, with the nemesis reporting out-1 [1, 2) truncated: `lost_in_truncation`, not a failure."""
    log = pipeline(n=6, keys=2, partitions=2)
    log.rows = [r for r in log.rows if not (r[0] == OUT and r[1] == 1 and r[2] == 1)]
    findings = run(spark, log, committed(6), windows=(TruncationWindow(OUT, 1, 1, 2),))
    only(findings, lost_in_truncation=1)
    assert findings.ok, findings.describe_failures()
    assert [t.anomalies for t in findings.totals] == [{}, {Anomaly.LOST_IN_TRUNCATION: 1}], findings.totals


def test_a_loss_with_no_acknowledged_write_cannot_be_explained(spark: SparkSession) -> None:
    """Without a write log, a missing record has no known offset: no window can explain it."""
    log = pipeline(n=6, keys=2, partitions=2)
    log.rows = [r for r in log.rows if not (r[0] == OUT and r[1] == 1 and r[2] == 1)]
    findings = run(spark, log, committed(6), windows=(TruncationWindow(OUT, 1, 0, 10),), with_writes=False)
    only(findings, lost=1)
    assert "no acknowledged write" in str(findings.samples[Anomaly.LOST][0].detail)


@pytest.mark.parametrize("layout", layouts())
def test_a_record_read_twice_is_one_duplicate_and_not_an_order_violation(spark: SparkSession, layout: str) -> None:
    """A copy of id 0 appended at the end of its partition: one `duplicate` at its first offset."""
    log = pipeline(n=6, keys=2, partitions=2)
    log.append(OUT, 0, pipeline_record.make(0, "k0", 0, stage="proc>0").encode())
    findings = run(spark, log, committed(6), layout=layout)
    only(findings, duplicate=1)
    (row,) = findings.samples[Anomaly.DUPLICATE]
    assert (row.topic, row.id, row.offset) == (OUT, 0, 0) and "2 copies" in str(row.detail), row


def test_records_of_aborted_transactions_are_aborted_reads(spark: SparkSession) -> None:
    """A processor record flagged `A`, and a generator id from an aborted range, both visible: two
    `aborted_visible`, nothing else."""
    log = pipeline(n=4, keys=1, partitions=1)
    log.append(OUT, 0, pipeline_record.make(1, "k0", 1, flag=pipeline_record.ABORT, stage="proc>0").encode())
    log.append(IN, 0, pipeline_record.make(4, "k0", -1, flag=pipeline_record.COMMIT).encode())
    ranges = (IdRange(0, 4, TxnOutcome.COMMITTED), IdRange(4, 6, TxnOutcome.ABORTED))
    findings = run(spark, log, ranges)
    only(findings, aborted_visible=2)
    details = sorted(str(r.detail) for r in findings.samples[Anomaly.ABORTED_VISIBLE])
    assert details == [
        "id of a generator transaction that was aborted", "written by proc>0 into a transaction it aborted",
    ]


@pytest.mark.parametrize("layout", layouts())
def test_a_key_going_backwards_is_an_order_violation(spark: SparkSession, layout: str) -> None:
    """In the output, key k0's records 1 and 2 swap places: one `order_violation` at the later offset."""
    log = Log()
    recs = [pipeline_record.make(i, "k0", i) for i in range(4)]
    for r in recs:
        log.write(IN, 0, r)
    for r in (recs[0], recs[2], recs[1], recs[3]):
        log.write(OUT, 0, r.restage("proc>0", pipeline_record.COMMIT))
    findings = run(spark, log, committed(4), layout=layout)
    only(findings, order_violation=1)
    (row,) = findings.samples[Anomaly.ORDER_VIOLATION]
    assert (row.offset, row.seq) == (2, 1) and "after seq 2" in str(row.detail), row


def test_corrupt_and_unparseable_values_are_checksum_mismatches(spark: SparkSession) -> None:
    """A payload changed on the way (crc no longer matches) and a value that is not a record: two
    `checksum_mismatch`; the changed record is then also missing from that topic (`lost`)."""
    log = pipeline(n=3, keys=1, partitions=1)
    rec = pipeline_record.make(1, "k0", 1)
    tampered = rec.encode().replace(rec.payload.encode(), b"x" * len(rec.payload))
    log.rows = [(t, p, o, tampered.decode() if (t, o) == (OUT, 1) else v) for t, p, o, v in log.rows]
    log.append(OUT, 0, "not a record")
    findings = run(spark, log, committed(3))
    only(findings, checksum_mismatch=2, lost=1)
    details = sorted(str(r.detail) for r in findings.samples[Anomaly.CHECKSUM_MISMATCH])
    assert details[0].startswith("crc field") and details[1] == "unparseable value: not a record", details


def test_an_id_never_generated_is_unexpected(spark: SparkSession) -> None:
    log = pipeline(n=3, keys=1, partitions=1)
    log.append(OUT, 0, pipeline_record.make(99, "k0", 3).encode())
    findings = run(spark, log, committed(3))
    only(findings, unexpected=1)


@pytest.mark.parametrize("in_input", [True, False])
def test_records_of_unknown_transactions_are_owed_to_outputs_once_read(spark: SparkSession, in_input: bool) -> None:
    """Ids of a generator transaction with an unknown outcome: absent everywhere is fine; present in
    the input but absent from an output is a `lost` write."""
    log = pipeline(n=3, keys=1, partitions=1)
    if in_input:
        log.write(IN, 0, pipeline_record.make(3, "k0", 3))
    findings = run(spark, log, (IdRange(0, 3, TxnOutcome.COMMITTED), IdRange(3, 4, TxnOutcome.UNKNOWN)))
    if in_input:
        only(findings, lost=1)
        assert findings.samples[Anomaly.LOST][0].id == 3
    else:
        only(findings)


def test_each_id_gets_the_outcome_of_the_range_holding_it(spark: SparkSession) -> None:
    """with_outcome joins each id to its range's outcome: the same answer as plain membership at
    every id, range edges, gaps, ids past the last range and null ids included, with 300 ranges
    of mixed outcomes (more than a million-record run has) spread over the buckets."""
    outcomes = list(TxnOutcome)
    ranges = [IdRange(10 * i, 10 * i + 1 + i % 7, outcomes[i % 3]) for i in range(300)]
    ids = spark.createDataFrame([(i,) for i in range(-5, 3010)] + [(None,)], "id bigint")
    got = {r["id"]: r["outcome"] for r in with_outcome(ids, ranges).collect()}
    expected = {i: next((r.outcome.value for r in ranges if r.first <= i < r.end), None) for i in range(-5, 3010)}
    assert got == {**expected, None: None}, sorted(i for i in expected if got[i] != expected[i])[:10]
    assert {r["outcome"] for r in with_outcome(ids, []).collect()} == {None}


@pytest.mark.parametrize("layout", layouts())
def test_a_copy_in_another_partition_is_a_duplicate_there_and_not_an_order_violation(
    spark: SparkSession, layout: str,
) -> None:
    """Id 1 (key k1, partition 1) also written into partition 0 of the output, after k0's records:
    one `duplicate` per topic counts copies in every partition; the copy is its evidence, not an
    order violation of key k1 in partition 0."""
    log = pipeline(n=6, keys=2, partitions=2)
    log.append(OUT, 0, pipeline_record.make(1, "k1", 0, stage="proc>0").encode())
    findings = run(spark, log, committed(6), layout=layout)
    only(findings, duplicate=1)
    (row,) = findings.samples[Anomaly.DUPLICATE]
    # The first copy in (partition, offset) order is the one appended to partition 0, at offset 3.
    assert (row.topic, row.partition, row.offset, row.id) == (OUT, 0, 3, 1), row
    assert row.detail == "2 copies, offsets 3 .. 3", row


@pytest.mark.parametrize("layout", layouts())
def test_an_order_violation_at_the_first_record_of_a_later_task_is_found(spark: SparkSession, layout: str) -> None:
    """Key k0 goes back (seq 3 then 1) between offsets 2 and 3 of one partition, whichever task
    each of them lands in: one `order_violation`, at offset 3, naming offset 2."""
    log = Log()
    recs = [pipeline_record.make(i, "k0", i) for i in range(6)]
    for r in recs:
        log.write(IN, 0, r)
    for r in (recs[0], recs[2], recs[3], recs[1], recs[4], recs[5]):
        log.write(OUT, 0, r.restage("proc>0", pipeline_record.COMMIT))
    findings = run(spark, log, committed(6), layout=layout)
    only(findings, order_violation=1)
    (row,) = findings.samples[Anomaly.ORDER_VIOLATION]
    assert (row.offset, row.seq, row.detail) == (3, 1, "seq 1 after seq 3 at offset 2"), row
