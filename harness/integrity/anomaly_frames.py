"""Client histories (harness.histories.history) as Spark DataFrames: sends, and reads (one row per polled record).

Spark's JSON reader loads a folder of per-process `.jsonl` files against a fixed schema (OP_SCHEMA,
derived from the format's own dataclasses, so the two cannot disagree), so no row crosses into
Python; a line cut short by a crashed driver is dropped (DROPMALFORMED), as `read_file` drops it.
Every send carries what the checks need of its transaction, so none of them joins the transaction
table again:

- sends: process, start_ns, end_ns, txn, outcome (the send's own), topic, partition, value, offset,
  error, `status` (did its record commit: ok, fail, or info when unknown; the transaction's outcome
  for a transactional send), `commit_ns` (start of its transaction's committing call, null if none),
  `writer` (the transaction id, else the send itself: Jepsen's unit of must-have-committed?);
- reads: process, start_ns, end_ns, txn, outcome (the poll's), pos (the record's place in its poll),
  topic, partition, offset, value, leader_epoch, `reader` (the transaction id, else the poll itself).

`write_parquet` lays both out for pruning: partitioned by topic and partition, sorted by offset.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.histories.history import SUFFIX, Operation, OpType, Outcome, Polled, Sent

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

# The int fields that are Kafka INT32s (a partition index, a leader epoch): Spark's `int`. Every other
# int of a history (offsets, nanosecond times) is an INT64 or wider than 32 bits: `bigint`.
INT32_FIELDS = frozenset({"partition", "leader_epoch"})

Columns = tuple[tuple[str, str], ...]  # (name, Spark type) in order


def spark_type(name: str, kind: object) -> str:
    """The Spark SQL type of a history field `name` of Python type `kind`: text (str and StrEnum) is
    `string`, an int `int` or `bigint` (INT32_FIELDS), `T | None` is T (a Spark column is nullable), a
    dataclass a struct of its fields and `tuple[T, ...]` an array of T."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        (inner,) = [a for a in args if a is not type(None)]
        return spark_type(name, inner)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return f"array<{spark_type(name, args[0])}>"
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return "struct<" + ", ".join(f"{n}: {t}" for n, t in columns(kind)) + ">"
    if kind is int:
        return "int" if name in INT32_FIELDS else "bigint"
    if isinstance(kind, type) and issubclass(kind, str):
        return "string"
    raise TypeError(f"history field {name}: no Spark type for {kind!r}")


def columns(kind: type, names: Sequence[str] | None = None) -> Columns:
    """(name, Spark type) of the fields of the dataclass `kind`: all in their order, or those `names`."""
    hints = typing.get_type_hints(kind)
    order = [f.name for f in dataclasses.fields(kind)] if names is None else list(names)
    return tuple((n, spark_type(n, hints[n])) for n in order)


def ddl(cols: Columns) -> str:
    """A Spark DDL schema string of `cols`."""
    return ", ".join(f"{n} {t}" for n, t in cols)


# What Spark reads each operation line as: the dataclasses themselves (Operation, Sent, Polled), so
# a field added to the history format is a column without a second edit here.
OP_SCHEMA = ddl(columns(Operation))
# Each send and read row keeps the call it came from.
_CALL = columns(Operation, ("process", "start_ns", "end_ns", "txn", "outcome"))
_SENDS = (*_CALL, *columns(Sent), ("status", "string"), ("commit_ns", "bigint"), ("writer", "string"))
_READS = (*_CALL, ("pos", "int"), *columns(Polled), ("reader", "string"))
SEND_COLUMNS = tuple(n for n, _ in _SENDS)
SEND_SCHEMA = ddl(_SENDS)
READ_COLUMNS = tuple(n for n, _ in _READS)
READ_SCHEMA = ddl(_READS)


@dataclass(frozen=True)
class HistoryFrames:
    sends: DataFrame
    reads: DataFrame
    # Set when both come from `write_parquet`'s layout: the anomaly checks then read each
    # partition's directory in place instead of gathering it by a shuffle (anomaly_checks).
    folder: str | None = None


def op_id(prefix: str = "") -> Column:
    """An operation's identity: its process and start time (one process runs one call at a time)."""
    from pyspark.sql import functions as F

    return F.concat(F.col(f"{prefix}process"), F.lit("@"), F.col(f"{prefix}start_ns").cast("string"))


def operations(spark: SparkSession, folder: str | os.PathLike[str]) -> DataFrame:
    """Every operation line of the folder's process files, as the flat rows of OP_SCHEMA."""
    return spark.read.schema(OP_SCHEMA).option("mode", "DROPMALFORMED").json(str(Path(folder) / f"*{SUFFIX}"))


def transactions(ops: DataFrame) -> DataFrame:
    """(txn, txn_status, commit_ns): ok when a commit succeeded; fail when a commit failed or an abort
    succeeded (Jepsen's :fail, nothing of it may be visible); info otherwise, a transaction whose end
    is unknown (the driver died, the commit timed out)."""
    from pyspark.sql import functions as F

    ok, fail = OpType.TXN_COMMIT.value, OpType.TXN_ABORT.value
    ends = ops.filter(F.col("txn").isNotNull() & F.col("type").isin(ok, fail))
    committed = (F.col("type") == ok) & (F.col("outcome") == Outcome.OK.value)
    aborted = ((F.col("type") == ok) & (F.col("outcome") == Outcome.FAIL.value)) | (
        (F.col("type") == fail) & (F.col("outcome") == Outcome.OK.value))
    return ends.groupBy("txn").agg(
        F.when(F.max(committed.cast("int")) == 1, F.lit(Outcome.OK.value))
        .when(F.max(aborted.cast("int")) == 1, F.lit(Outcome.FAIL.value))
        .otherwise(F.lit(Outcome.INFO.value)).alias("txn_status"),
        F.min(F.when(F.col("type") == ok, F.col("start_ns"))).alias("commit_ns"),
    )


def frames(ops: DataFrame) -> HistoryFrames:
    """Sends and reads of a frame of operations (OP_SCHEMA rows)."""
    from pyspark.sql import functions as F

    txns = transactions(ops)
    sends = (
        ops.filter(F.col("type") == OpType.SEND.value)
        .select("process", "start_ns", "end_ns", "txn", "outcome", "sent.*")
        .join(txns, "txn", "left")
        .withColumn(
            "status",
            # A send that failed wrote nothing whatever its transaction did; otherwise a
            # transactional record is exactly as committed as its transaction.
            F.when(F.col("outcome") == Outcome.FAIL.value, F.lit(Outcome.FAIL.value))
            .when(F.col("txn").isNull(), F.col("outcome"))
            .otherwise(F.coalesce(F.col("txn_status"), F.lit(Outcome.INFO.value))),
        )
        .withColumn("writer", F.coalesce(F.col("txn"), op_id()))
        .select(*SEND_COLUMNS)
    )
    reads = (
        ops.filter(F.col("type") == OpType.POLL.value)
        .select("process", "start_ns", "end_ns", "txn", "outcome", F.posexplode("polled").alias("pos", "r"))
        .select("process", "start_ns", "end_ns", "txn", "outcome", "pos", "r.*")
        .withColumn("reader", F.coalesce(F.col("txn"), op_id()))
        .select(*READ_COLUMNS)
    )
    return HistoryFrames(sends, reads)


def load_jsonl(spark: SparkSession, folder: str | os.PathLike[str]) -> HistoryFrames:
    """A folder of process histories as sends and reads."""
    return frames(operations(spark, folder))


def write_parquet(history: HistoryFrames, folder: str | os.PathLike[str]) -> None:
    """`<folder>/sends` and `<folder>/reads`, partitioned by topic and partition (a check of one
    partition reads one directory) and sorted by offset within each file (row-group statistics then
    skip offset ranges)."""
    for name, df in (("sends", history.sends), ("reads", history.reads)):
        (df.repartition("topic", "partition").sortWithinPartitions("topic", "partition", "offset")
         .write.mode("overwrite").partitionBy("topic", "partition").parquet(str(Path(folder) / name)))


def load_parquet(spark: SparkSession, folder: str | os.PathLike[str]) -> HistoryFrames:
    """What `write_parquet` wrote, read against its schema: partition columns are typed by it, not
    inferred from directory names (a topic named "007" stays text), and come back in their place."""
    sends = spark.read.schema(SEND_SCHEMA).parquet(str(Path(folder) / "sends")).select(*SEND_COLUMNS)
    reads = spark.read.schema(READ_SCHEMA).parquet(str(Path(folder) / "reads")).select(*READ_COLUMNS)
    return HistoryFrames(sends, reads, str(folder))
