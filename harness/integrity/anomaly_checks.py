"""Jepsen's Kafka anomaly classes over client histories, in Spark.

The definitions are those of Jepsen's Kafka workload (jepsen/src/jepsen/tests/kafka.clj in
jepsen-io/jepsen), named after its functions; a key of Jepsen's is a (topic, partition) here, and an
operation of Jepsen's (a transaction of micro-ops) is a transaction id here, or a lone send or poll.
Each check gives cases of one schema (CASE_COLUMNS): the class, where (topic, partition, offset,
value), what (detail), and the operations behind it (`ops`: role, process, times, txn, offset,
value). The driver collects only the counts and the first examples of each class (one Spark job).

How it runs, and why:
- must-have-committed? (a send whose status is ok, or info and some send of the same writer was
  read by an ok poll: an indeterminate send counts only when a read proves it) is the one notion that
  crosses partitions, since a transaction writes several. The writers it can concern are the sends
  that are not ok, few in any history; they are broadcast to one scan of the reads.
- Every other class but the cycles is local to one partition (`anomaly_partition` has their
  definitions): Spark gathers each partition's sends and reads once (one cogroup) and judges them
  together there, with sorted arrays. One shuffle of each side in all, where a plan of joins and
  windows per class took a shuffle or a sort per class and per shared frame (57x a plain read of the
  same records at a million, `kcts bench integrity`).
- G0 and G1c cross partitions and transactions: a Spark SQL fixed point over the dependency graph
  (`cycles`), on request.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from harness.histories.history import Outcome
from harness.integrity.anomaly_frames import HistoryFrames
from harness.integrity.anomaly_partition import (
    CASE_WIRE_SCHEMA,
    EXAMPLES,
    OP_FIELDS,
    OPS_SCHEMA,
    READ_INPUT,
    SEND_INPUT,
    judge,
    judge_in_place,
    prove_writers,
)
from harness.integrity.layout import partition_dirs, size, spread

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, Row


class JepsenAnomaly(StrEnum):
    """Jepsen's error names (the keys of `analysis`'s :errors)."""

    INCONSISTENT_OFFSETS = "inconsistent-offsets"
    DUPLICATE = "duplicate"
    G1A = "G1a"
    LOST_WRITE = "lost-write"
    UNSEEN = "unseen"
    PRECOMMITTED_READ = "precommitted-read"
    POLL_SKIP = "poll-skip"
    NONMONOTONIC_POLL = "nonmonotonic-poll"
    INT_POLL_SKIP = "int-poll-skip"
    INT_NONMONOTONIC_POLL = "int-nonmonotonic-poll"
    NONMONOTONIC_SEND = "nonmonotonic-send"
    INT_NONMONOTONIC_SEND = "int-nonmonotonic-send"
    G0 = "G0"
    G1C = "G1c"


@dataclass(frozen=True)
class OpRef:
    """One operation behind a case, and the record of it that matters there."""

    role: str  # "send" or "poll"
    process: str
    start_ns: int
    end_ns: int
    txn: str | None
    topic: str
    partition: int
    offset: int | None
    value: str


@dataclass(frozen=True)
class Case:
    kind: JepsenAnomaly
    topic: str | None
    partition: int | None
    offset: int | None
    value: str | None
    detail: str
    ops: tuple[OpRef, ...]

    def __str__(self) -> str:
        ops = "; ".join(f"{o.role} {o.process}@{o.start_ns} {o.topic}-{o.partition}@{o.offset}={o.value}"
                        for o in self.ops)
        return f"{self.kind} {self.topic}-{self.partition}@{self.offset} {self.value}: {self.detail} [{ops}]"


@dataclass(frozen=True)
class AnomalyFindings:
    counts: Mapping[JepsenAnomaly, int]
    examples: Mapping[JepsenAnomaly, tuple[Case, ...]]

    def count(self, kind: JepsenAnomaly) -> int:
        return self.counts.get(kind, 0)

    @property
    def found(self) -> dict[str, int]:
        return {k.value: n for k, n in self.counts.items() if n}

    def describe(self) -> str:
        return "\n".join(str(c) for cases in self.examples.values() for c in cases) or "nothing found"


CASE_COLUMNS = ("kind", "topic", "partition", "offset", "value", "detail", "ops")


def op_ref(role: str, prefix: str = "") -> Column:
    """The operation of a send or read row (columns optionally prefixed) as an OpRef struct."""
    from pyspark.sql import functions as F

    return F.struct(F.lit(role).alias("role"), *(F.col(f"{prefix}{f}").alias(f) for f in OP_FIELDS[1:]))


def committed_sends(history: HistoryFrames) -> DataFrame:
    """The sends with `committed` (must-have-committed?): status ok, or info and some send of the
    same writer was read by an ok poll. Only a writer whose sends are not ok can need that proof (a
    writer's sends all have its transaction's status, or fail), and those are few in any history:
    they are broadcast to one scan of the reads, and the proven writers to the sends, so neither side
    is shuffled by value or writer."""
    from pyspark.sql import functions as F

    ok = Outcome.OK.value
    keys = ["topic", "partition", "value"]
    unsure = history.sends.filter(F.col("status") != ok).select(*keys, "writer")
    proven = (history.reads.filter(F.col("outcome") == ok).select(*keys).join(F.broadcast(unsure), keys)
              .select("writer").distinct().withColumn("proven", F.lit(True)))
    return (history.sends.join(F.broadcast(proven), "writer", "left")
            .withColumn("committed", (F.col("status") == ok) | (
                (F.col("status") == Outcome.INFO.value) & F.coalesce(F.col("proven"), F.lit(False))))
            .drop("proven"))


def partition_cases(history: HistoryFrames, read_committed: bool = True) -> DataFrame:
    """Every per-partition class (`anomaly_partition`): one cogroup of each partition's sends and
    reads, or, for a history in `write_parquet`'s layout, each partition's directory read in place."""
    from pyspark.sql import functions as F

    if history.folder is not None:
        return in_place_cases(history, read_committed)
    # Fresh column identities on each side: both may come from one frame of operations
    # (`anomaly_frames.frames`), and a cogroup of a frame with itself is ambiguous to Spark.
    sends = committed_sends(history).select(*(F.col(c).alias(c) for c in ("topic", "partition", *SEND_INPUT)))
    reads = history.reads.select(*(F.col(c).alias(c) for c in ("topic", "partition", *READ_INPUT)))

    def judged(key: tuple[pa.Scalar, ...], s: pa.Table, r: pa.Table) -> pa.Table:
        return judge(key, s, r, read_committed)

    wire = (sends.groupBy("topic", "partition").cogroup(reads.groupBy("topic", "partition"))
            .applyInArrow(judged, CASE_WIRE_SCHEMA))
    return wire.withColumn("ops", F.from_json("ops", OPS_SCHEMA)).select(*CASE_COLUMNS)


def in_place_cases(history: HistoryFrames, read_committed: bool = True) -> DataFrame:
    """`partition_cases` over a history already laid out by partition (`write_parquet`: one directory
    per topic and partition): each partition's two directories are read with Arrow and judged
    together, the partitions dealt to a few Spark tasks (`layout.spread`), so nothing is shuffled.
    Two passes: the writers that reads prove (the one notion that crosses partitions: see
    `committed_sends`), gathered on the driver, then the judge."""
    from pyspark.sql import functions as F

    assert history.folder is not None
    spark = history.sends.sparkSession
    folder = Path(history.folder)
    sends, reads = partition_dirs(folder / "sends"), partition_dirs(folder / "reads")
    keys = sorted(sends.keys() | reads.keys())
    rows = [(topic, partition, *(str(d) if (d := side.get((topic, partition))) else None for side in (sends, reads)))
            for topic, partition in keys]
    tasks = spread(spark, rows, [size(sends.get(k)) + size(reads.get(k)) for k in keys],
                   "topic string, partition int, sends string, reads string")
    proven = {r["writer"] for r in tasks.mapInArrow(prove_writers, "writer string").distinct().collect()}

    def judged(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return judge_in_place(batches, proven, read_committed)

    wire = tasks.mapInArrow(judged, CASE_WIRE_SCHEMA)
    return wire.withColumn("ops", F.from_json("ops", OPS_SCHEMA)).select(*CASE_COLUMNS)


@dataclass(frozen=True)
class Prepared:
    """What the cycle search reads."""

    sends: DataFrame  # with `committed` (must-have-committed?) and `op`
    reads: DataFrame  # with `op`
    spans: DataFrame  # topic, partition, value, first, last: the offsets a value was seen at


def prepare(history: HistoryFrames) -> Prepared:
    from pyspark.sql import functions as F

    reads = history.reads.withColumn("op", op_ref("poll"))
    sends = committed_sends(history).withColumn("op", op_ref("send"))
    # version-orders: sends only when proven visible, polls always.
    log = (sends.filter(F.col("committed") & F.col("offset").isNotNull())
           .select("topic", "partition", "offset", "value")
           .unionByName(reads.select("topic", "partition", "offset", "value")))
    spans = log.groupBy("topic", "partition", "value").agg(
        F.min("offset").alias("first"), F.max("offset").alias("last"))
    return Prepared(sends, reads, spans)


def all_cases(history: HistoryFrames, read_committed: bool = True, with_cycles: bool = False) -> DataFrame:
    """Every case of every class, one DataFrame of CASE_COLUMNS; G0 and G1c only `with_cycles`
    (see `cycles` for its cost). The cycle search runs Spark jobs as it is built (its fixed point
    counts each round); the rest is one lazy plan."""
    out = partition_cases(history, read_committed)
    return out.unionByName(cycles(prepare(history))) if with_cycles else out


def _ranked(cases: DataFrame, examples: int, by: tuple[str, ...]) -> list[Row]:
    """The first `examples` cases of each group of `by` (kind, or topic and kind), with the group's
    count on every row: one job, and only those rows reach the driver."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    group = Window.partitionBy(*by)
    ranked = (cases.withColumn("n", F.count(F.lit(1)).over(group))
              .withColumn("rk", F.row_number().over(group.orderBy("topic", "partition", "offset", "value")))
              .filter(F.col("rk") <= examples))
    return ranked.orderBy(*by, "rk").collect()


def _findings(rows: list[Row]) -> AnomalyFindings:
    counts: dict[JepsenAnomaly, int] = {}
    found: dict[JepsenAnomaly, list[Case]] = {}
    for row in rows:
        kind = JepsenAnomaly(row["kind"])
        counts[kind] = int(row["n"])
        ops = tuple(OpRef(**o.asDict()) for o in row["ops"])
        found.setdefault(kind, []).append(
            Case(kind, row["topic"], row["partition"], row["offset"], row["value"], row["detail"], ops))
    return AnomalyFindings(counts, {k: tuple(v) for k, v in found.items()})


def summarize(cases: DataFrame, examples: int = EXAMPLES) -> AnomalyFindings:
    """Counts per class and the first `examples` of each (by topic, partition, offset), in one job."""
    return _findings(_ranked(cases, examples, ("kind",)))


def summarize_by_topic(cases: DataFrame, examples: int = EXAMPLES) -> dict[str, AnomalyFindings]:
    """The same per topic: every check is local to a partition and a process, so histories on
    different topics (and processes) are judged apart in one query."""
    rows: dict[str, list[Row]] = {}
    for row in _ranked(cases, examples, ("topic", "kind")):
        rows.setdefault(row["topic"], []).append(row)
    return {topic: _findings(r) for topic, r in rows.items()}


def check_anomalies(history: HistoryFrames, read_committed: bool = True, examples: int = EXAMPLES,
                  with_cycles: bool = False) -> AnomalyFindings:
    """Every class over a history; `read_committed` False when its consumers read uncommitted records
    (then only Jepsen's own-transaction precommitted read applies)."""
    return summarize(all_cases(history, read_committed, with_cycles), examples)


CYCLE_ROUNDS = 32  # path doubling: 2**32 edges long is past any history


def dependency_edges(p: Prepared) -> DataFrame:
    """`ww-graph` and `wr-graph` over transactions: ww, the writer of each value to the writer of the
    next value in its partition's version order (`previous-value`: values by their first offset); wr,
    the writer of a value to every transaction that polled it (`readers-of`: polls of any outcome).
    No self-edges. Columns: src, dst, wr (is a wr edge), a, b (the operations that make it: a send,
    then the next send or the poll).

    Jepsen's graph also holds lone sends and polls as operations; here they are contracted away, as
    none can close a cycle by itself: a poll outside a transaction writes nothing (no edge leaves it),
    and a send outside one writes one value, so it only passes its partition's order on. The edges
    through it are drawn from the nearest transaction before it in that order: T <ww s <ww U becomes
    T <ww U, and T <ww s <wr R becomes T <wr R. Without that, a partition of plain sends is a chain
    as long as the history, and its reachability quadratic in it."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    writers = p.sends.filter("committed").select("topic", "partition", "value", "writer", F.col("op").alias("wop"),
                                                 F.col("txn").isNotNull().alias("is_txn"))
    before = (Window.partitionBy("topic", "partition").orderBy("first", "value")
              .rowsBetween(Window.unboundedPreceding, -1))
    chain = (p.spans.join(writers, ["topic", "partition", "value"])
             .withColumn("prev_txn", F.last(F.when(F.col("is_txn"), F.col("writer")), ignorenulls=True).over(before))
             .withColumn("prev_op", F.last(F.when(F.col("is_txn"), F.col("wop")), ignorenulls=True).over(before)))
    ww = chain.filter("is_txn").select(F.col("prev_txn").alias("src"), F.col("writer").alias("dst"),
                                       F.lit(False).alias("wr"), F.col("prev_op").alias("a"), F.col("wop").alias("b"))
    wr = (p.reads.filter(F.col("txn").isNotNull())
          .join(chain, ["topic", "partition", "value"])
          .select(F.when(F.col("is_txn"), F.col("writer")).otherwise(F.col("prev_txn")).alias("src"),
                  F.col("reader").alias("dst"), F.lit(True).alias("wr"), F.col("wop").alias("a"),
                  F.col("op").alias("b")))
    return ww.unionByName(wr).filter(F.col("src").isNotNull() & (F.col("src") != F.col("dst")))


def cycles(p: Prepared) -> DataFrame:
    """G0 and G1c (Jepsen's `cycles!`, through Elle, over `graph`: ww and wr, no rw) as a Spark SQL
    fixed point: reachability (src, dst, through a wr edge or not) doubled by a self-join until no
    pair is new; each round is checkpointed, so the plan stays one join deep. A node that reaches
    itself over ww edges alone is on a G0 cycle; over a path with a wr edge, on a G1c cycle. One case
    per strongly connected component (named by its least node) and class, with the operations of
    its edges.

    Jepsen allows G0 in Kafka's transactional model (`allowed-error-types`: writes are not isolated),
    and G1c where ww edges are inferred; they are reported for the reader to judge.

    Cost: the reachability holds a row per pair of transactions where one reaches the other, and
    each doubling round joins it with itself, so it grows with the square (and the join with the
    cube) of the transactions that follow one another. Measured on this 2-core machine under load:
    14,000 sends of which 5,000 in 1,000 transactions over 4 partitions, 311 s with cycles against
    11 s for every other class. So it is off unless asked for (`with_cycles`); at scale it wants a
    component algorithm that does not materialize reachability (trimming sources and sinks, then
    forward-backward colouring), not yet done."""
    from pyspark.sql import functions as F

    edges = dependency_edges(p).localCheckpoint()
    reach = edges.select("src", "dst", "wr").distinct().localCheckpoint()
    size = reach.count()
    for _ in range(CYCLE_ROUNDS):
        left, right = reach.alias("l"), reach.alias("r")
        longer = left.join(right, F.col("l.dst") == F.col("r.src")).select(
            F.col("l.src").alias("src"), F.col("r.dst").alias("dst"), (F.col("l.wr") | F.col("r.wr")).alias("wr"))
        grown = reach.unionByName(longer).distinct().localCheckpoint()
        new_size = grown.count()
        reach = grown
        if new_size == size:
            break
        size = new_size
    pairs = reach.select("src", "dst").distinct()
    back = pairs.select(F.col("dst").alias("src"), F.col("src").alias("dst"))
    # A node's component: every node it reaches and is reached by; named by the least of them.
    scc = pairs.join(back, ["src", "dst"]).groupBy("src").agg(F.min("dst").alias("scc")).withColumnRenamed(
        "src", "node")
    cyclic = reach.filter(F.col("src") == F.col("dst")).select(
        F.col("src").alias("node"), F.when(F.col("wr"), F.lit(JepsenAnomaly.G1C.value))
        .otherwise(F.lit(JepsenAnomaly.G0.value)).alias("kind")).join(scc, "node")
    comp = cyclic.groupBy("kind", "scc").agg(F.array_sort(F.collect_set("node")).alias("nodes"))
    # The edges inside each component (a G0 case shows only its ww edges) name its operations.
    inner = (edges.join(scc.withColumnRenamed("node", "src"), "src")
             .join(scc.select(F.col("node").alias("dst"), F.col("scc").alias("dscc")), "dst")
             .filter(F.col("scc") == F.col("dscc")))
    named = comp.join(inner, "scc").filter((F.col("kind") == JepsenAnomaly.G1C.value) | ~F.col("wr"))
    cases = named.groupBy("kind", "scc", "nodes").agg(F.flatten(F.collect_list(F.array("a", "b"))).alias("ops"))
    return cases.select(
        F.col("kind"), F.col("ops")[0]["topic"].alias("topic"), F.col("ops")[0]["partition"].alias("partition"),
        F.lit(None).cast("bigint").alias("offset"), F.array_join("nodes", " ").alias("value"),
        F.concat(F.lit("cycle among "), F.array_join("nodes", ", ")).alias("detail"),
        F.slice("ops", 1, 2 * EXAMPLES).alias("ops"))
