"""Jepsen's Kafka anomaly classes over client histories, in Spark: joins, aggregates and windows only.

The definitions are those of Jepsen's Kafka workload (jepsen/src/jepsen/tests/kafka.clj in
jepsen-io/jepsen), named after its functions; a key of Jepsen's is a (topic, partition) here, and an
operation of Jepsen's (a transaction of micro-ops) is a transaction id here, or a lone send or poll.
Each check is a DataFrame of cases with one schema (CASE_SCHEMA): the class, where (topic, partition,
offset, value), what (detail), and the operations behind it (`ops`: role, process, times, txn,
offset, value). No Python function touches a row and no graph is built on the driver; the driver
collects only the counts and the first examples of each class (one Spark job).

Shared notions (kafka.clj):
- committed (`must-have-committed?`): a send whose status is ok, or info and some send of the same
  writer (transaction, else the send itself) was read by an ok poll. An indeterminate send counts only
  when a read proves it.
- the log (`version-orders`): every (topic, partition, offset, value) seen by a committed send's
  acknowledgement or by any poll, whatever the poll's outcome (Jepsen: pollers must only ever see
  safe data). Positions are dense ranks of the offsets that hold anything (Jepsen's indices: offsets
  with gaps for transaction markers, made contiguous).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from harness.histories.history import Outcome
from harness.integrity.history_frames import HistoryFrames

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

EXAMPLES = 8  # Jepsen's condense-error keeps 8 of most classes


class HistoryAnomaly(StrEnum):
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
    kind: HistoryAnomaly
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
class HistoryFindings:
    counts: Mapping[HistoryAnomaly, int]
    examples: Mapping[HistoryAnomaly, tuple[Case, ...]]

    def count(self, kind: HistoryAnomaly) -> int:
        return self.counts.get(kind, 0)

    @property
    def found(self) -> dict[str, int]:
        return {k.value: n for k, n in self.counts.items() if n}

    def describe(self) -> str:
        return "\n".join(str(c) for cases in self.examples.values() for c in cases) or "nothing found"


CASE_COLUMNS = ("kind", "topic", "partition", "offset", "value", "detail", "ops")
OP_FIELDS = ("role", "process", "start_ns", "end_ns", "txn", "topic", "partition", "offset", "value")


def _F() -> Any:
    from pyspark.sql import functions as F

    return F


def op_ref(role: str, prefix: str = "") -> Column:
    """The operation of a send or read row (columns optionally prefixed) as an OpRef struct."""
    F = _F()
    return F.struct(F.lit(role).alias("role"), *(F.col(f"{prefix}{f}").alias(f) for f in OP_FIELDS[1:]))


def case(kind: HistoryAnomaly, df: DataFrame, detail: Column, ops: Column,
         offset: str | Column = "offset", value: str | Column = "value") -> DataFrame:
    F = _F()

    def as_col(c: str | Column) -> Column:
        return F.col(c) if isinstance(c, str) else c

    return df.select(F.lit(kind.value).alias("kind"), F.col("topic"), F.col("partition"),
                     as_col(offset).cast("bigint").alias("offset"), as_col(value).cast("string").alias("value"),
                     detail.alias("detail"), ops.alias("ops"))


@dataclass(frozen=True)
class Prepared:
    """What several checks share, each built once (Spark reuses a cached plan's result)."""

    sends: DataFrame  # with `committed` (must-have-committed?) and `op`
    reads: DataFrame  # with `op`
    ok_reads: DataFrame
    read_values: DataFrame  # topic, partition, value: what some ok poll read
    log: DataFrame  # topic, partition, offset, value, op: every observation of the version order
    spans: DataFrame  # topic, partition, value, first, last: the offsets a value was seen at
    # topic, partition, offset, idx, lo, hi: dense position of each offset that holds anything, and
    # the least and greatest value seen there
    index: DataFrame


def prepare(history: HistoryFrames) -> Prepared:
    """One lazy plan: each shared frame is one shuffle, which Spark computes once and reuses for every
    check that reads it (exchange reuse within the one query that judges every class)."""
    F = _F()
    from pyspark.sql import Window

    ok = Outcome.OK.value
    reads = history.reads.withColumn("op", op_ref("poll"))
    ok_reads = reads.filter(F.col("outcome") == ok)
    read_values = ok_reads.select("topic", "partition", "value").distinct()
    # must-have-committed?: a writer is proven when an ok poll read any value it sent. Only a writer
    # whose sends are not ok can need the proof (an ok send is committed as it stands; a writer's
    # sends are all of its transaction's status, or fail), and those are few: the proven ones are
    # broadcast to the sends instead of shuffling every send by its writer.
    proven = (history.sends.filter(F.col("status") != ok)
              .join(read_values, ["topic", "partition", "value"], "left_semi")
              .select("writer").distinct().withColumn("proven", F.lit(True)))
    sends = (history.sends.join(F.broadcast(proven), "writer", "left")
             .withColumn("committed", (F.col("status") == ok) | (
                 (F.col("status") == Outcome.INFO.value) & F.coalesce(F.col("proven"), F.lit(False))))
             .drop("proven").withColumn("op", op_ref("send")))
    # version-orders: sends only when proven visible, polls always.
    log = (sends.filter(F.col("committed") & F.col("offset").isNotNull())
           .select("topic", "partition", "offset", "value", "op")
           .unionByName(reads.select("topic", "partition", "offset", "value", "op")))
    spans = log.groupBy("topic", "partition", "value").agg(
        F.min("offset").alias("first"), F.max("offset").alias("last"))
    index = (log.groupBy("topic", "partition", "offset").agg(F.min("value").alias("lo"), F.max("value").alias("hi"))
             .withColumn("idx", F.dense_rank().over(Window.partitionBy("topic", "partition").orderBy("offset"))))
    return Prepared(sends, reads, ok_reads, read_values, log, spans, index)


def inconsistent_offsets(p: Prepared) -> DataFrame:
    """`version-orders` :errors: one (topic, partition, offset) observed with two or more values, by
    sends' acknowledgements or polls. The signature of a truncation a client did not detect.

    The offsets are found on their least and greatest value (`index`) first; only theirs collect values
    and operations (collecting them for every offset cost more than every other class together)."""
    F = _F()
    where = ["topic", "partition", "offset"]
    bad = p.index.filter(F.col("lo") != F.col("hi"))
    g = p.log.join(bad.select(*where), where, "left_semi").groupBy(*where).agg(
        F.array_sort(F.collect_set("value")).alias("values"), F.collect_list("op").alias("ops"))
    return case(HistoryAnomaly.INCONSISTENT_OFFSETS, g,
                F.concat(F.lit("offset holds "), F.array_join("values", ", ")), F.slice("ops", 1, EXAMPLES),
                value=F.array_join("values", ","))


def duplicates(p: Prepared) -> DataFrame:
    """`duplicate-cases`: one value at more than one offset of its partition (its span's first and last
    offsets differ; only those values collect their offsets and operations)."""
    F = _F()
    where = ["topic", "partition", "value"]
    bad = p.spans.filter(F.col("first") != F.col("last")).select(*where)
    g = p.log.join(bad, where, "left_semi").groupBy(*where).agg(
        F.array_sort(F.collect_set("offset")).alias("offsets"), F.collect_list("op").alias("ops"))
    return case(HistoryAnomaly.DUPLICATE, g,
                F.concat(F.lit("value at offsets "), F.array_join("offsets", ", ")), F.slice("ops", 1, EXAMPLES),
                offset=F.element_at("offsets", 1))


def aborted_reads(p: Prepared) -> DataFrame:
    """`g1a-cases` (G1a, aborted read): an ok poll saw a value whose send failed, or whose transaction
    aborted (its commit failed, or its abort succeeded)."""
    F = _F()
    failed = p.sends.filter(F.col("status") == Outcome.FAIL.value).select(
        "topic", "partition", "value", F.col("op").alias("w"), F.col("txn").alias("wtxn"))
    j = p.ok_reads.join(failed, ["topic", "partition", "value"])
    return case(HistoryAnomaly.G1A, j,
                F.concat(F.lit("read a value of aborted or failed writer "), F.coalesce("wtxn", F.lit("(no txn)"))),
                F.array("w", "op"))


def lost_writes(p: Prepared) -> DataFrame:
    """`lost-write-cases`: per partition, the bound is the highest first-offset of any value an ok poll
    read; a committed value (must-have-committed?) whose last offset is at or below it, and that no ok
    poll read, was lost. Named with its writer and a poll that read at the bound (Jepsen's max-read)."""
    F = _F()
    read_values = p.read_values
    bound = (p.spans.join(read_values, ["topic", "partition", "value"], "left_semi")
             .groupBy("topic", "partition").agg(F.max("first").alias("bound")))
    max_read = (p.ok_reads.join(bound, ["topic", "partition"]).filter(F.col("offset") == F.col("bound"))
                .groupBy("topic", "partition").agg(F.min_by("op", F.col("start_ns")).alias("max_read")))
    owed = (p.spans.join(bound, ["topic", "partition"]).filter(F.col("last") <= F.col("bound"))
            .join(read_values, ["topic", "partition", "value"], "left_anti"))
    writers = p.sends.filter("committed").select("topic", "partition", "value", F.col("op").alias("w"))
    lost = owed.join(writers, ["topic", "partition", "value"]).join(max_read, ["topic", "partition"], "left")
    return case(HistoryAnomaly.LOST_WRITE, lost,
                F.format_string("committed at offset %d, at or below offset %d that a poll read; never read",
                                F.col("first"), F.col("bound")),
                F.filter(F.array("w", "max_read"), lambda x: x.isNotNull()), offset="first")


def unseen(p: Prepared) -> DataFrame:
    """`unseen`: an ok send (ok transaction) whose value no ok poll read. Jepsen reports it as what is
    still unseen at the end: it includes every lost write, and the tail a consumer never reached."""
    F = _F()
    read_values = p.read_values
    s = p.sends.filter(F.col("status") == Outcome.OK.value).join(
        read_values, ["topic", "partition", "value"], "left_anti")
    return case(HistoryAnomaly.UNSEEN, s, F.lit("acknowledged, never polled"), F.array("op"))


def precommitted_reads(p: Prepared, read_committed: bool = True) -> DataFrame:
    """`precommitted-read-cases`: a transaction polled a value it sent itself (Kafka's pollers must
    never see uncommitted records). With `read_committed` also by time: a poll that ended before the
    writer's transaction began to commit saw the value before any commit could have made it visible
    (monotonic times of one host). Aborted writers are left to G1a."""
    F = _F()
    w = p.sends.filter(F.col("txn").isNotNull() & (F.col("status") != Outcome.FAIL.value)).select(
        "topic", "partition", "value", F.col("op").alias("w"), F.col("txn").alias("wtxn"), "commit_ns")
    j = p.reads.join(w, ["topic", "partition", "value"])
    own = F.col("txn") == F.col("wtxn")
    # Only against a recorded commit: a commit still in progress when its driver died left no line,
    # and its records may well have committed.
    early = F.coalesce(F.col("end_ns") < F.col("commit_ns"), F.lit(False)) if read_committed else F.lit(False)
    j = j.filter(own | early)
    return case(HistoryAnomaly.PRECOMMITTED_READ, j,
                F.when(own, F.concat(F.lit("transaction "), F.col("wtxn"), F.lit(" polled its own write")))
                .otherwise(F.concat(F.lit("polled before transaction "), F.col("wtxn"), F.lit(" began to commit"))),
                F.array("w", "op"))


def poll_skips(p: Prepared) -> DataFrame:
    """`poll-skip+nonmonotonic-cases-per-process` and `int-poll-skip+nonmonotonic-cases`: along one
    process's ok polls of a partition, each record against the one read before it (in the previous
    poll, or earlier in the same poll: Jepsen's int- classes). A step of more than one position
    skipped records it should have seen; a step of less than one went backwards or repeated.

    Positions are of the offsets the polls themselves report, where Jepsen looks the value up in the
    version order: they differ only for values at two offsets, which `duplicate` reports. Jepsen
    forgives these across a rebalance (:rebalance-log, assign and subscribe); a history of a consumer
    whose assignment changed should give each assignment its own process name."""
    F = _F()
    from pyspark.sql import Window

    r = p.ok_reads.join(p.index, ["topic", "partition", "offset"])
    w = Window.partitionBy("process", "topic", "partition").orderBy("start_ns", "pos")
    r = (r.withColumn("prev_idx", F.lag("idx").over(w)).withColumn("prev_offset", F.lag("offset").over(w))
         .withColumn("prev_start", F.lag("start_ns").over(w)).withColumn("prev_op", F.lag("op").over(w))
         .filter(F.col("prev_idx").isNotNull()).withColumn("delta", F.col("idx") - F.col("prev_idx")))
    same = F.col("prev_start") == F.col("start_ns")
    detail = F.format_string("offset %d after offset %d: %d position(s) on", F.col("offset"),
                             F.col("prev_offset"), F.col("delta"))
    out = None
    for kind, cond in ((HistoryAnomaly.INT_POLL_SKIP, same & (F.col("delta") > 1)),
                       (HistoryAnomaly.POLL_SKIP, ~same & (F.col("delta") > 1)),
                       (HistoryAnomaly.INT_NONMONOTONIC_POLL, same & (F.col("delta") < 1)),
                       (HistoryAnomaly.NONMONOTONIC_POLL, ~same & (F.col("delta") < 1))):
        df = case(kind, r.filter(cond), detail, F.array("prev_op", "op"))
        out = df if out is None else out.unionByName(df)
    assert out is not None
    return out


def nonmonotonic_sends(p: Prepared) -> DataFrame:
    """`nonmonotonic-send-cases` and `int-send-skip+nonmonotonic-cases` (its :nonmonotonic half): along
    one process's ok and info sends to a partition, a value placed at or before the previous one's
    position in the version order (each value at its first offset). Within one transaction it is
    int-nonmonotonic-send. Send skips are not reported: Jepsen allows them (`allowed-error-types`),
    other producers' writes interleave."""
    F = _F()
    from pyspark.sql import Window

    s = (p.sends.filter(F.col("status") != Outcome.FAIL.value)
         .join(p.spans.select("topic", "partition", "value", "first"), ["topic", "partition", "value"])
         .join(p.index.withColumnRenamed("offset", "first"), ["topic", "partition", "first"]))
    w = Window.partitionBy("process", "topic", "partition").orderBy("start_ns")
    s = (s.withColumn("prev_idx", F.lag("idx").over(w)).withColumn("prev_first", F.lag("first").over(w))
         .withColumn("prev_txn", F.lag("txn").over(w)).withColumn("prev_op", F.lag("op").over(w))
         .filter(F.col("prev_idx").isNotNull() & (F.col("idx") <= F.col("prev_idx"))))
    same = F.col("txn").isNotNull() & (F.col("txn") == F.coalesce(F.col("prev_txn"), F.lit("")))
    detail = F.format_string("sent after a value at offset %d, placed at offset %d", F.col("prev_first"),
                             F.col("first"))
    inner = case(HistoryAnomaly.INT_NONMONOTONIC_SEND, s.filter(same), detail, F.array("prev_op", "op"),
                 offset="first")
    outer = case(HistoryAnomaly.NONMONOTONIC_SEND, s.filter(~same), detail, F.array("prev_op", "op"),
                 offset="first")
    return inner.unionByName(outer)


def all_cases(history: HistoryFrames, read_committed: bool = True, with_cycles: bool = False) -> DataFrame:
    """Every case of every class, one DataFrame of CASE_COLUMNS; G0 and G1c only `with_cycles`
    (see `cycles` for its cost). The cycle search runs Spark jobs as it is built (its fixed point
    counts each round); the rest is one lazy plan."""
    p = prepare(history)
    parts = [inconsistent_offsets(p), duplicates(p), aborted_reads(p), lost_writes(p), unseen(p),
             precommitted_reads(p, read_committed), poll_skips(p), nonmonotonic_sends(p)]
    if with_cycles:
        parts.append(cycles(p))
    out = parts[0]
    for df in parts[1:]:
        out = out.unionByName(df)
    return out


def _ranked(cases: DataFrame, examples: int, by: tuple[str, ...]) -> list[Any]:
    """The first `examples` cases of each group of `by` (kind, or topic and kind), with the group's
    count on every row: one job, and only those rows reach the driver."""
    F = _F()
    from pyspark.sql import Window

    group = Window.partitionBy(*by)
    ranked = (cases.withColumn("n", F.count(F.lit(1)).over(group))
              .withColumn("rk", F.row_number().over(group.orderBy("topic", "partition", "offset", "value")))
              .filter(F.col("rk") <= examples))
    return ranked.orderBy(*by, "rk").collect()


def _findings(rows: list[Any]) -> HistoryFindings:
    counts: dict[HistoryAnomaly, int] = {}
    found: dict[HistoryAnomaly, list[Case]] = {}
    for row in rows:
        kind = HistoryAnomaly(row["kind"])
        counts[kind] = int(row["n"])
        ops = tuple(OpRef(**o.asDict()) for o in row["ops"])
        found.setdefault(kind, []).append(
            Case(kind, row["topic"], row["partition"], row["offset"], row["value"], row["detail"], ops))
    return HistoryFindings(counts, {k: tuple(v) for k, v in found.items()})


def summarize(cases: DataFrame, examples: int = EXAMPLES) -> HistoryFindings:
    """Counts per class and the first `examples` of each (by topic, partition, offset), in one job."""
    return _findings(_ranked(cases, examples, ("kind",)))


def summarize_by_topic(cases: DataFrame, examples: int = EXAMPLES) -> dict[str, HistoryFindings]:
    """The same per topic: every check is local to a partition and a process, so histories on
    different topics (and processes) are judged apart in one query."""
    rows: dict[str, list[Any]] = {}
    for row in _ranked(cases, examples, ("topic", "kind")):
        rows.setdefault(row["topic"], []).append(row)
    return {topic: _findings(r) for topic, r in rows.items()}


def check_history(history: HistoryFrames, read_committed: bool = True, examples: int = EXAMPLES,
                  with_cycles: bool = False) -> HistoryFindings:
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
    F = _F()
    from pyspark.sql import Window

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
    F = _F()
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
        F.col("src").alias("node"), F.when(F.col("wr"), F.lit(HistoryAnomaly.G1C.value))
        .otherwise(F.lit(HistoryAnomaly.G0.value)).alias("kind")).join(scc, "node")
    comp = cyclic.groupBy("kind", "scc").agg(F.array_sort(F.collect_set("node")).alias("nodes"))
    # The edges inside each component (a G0 case shows only its ww edges) name its operations.
    inner = (edges.join(scc.withColumnRenamed("node", "src"), "src")
             .join(scc.select(F.col("node").alias("dst"), F.col("scc").alias("dscc")), "dst")
             .filter(F.col("scc") == F.col("dscc")))
    named = comp.join(inner, "scc").filter((F.col("kind") == HistoryAnomaly.G1C.value) | ~F.col("wr"))
    cases = named.groupBy("kind", "scc", "nodes").agg(F.flatten(F.collect_list(F.array("a", "b"))).alias("ops"))
    return cases.select(
        F.col("kind"), F.col("ops")[0]["topic"].alias("topic"), F.col("ops")[0]["partition"].alias("partition"),
        F.lit(None).cast("bigint").alias("offset"), F.array_join("nodes", " ").alias("value"),
        F.concat(F.lit("cycle among "), F.array_join("nodes", ", ")).alias("detail"),
        F.slice("ops", 1, 2 * EXAMPLES).alias("ops"))
