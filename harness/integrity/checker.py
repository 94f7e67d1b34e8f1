"""The checker: pure functions from record DataFrames and an expectation to named anomalies.

Nothing here talks to Kafka: `check` takes the records as read (see `read.py`), so unit tests feed
it a few hand-built rows. Each anomaly is one row of the `anomalies` DataFrame:
(kind, topic, partition, offset, id, key, seq, detail).

Definitions (per topic, under read_committed):
- checksum_mismatch: the value does not parse, or crc32(payload) differs from its `crc` field;
- aborted_visible: flag `A`, or an id of a generator transaction that was aborted;
- unexpected: any other id the generator never wrote in a committed or unknown transaction;
- duplicate: a valid id read more than once (one row per id, at its first offset);
- order_violation: along the offsets of one partition, a key's `seq` is lower than the one before
  it (later copies of duplicated ids are left to `duplicate`);
- lost / lost_in_truncation: an expected id that is absent; it is `lost_in_truncation` when its
  last acknowledged write lies inside a reported truncation window, else `lost`.

How it runs, and why: every check but duplicate and lost is decided inside one Kafka partition, and
those two need only which ids each partition holds. So the records are read once, a partition to a
Spark task, and judged there with numpy (`record_pass`); the tasks give the anomalies they can name
and, per topic, bitmaps of the ids they hold, which the driver merges. Nothing is shuffled. Only
when the bitmaps show an id held twice by different tasks, or an id missing, does a second pass ask
every task for the records of those ids, to name the copies and attribute the losses. (A window
over every record by key, then a join of the copies, cost 4x a plain read at ten million records.)
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from harness import progress
from harness.integrity.layout import part_files, partition_dirs, size, spread
from harness.integrity.model import Anomaly, AnomalyRow, Expectation, Findings, TopicTotals, TruncationWindow
from harness.integrity.record_pass import (
    PASS_SCHEMA,
    PassPlan,
    Summary,
    packed,
    record_pass,
    record_pass_in_place,
    unbits,
)
from harness.workload.write_log import IdRange, TxnOutcome

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    Writes: TypeAlias = DataFrame | Callable[[], DataFrame] | None

ANOMALY_COLUMNS = tuple(f.name for f in fields(AnomalyRow))  # the rows' columns are the sample type's fields
WRITE_COLUMNS = ("id", "topic", "partition", "offset")
SAMPLES = 20


RANGE_BUCKETS = 4096  # about how many id buckets the ranges are spread over (see `with_outcome`)


def bucket_width(ranges: Sequence[IdRange]) -> int:
    """How many ids one bucket holds: ids are dense from 0, so the width grows with the largest."""
    return max(1, -(-max((r.end for r in ranges), default=1) // RANGE_BUCKETS))


def range_table(spark: SparkSession, ranges: Sequence[IdRange], width: int) -> DataFrame:
    """(bucket, first, end, outcome): each range once per id bucket it covers; a few thousand rows
    whatever the number of ranges or records."""
    rows = [(b, r.first, r.end, r.outcome.value) for r in ranges if r.end > r.first
            for b in range(r.first // width, (r.end - 1) // width + 1)]
    return spark.createDataFrame(rows, "bucket bigint, first bigint, end bigint, outcome string")


def with_outcome(df: DataFrame, ranges: Sequence[IdRange], column: str = "id") -> DataFrame:
    """`df` with `outcome`: the TxnOutcome value of the range holding `column`, or null for an id
    in none (or a null id).

    One broadcast hash join on the id's bucket, then two comparisons: a per-record cost that does
    not grow with the ranges, and one small generated method. (A tree of CASE WHEN over the ranges,
    asked three times per record, cost as much as the window shuffle at a million records and
    more to compile at every query; a chain of ORs outgrew codegen at ten million.)"""
    from pyspark.sql import functions as F

    width = bucket_width(ranges)
    table = range_table(df.sparkSession, ranges, width)
    keyed = df.withColumn("_bucket", F.floor(F.col(column) / F.lit(width)).cast("bigint"))
    t = F.broadcast(table.select(F.col("bucket").alias("_b"), F.col("first").alias("_first"),
                                 F.col("end").alias("_end"), F.col("outcome")))
    joined = keyed.join(t, (F.col("_bucket") == F.col("_b")) & (F.col(column) >= F.col("_first"))
                        & (F.col(column) < F.col("_end")), "left")
    return joined.drop("_bucket", "_b", "_first", "_end")


def is_outcome(*outcomes: TxnOutcome) -> Column:
    """Whether a row's `outcome` (from `with_outcome`) is one of `outcomes`; false for none."""
    from pyspark.sql import functions as F

    return F.coalesce(F.col("outcome").isin([o.value for o in outcomes]), F.lit(False))


def in_windows(windows: tuple[TruncationWindow, ...]) -> Column:
    from pyspark.sql import functions as F

    conditions = [
        (F.col("topic") == w.topic) & (F.col("partition") == w.partition)
        & (F.col("offset") >= w.start) & (F.col("offset") < w.end)
        for w in windows
    ]
    return reduce(lambda a, b: a | b, conditions, F.lit(False))


def _rows(df: DataFrame, kind: Anomaly, detail: Column) -> DataFrame:
    from pyspark.sql import functions as F

    return df.select(
        F.lit(kind.value).alias("kind"), F.col("topic").cast("string"), F.col("partition").cast("int"),
        F.col("offset").cast("bigint"), F.col("id").cast("bigint"), F.col("key").cast("string"),
        F.col("seq").cast("bigint"), detail.cast("string").alias("detail"),
    )


@dataclass(frozen=True)
class InPlace:
    """Records already in a Parquet layout of (offset, raw), partitioned by topic and partition
    (`read.write_values`): `check` reads each part file in its own task, or each directory (`whole`)
    where one partition's files hold offsets between each other's."""

    folder: Path
    whole: bool = False

    def pieces(self) -> list[tuple[str, int, Path]]:
        """(topic, partition, path) of each piece a task judges alone: a part file, or a directory."""
        dirs = sorted(partition_dirs(self.folder).items())
        if self.whole:
            return [(t, p, d) for (t, p), d in dirs]
        return [(t, p, f) for (t, p), d in dirs for f in part_files(d)]


def judged(records: DataFrame | InPlace, plan: PassPlan, spark: SparkSession) -> DataFrame:
    """`record_pass` over every record: rows of PASS_SCHEMA (lazy)."""
    if isinstance(records, InPlace):
        pieces = records.pieces()
        tasks = spread(spark, [(t, p, str(path)) for t, p, path in pieces], [size(path) for _, _, path in pieces],
                       "topic string, partition int, path string")
        return tasks.mapInArrow(lambda batches: record_pass_in_place(batches, plan), PASS_SCHEMA)
    values = records.select("topic", "partition", "offset", "raw")
    return values.mapInArrow(lambda batches: record_pass(batches, plan), PASS_SCHEMA)


@dataclass
class Merged:
    """The tasks' summaries, merged: per topic the records read and the valid ids held (bool over the
    plan's domain), the ids that more than one task held (their copies need a second pass), and the
    (topic, partition) whose records Spark spread over tasks."""

    records: dict[str, int]
    seen: dict[str, Any]
    across: dict[str, Any]
    split: set[tuple[str, int]]
    interleaved: bool  # two tasks held offsets of one partition between each other's


def merge(rows: list[Any], topics: Sequence[str], domain: int) -> Merged:
    import numpy as np

    # Merged as packed bits, eight ids a byte, and unpacked once per topic: a task per part file
    # makes tens of these bitmaps at ten million ids.
    width = (domain + 7) // 8
    records = {t: 0 for t in topics}
    seen = {t: np.zeros(width, dtype=np.uint8) for t in topics}
    across = {t: np.zeros(width, dtype=np.uint8) for t in topics}
    spans: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for r in rows:
        topic = r["topic"]
        if r["kind"] == Summary.COUNT:
            records[topic] = records.get(topic, 0) + r["n"]
        elif r["kind"] == Summary.SEEN:
            held = np.frombuffer(r["bits"], dtype=np.uint8)
            before = seen.setdefault(topic, np.zeros(width, dtype=np.uint8))
            twice = across.setdefault(topic, np.zeros(width, dtype=np.uint8))
            twice |= before & held
            before |= held
        elif r["kind"] == Summary.SPAN:
            spans.setdefault((topic, r["partition"]), []).append((r["offset"], r["last_offset"]))
    split = {where for where, held in spans.items() if len(held) > 1}
    interleaved = any(a[1] >= b[0] for where in split for a, b in itertools.pairwise(sorted(spans[where])))
    return Merged(records, {t: unbits(b.tobytes(), domain) for t, b in seen.items()},
                  {t: unbits(b.tobytes(), domain) for t, b in across.items()}, split, interleaved)


def id_mask(ranges: Sequence[IdRange], domain: int) -> Any:
    import numpy as np

    mask = np.zeros(domain, dtype=bool)
    for r in ranges:
        mask[r.first:r.end] = True
    return mask


def missing_ids(m: Merged, expect: Expectation, domain: int) -> dict[str, Any]:
    """Per topic, the ids it owes and lacks: every committed id, and in an output every id of an
    unknown transaction that an input holds."""
    import numpy as np

    committed = id_mask(expect.of(TxnOutcome.COMMITTED), domain)
    unknown = id_mask(expect.of(TxnOutcome.UNKNOWN), domain)
    zero = np.zeros(domain, dtype=bool)
    owed_unknown = reduce(np.logical_or, (m.seen.get(t, zero) for t in expect.inputs), zero) & unknown
    missing = {}
    for t in expect.topics:
        owed = committed | owed_unknown if t in expect.outputs else committed
        lacking = owed & ~m.seen.get(t, zero)
        if lacking.any():
            missing[t] = np.flatnonzero(lacking)
    return missing


def id_runs(spark: SparkSession, ids: dict[str, Any]) -> DataFrame:
    """(topic, id) for the given ids, built from their runs of consecutive ids (a lost tail is one run)."""
    import numpy as np
    from pyspark.sql import functions as F

    rows = []
    for topic, values in ids.items():
        breaks = np.flatnonzero(np.diff(values) != 1) + 1
        rows += [(topic, int(run[0]), int(run[-1])) for run in np.split(values, breaks)]
    runs = spark.createDataFrame(rows, "topic string, first bigint, last bigint")
    return runs.select("topic", F.explode(F.sequence("first", "last")).alias("id"))


def stitched(spark: SparkSession, passed: DataFrame, split: set[tuple[str, int]]) -> DataFrame | None:
    """order_violation where Spark split a partition between tasks: along each key, its last valid
    record in one task's offsets against its first in the next task's (the EDGE rows)."""
    from pyspark.sql import functions as F

    if not split:
        return None
    edges = passed.where(F.col("kind") == Summary.EDGE.value).collect()
    by_key: dict[tuple[str, int, str], list[Any]] = {}
    for e in edges:
        if (e["topic"], e["partition"]) in split:
            by_key.setdefault((e["topic"], e["partition"], e["key"]), []).append(e)
    rows = []
    for (topic, partition, key), seg in by_key.items():
        seg.sort(key=lambda e: e["offset"])
        for before, after in itertools.pairwise(seg):
            if after["seq"] < before["last_seq"]:
                rows.append((Anomaly.ORDER_VIOLATION.value, topic, partition, after["offset"], after["id"], key,
                             after["seq"], f"seq {after['seq']} after seq {before['last_seq']} "
                                           f"at offset {before['last_offset']}"))
    return spark.createDataFrame(rows, ANOMALY_SCHEMA)


ANOMALY_SCHEMA = ("kind string, topic string, partition int, offset bigint, id bigint, key string, seq bigint, "
                  "detail string")


def numbered(copies: DataFrame) -> DataFrame:
    """Every COPY row once, numbered per (topic, id) in log order: `copy`, of `n`, `last_offset`."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    same_id = Window.partitionBy("topic", "id")
    return copies.dropDuplicates(["topic", "partition", "offset"]).select(
        "topic", "partition", "offset", "id", "key", "seq",
        F.row_number().over(same_id.orderBy("partition", "offset")).alias("copy"),
        F.count(F.lit(1)).over(same_id).alias("n"),
        F.max("offset").over(same_id).alias("last_offset"),
    )


def _attribute(missing: DataFrame, valid: DataFrame, expect: Expectation, writes: Writes) -> DataFrame:
    """Name each missing record lost or lost_in_truncation, with where it was last written.

    `writes` (id, topic, partition, offset) may be a callable: building a write log of millions of
    rows costs seconds, and it is needed only when a record is missing.
    """
    from pyspark.sql import functions as F

    if callable(writes):
        writes = writes()

    source = valid.where(F.col("topic").isin(list(expect.inputs))).groupBy("id").agg(
        F.first("key").alias("key"), F.first("seq").alias("seq"), F.first("partition").alias("in_partition"),
        F.first("offset").alias("in_offset"),
    )
    rows = missing.join(source, "id", "left")
    if writes is not None:
        last = writes.groupBy("topic", "id").agg(F.max_by("partition", "offset").alias("partition"),
                                                 F.max("offset").alias("offset"))
        rows = rows.join(last, ["topic", "id"], "left")
    else:
        rows = rows.withColumn("partition", F.lit(None).cast("int")).withColumn("offset", F.lit(None).cast("bigint"))
    rows = rows.withColumn("partition", F.coalesce(F.col("partition"), F.col("in_partition")))
    explained = F.col("offset").isNotNull() & in_windows(expect.windows)
    where = F.concat(F.col("topic"), F.lit("-"), F.col("partition"), F.lit("@"), F.col("offset"))
    detail = (
        F.when(explained, F.concat(F.lit("last written at "), where, F.lit(", inside a reported truncation window")))
        .when(F.col("offset").isNotNull(),
              F.concat(F.lit("last written at "), where, F.lit(", outside every reported truncation window")))
        .otherwise(F.concat(F.lit("no acknowledged write in this topic; input record at "),
                            F.coalesce(F.col("in_partition").cast("string"), F.lit("?")), F.lit("@"),
                            F.coalesce(F.col("in_offset").cast("string"), F.lit("?"))))
    )
    return _rows(rows, Anomaly.LOST, detail).withColumn(
        "kind", F.when(explained, F.lit(Anomaly.LOST_IN_TRUNCATION.value)).otherwise(F.lit(Anomaly.LOST.value))
    )


def check(
    records: DataFrame | InPlace,
    expect: Expectation,
    writes: Writes = None,
    uncommitted: DataFrame | None = None,
) -> tuple[Findings, DataFrame]:
    """Run every check over `records` (topic, partition, offset, raw: as `read.read_values` gives
    them, or `InPlace`) and the parsed `uncommitted` evidence; return the findings (counts,
    samples, totals) and the cached anomaly rows."""
    spark = records.sparkSession if not isinstance(records, InPlace) else _active()
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    plan = PassPlan.of(expect.ranges)
    # The evidence read shares nothing with the main one: run as a concurrent Spark job, it fills
    # the cores while the main read waits on fetches and the driver plans the next stage.
    with ThreadPoolExecutor(1) as pool:
        in_log_future = pool.submit(_in_log, uncommitted, expect) if uncommitted is not None else None
        progress.status("checker (Spark): reading every output record and judging each partition")
        records, passed, merged = _first_pass(records, plan, expect, spark)
        timings["record_pass_s"] = round(time.monotonic() - t0, 3)

        t1 = time.monotonic()
        progress.status("checker (Spark): naming duplicated and lost records")
        missing = missing_ids(merged, expect, plan.domain)
        copies = _copies(records, passed, merged, missing, expect, plan, spark)
        anomalies = _anomaly_rows(passed, copies, merged, missing, expect, writes, spark)
        counts, per_topic, samples = _summarize(anomalies)
        timings["anomalies_s"] = round(time.monotonic() - t1, 3)
        t2 = time.monotonic()
        progress.status("checker (Spark): reading the uncommitted log for aborted records")
        in_log = in_log_future.result() if in_log_future is not None else None
        timings["read_uncommitted_wait_s"] = round(time.monotonic() - t2, 3)
    totals = _totals(expect, merged, plan, per_topic, in_log)
    copies.unpersist()
    passed.unpersist()
    timings["check_s"] = round(time.monotonic() - t0, 3)
    return Findings(counts, samples, totals, expect.windows, timings), anomalies


def _first_pass(
    records: DataFrame | InPlace, plan: PassPlan, expect: Expectation, spark: SparkSession,
) -> tuple[DataFrame | InPlace, DataFrame, Merged]:
    """`record_pass` over every record (persisted) and its summaries merged, with the records as
    judged: where Spark dealt one partition's offsets to tasks in turn, each partition gathered first."""
    from pyspark.sql import functions as F

    summary = [Summary.COUNT.value, Summary.SEEN.value, Summary.SPAN.value]

    def one_pass(records: DataFrame | InPlace) -> tuple[DataFrame, Merged]:
        passed = judged(records, plan, spark).persist()
        return passed, merge(passed.where(F.col("kind").isin(summary)).collect(), expect.topics, plan.domain)

    passed, merged = one_pass(records)
    if merged.interleaved:
        # Offsets of one partition dealt to tasks in turn (not how Spark reads Kafka or Parquet,
        # nor how `read.write_values` rolls files): a key's records are then adjacent in no
        # task, so each partition is gathered first.
        passed.unpersist()
        records = (InPlace(records.folder, whole=True) if isinstance(records, InPlace)
                   else records.repartition("topic", "partition"))
        passed, merged = one_pass(records)
    return records, passed, merged


def _copies(
    records: DataFrame | InPlace, passed: DataFrame, merged: Merged, missing: dict[str, Any], expect: Expectation,
    plan: PassPlan, spark: SparkSession,
) -> DataFrame:
    """The COPY rows, numbered (persisted): those of the first pass, and of a second pass over the
    ids it cannot name alone (held by more than one task, or missing: their input records say
    where they came from, for `_attribute`)."""
    import numpy as np
    from pyspark.sql import functions as F

    copies = passed.where(F.col("kind") == Summary.COPY.value)
    wanted = {t: across for t, across in merged.across.items() if across.any()}
    if missing:
        needed = np.zeros(plan.domain, dtype=bool)
        for ids in missing.values():
            needed[ids] = True
        for t in expect.inputs:
            wanted[t] = wanted.get(t, needed) | needed
    if wanted:
        again = PassPlan.of(expect.ranges, {t: packed(w) for t, w in wanted.items()})
        copies = copies.unionByName(judged(records, again, spark).where(F.col("kind") == Summary.COPY.value))
    return numbered(copies).persist()


def _anomaly_rows(
    passed: DataFrame, copies: DataFrame, merged: Merged, missing: dict[str, Any], expect: Expectation,
    writes: Writes, spark: SparkSession,
) -> DataFrame:
    """Every anomaly row (persisted): what the first pass named alone, then duplicates, order
    violations and lost records."""
    from pyspark.sql import functions as F

    parts = [passed.where(F.col("kind").isin([a.value for a in (
        Anomaly.CHECKSUM_MISMATCH, Anomaly.ABORTED_VISIBLE, Anomaly.UNEXPECTED)])).select(*ANOMALY_COLUMNS)]
    parts.append(_rows(copies.where((F.col("copy") == 1) & (F.col("n") > 1)), Anomaly.DUPLICATE, F.concat(
        F.col("n"), F.lit(" copies, offsets "), F.col("offset"), F.lit(" .. "), F.col("last_offset"))))
    parts.append(_order_violations(passed, copies, merged, spark))
    if missing:
        parts.append(_attribute(id_runs(spark, missing), copies, expect, writes))
    return reduce(lambda a, b: a.unionByName(b), parts).persist()


def _order_violations(passed: DataFrame, copies: DataFrame, merged: Merged, spark: SparkSession) -> DataFrame:
    """order_violation within each task's offsets and across the tasks a partition was split
    between, less the later copies of a duplicated id: they are the duplicate's evidence."""
    from pyspark.sql import functions as F

    later = copies.where(F.col("copy") > 1).select("topic", "partition", "offset")
    order = passed.where(F.col("kind") == Anomaly.ORDER_VIOLATION.value).select(*ANOMALY_COLUMNS)
    across_tasks = stitched(spark, passed, merged.split)
    if across_tasks is not None:
        order = order.unionByName(across_tasks)
    return order.join(later, ["topic", "partition", "offset"], "left_anti").select(*ANOMALY_COLUMNS)


def _totals(
    expect: Expectation, merged: Merged, plan: PassPlan, per_topic: dict[str, dict[Anomaly, int]],
    in_log: dict[str, tuple[int, int]] | None,
) -> list[TopicTotals]:
    """Each topic's totals; `in_log` None where no uncommitted evidence was read."""
    committed = id_mask(expect.of(TxnOutcome.COMMITTED), plan.domain)
    present = {t: int((held & committed).sum()) for t, held in merged.seen.items()}
    return [
        TopicTotals(
            topic=t,
            role="input" if t in expect.inputs else "output",
            records=merged.records.get(t, 0),
            distinct_valid=present.get(t, 0),
            expected=expect.expected_per_topic,
            aborted_in_log=in_log.get(t, (0, 0))[1] if in_log is not None else None,
            uncommitted_records=in_log.get(t, (0, 0))[0] if in_log is not None else None,
            anomalies=per_topic.get(t, {}),
        )
        for t in expect.topics
    ]


def _active() -> SparkSession:
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError("check(InPlace(...)) needs a started Spark session (harness.integrity.spark.start)")
    return spark


def _in_log(uncommitted: DataFrame, expect: Expectation) -> dict[str, tuple[int, int]]:
    """Per topic, under read_uncommitted: records, and records of aborted transactions."""
    from pyspark.sql import functions as F

    marked = (F.col("flag") == "A") | is_outcome(TxnOutcome.ABORTED)
    return {
        r["topic"]: (r["n"], r["marked"])
        for r in with_outcome(uncommitted, expect.of(TxnOutcome.ABORTED)).groupBy("topic").agg(
            F.count(F.lit(1)).alias("n"), F.count(F.when(marked, 1)).alias("marked")
        ).collect()
    }


def _summarize(
    anomalies: DataFrame,
) -> tuple[dict[Anomaly, int], dict[str, dict[Anomaly, int]], dict[Anomaly, list[AnomalyRow]]]:
    """Counts per kind, per topic and kind, and the first SAMPLES rows of each kind."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    counts: dict[Anomaly, int] = {}
    per_topic: dict[str, dict[Anomaly, int]] = {}
    for r in anomalies.groupBy("kind", "topic").agg(F.count(F.lit(1)).alias("n")).collect():
        kind = Anomaly(r["kind"])
        counts[kind] = counts.get(kind, 0) + r["n"]
        per_topic.setdefault(r["topic"], {})[kind] = r["n"]
    samples: dict[Anomaly, list[AnomalyRow]] = {}
    if not counts:
        return counts, per_topic, samples
    first = Window.partitionBy("kind").orderBy("topic", "partition", "offset", "id")
    rows = anomalies.withColumn("rank", F.row_number().over(first)).where(F.col("rank") <= SAMPLES).drop("rank")
    for row in sorted(rows.collect(), key=lambda r: (r["kind"], r["topic"], r["partition"] or 0, r["offset"] or 0)):
        kind = Anomaly(row["kind"])
        samples.setdefault(kind, []).append(AnomalyRow(kind, *(row[c] for c in ANOMALY_COLUMNS[1:])))
    return counts, per_topic, samples
