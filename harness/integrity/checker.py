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

Cost: the records are read once, annotated (one broadcast join) and cached; the valid ones are
ordered along their keys through one narrow shuffle (`along_keys`); every check is then a filter
over those caches, and the missing-id join runs only when a topic is short.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from typing import TYPE_CHECKING, TypeAlias

from harness import progress
from harness.integrity.model import Anomaly, Expectation, Findings, TopicTotals, TruncationWindow
from harness.workload.history import IdRange, TxnOutcome

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    Writes: TypeAlias = DataFrame | Callable[[], DataFrame] | None

ANOMALY_COLUMNS = ("kind", "topic", "partition", "offset", "id", "key", "seq", "detail")
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


def annotate(records: DataFrame, expect: Expectation) -> DataFrame:
    """One row per record read, with everything the per-record checks need and nothing else.

    The payload is reduced to its CRC-32, the raw text is kept only where the value did not parse,
    and each id gets its transaction's outcome (`with_outcome`). `valid` records (intact, flagged
    C, id of a committed or unknown transaction) are the ones `along_keys` orders.
    """
    from pyspark.sql import functions as F

    rows = with_outcome(records.select(
        "topic", "partition", "offset", F.when(F.col("parsed"), F.lit(None)).otherwise(F.col("raw")).alias("raw"),
        "id", "key", "seq", "crc", F.crc32(F.col("payload").cast("binary")).alias("actual_crc"), "flag", "stage",
        "parsed",
    ), expect.ranges)
    return rows.withColumn("intact", F.col("parsed") & (F.col("actual_crc") == F.col("crc"))).withColumn(
        "aborted", F.col("intact") & ((F.col("flag") == "A") | is_outcome(TxnOutcome.ABORTED))
    ).withColumn("valid", F.col("intact") & ~F.col("aborted") & is_outcome(TxnOutcome.COMMITTED, TxnOutcome.UNKNOWN))


def along_keys(annotated: DataFrame) -> DataFrame:
    """The valid records, each with the one before it along its key (`prev_*`) and the highest
    sequence number before it (`max_before`), in (partition, offset) order: one shuffle and sort.

    A key's sequence numbers only grow, so any copy of a record read before shows as
    `seq <= max_before`: duplicates and per-key order need no second pass. Only the six columns
    the two checks read are shuffled (the wide per-record row cost as much again to sort)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    along_key = Window.partitionBy("topic", "key").orderBy("partition", "offset")
    return annotated.where(F.col("valid")).select("topic", "partition", "offset", "id", "key", "seq", "outcome").select(
        "*",
        F.lag("seq").over(along_key).alias("prev_seq"),
        F.lag("offset").over(along_key).alias("prev_offset"),
        F.lag("partition").over(along_key).alias("prev_partition"),
        F.max("seq").over(along_key.rowsBetween(Window.unboundedPreceding, -1)).alias("max_before"),
    )


def suspect_copies(ordered: DataFrame) -> DataFrame:
    """Every copy of every id that may have been read twice, numbered in log order (`copy`, `n`), from
    the valid records along their keys (`along_keys`).

    Small by construction: empty when no key's sequence ever stalls or goes back.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    suspects = ordered.where(F.col("seq") <= F.col("max_before")).select("topic", "id").distinct()
    same_id = Window.partitionBy("topic", "id")
    return ordered.join(F.broadcast(suspects), ["topic", "id"]).select(
        "topic", "partition", "offset", "id", "key", "seq", "outcome",
        F.row_number().over(same_id.orderBy("partition", "offset")).alias("copy"),
        F.count(F.lit(1)).over(same_id).alias("n"),
        F.max("offset").over(same_id).alias("last_offset"),
    )


def topic_counts(annotated: DataFrame, copies: DataFrame, expect: Expectation) -> dict[str, tuple[int, int]]:
    """Per topic: records read, and distinct valid ids of committed transactions."""
    from pyspark.sql import functions as F

    committed = is_outcome(TxnOutcome.COMMITTED)
    rows = annotated.groupBy("topic").agg(
        F.count(F.lit(1)).alias("records"), F.count(F.when(F.col("valid") & committed, 1)).alias("valid")
    ).collect()
    extra = {
        r["topic"]: r["n"]
        for r in copies.where((F.col("copy") > 1) & committed).groupBy("topic").agg(F.count(F.lit(1)).alias("n"))
        .collect()
    }
    return {r["topic"]: (r["records"], r["valid"] - extra.get(r["topic"], 0)) for r in rows}


def find_anomalies(
    annotated: DataFrame, ordered: DataFrame, copies: DataFrame, expect: Expectation, present: dict[str, int],
    writes: Writes = None,
) -> DataFrame:
    """Every anomaly row (lazy), from annotated records, the valid ones along their keys, their
    suspect copies and the present counts."""
    from pyspark.sql import functions as F

    committed = expect.of(TxnOutcome.COMMITTED)
    unknown = expect.of(TxnOutcome.UNKNOWN)
    intact, valid = F.col("intact"), F.col("valid")
    checksum_rows = _rows(annotated.where(~intact), Anomaly.CHECKSUM_MISMATCH, F.when(
        ~F.col("parsed"), F.concat(F.lit("unparseable value: "), F.substring("raw", 1, 80))
    ).otherwise(F.concat(F.lit("crc field "), F.col("crc"), F.lit(" but crc32(payload) = "), F.col("actual_crc"))))
    aborted_rows = _rows(annotated.where(F.col("aborted")), Anomaly.ABORTED_VISIBLE, F.when(
        F.col("flag") == "A", F.concat(F.lit("written by "), F.col("stage"), F.lit(" into a transaction it aborted"))
    ).otherwise(F.lit("id of a generator transaction that was aborted")))
    unexpected_rows = _rows(
        annotated.where(intact & ~F.col("aborted") & ~valid), Anomaly.UNEXPECTED,
        F.concat(F.lit("id never written by the generator; stage "), F.col("stage")),
    )
    duplicate_rows = _rows(
        copies.where((F.col("copy") == 1) & (F.col("n") > 1)), Anomaly.DUPLICATE,
        F.concat(F.col("n"), F.lit(" copies, offsets "), F.col("offset"), F.lit(" .. "), F.col("last_offset")),
    )
    # Later copies of a duplicated id are the duplicate's evidence, not an order violation too.
    later = F.broadcast(copies.where(F.col("copy") > 1).select("topic", "partition", "offset"))
    violations = ordered.where(
        (F.col("prev_partition") == F.col("partition")) & (F.col("seq") < F.col("prev_seq"))
    ).join(later, ["topic", "partition", "offset"], "left_anti")
    order_rows = _rows(violations, Anomaly.ORDER_VIOLATION, F.concat(
        F.lit("seq "), F.col("seq"), F.lit(" after seq "), F.col("prev_seq"), F.lit(" at offset "), F.col("prev_offset")
    ))
    parts = [checksum_rows, aborted_rows, unexpected_rows, duplicate_rows, order_rows]
    short = [t for t in expect.topics if present.get(t, 0) < expect.expected_per_topic]
    firsts = annotated.where(valid).join(later, ["topic", "partition", "offset"], "left_anti")
    per_id = firsts.select("topic", "id", "outcome")
    missing = _missing(annotated.sparkSession, per_id, expect, short, committed, unknown)
    if missing is not None:
        parts.append(_attribute(missing, firsts, expect, writes))
    return reduce(lambda a, b: a.unionByName(b), parts)


def _missing(
    spark: object, per_id: DataFrame, expect: Expectation, short: list[str],
    committed: list[IdRange], unknown: list[IdRange],
) -> DataFrame | None:
    """(topic, id) of expected records absent from a topic; None when none can be."""
    from pyspark.sql import functions as F

    expected: list[DataFrame] = []
    if short and committed:
        ids = reduce(lambda a, b: a.union(b), [spark.range(r.first, r.end) for r in committed])  # type: ignore[attr-defined]
        topics = spark.createDataFrame([(t,) for t in short], "topic string")  # type: ignore[attr-defined]
        expected.append(topics.crossJoin(ids))
    if unknown and expect.outputs:
        # An unknown transaction's records are owed to every output once an input holds them.
        seen = per_id.where(F.col("topic").isin(list(expect.inputs)) & is_outcome(TxnOutcome.UNKNOWN)).select(
            "id").distinct()
        topics = spark.createDataFrame([(t,) for t in expect.outputs], "topic string")  # type: ignore[attr-defined]
        expected.append(topics.crossJoin(seen))
    if not expected:
        return None
    wanted = reduce(lambda a, b: a.unionByName(b), expected)
    return wanted.join(per_id.select("topic", "id"), ["topic", "id"], "left_anti")


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
    records: DataFrame,
    expect: Expectation,
    writes: Writes = None,
    uncommitted: DataFrame | None = None,
) -> tuple[Findings, DataFrame]:
    """Run every check; return the findings (counts, samples, totals) and the cached anomaly rows."""
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    # The evidence read shares nothing with the main one: run as a concurrent Spark job, it fills
    # the cores while the main read waits on fetches and the driver plans the next stage.
    with ThreadPoolExecutor(1) as pool:
        in_log_future = pool.submit(_in_log, uncommitted, expect) if uncommitted is not None else None
        progress.status("checker (Spark): reading every output record and annotating it")
        annotated = annotate(records, expect).persist()
        ordered = along_keys(annotated).persist()
        copies = suspect_copies(ordered).persist()
        counts_by_topic = topic_counts(annotated, copies, expect)
        timings["read_and_annotate_s"] = round(time.monotonic() - t0, 3)
        present = {t: n for t, (_, n) in counts_by_topic.items()}

        t1 = time.monotonic()
        progress.status("checker (Spark): finding lost, duplicated and aborted-visible records")
        anomalies = find_anomalies(annotated, ordered, copies, expect, present, writes).persist()
        counts, per_topic, samples = _summarize(anomalies)
        timings["anomalies_s"] = round(time.monotonic() - t1, 3)
        t2 = time.monotonic()
        progress.status("checker (Spark): reading the uncommitted log for aborted records")
        in_log = in_log_future.result() if in_log_future is not None else {}
        timings["read_uncommitted_wait_s"] = round(time.monotonic() - t2, 3)
    totals = [
        TopicTotals(
            topic=t,
            role="input" if t in expect.inputs else "output",
            records=counts_by_topic.get(t, (0, 0))[0],
            distinct_valid=present.get(t, 0),
            expected=expect.expected_per_topic,
            aborted_in_log=in_log.get(t, (0, 0))[1] if uncommitted is not None else None,
            uncommitted_records=in_log.get(t, (0, 0))[0] if uncommitted is not None else None,
            anomalies=per_topic.get(t, {}),
        )
        for t in expect.topics
    ]
    copies.unpersist()
    ordered.unpersist()
    annotated.unpersist()
    timings["check_s"] = round(time.monotonic() - t0, 3)
    return Findings(counts, samples, totals, expect.windows, timings), anomalies


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
) -> tuple[dict[Anomaly, int], dict[str, dict[Anomaly, int]], dict[Anomaly, list[dict[str, object]]]]:
    """Counts per kind, per topic and kind, and the first SAMPLES rows of each kind."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    counts: dict[Anomaly, int] = {}
    per_topic: dict[str, dict[Anomaly, int]] = {}
    for r in anomalies.groupBy("kind", "topic").agg(F.count(F.lit(1)).alias("n")).collect():
        kind = Anomaly(r["kind"])
        counts[kind] = counts.get(kind, 0) + r["n"]
        per_topic.setdefault(r["topic"], {})[kind] = r["n"]
    samples: dict[Anomaly, list[dict[str, object]]] = {}
    if not counts:
        return counts, per_topic, samples
    first = Window.partitionBy("kind").orderBy("topic", "partition", "offset", "id")
    rows = anomalies.withColumn("rank", F.row_number().over(first)).where(F.col("rank") <= SAMPLES).drop("rank")
    for row in sorted(rows.collect(), key=lambda r: (r["kind"], r["topic"], r["partition"] or 0, r["offset"] or 0)):
        samples.setdefault(Anomaly(row["kind"]), []).append(row.asDict())
    return counts, per_topic, samples
