"""The data `kcts bench integrity` times, kept in Parquet that Spark can prune.

Staged once from the bench's topics, then read by both sides of the bench from disk:
- `records`: every record under read_committed, (topic, partition, offset, raw);
- `uncommitted`: the first offsets of each partition under read_uncommitted (the checker's
  evidence read, `harness.integrity.run.UNCOMMITTED_CAP`);
- `history`: the client history of those records in the checker's history frames
  (`harness.integrity.anomaly_frames`), sends and reads.

Every folder is partitioned by topic and partition, and sorted by offset within each file, so a
check of one partition reads one directory and row-group statistics skip offset ranges.

The pipeline's clients keep no Jepsen history of their own (their write logs and transaction ranges
are what `check` reads), so `history_of` writes down the history those records imply: the writer of
each record (its `stage` field) sent it, in a transaction of its writer per `TXN_SPAN` offsets of
the partition, and acknowledged at its offset; a reader per topic polled it, `POLL_SPAN` offsets a
poll, after every commit. It is a clean history of the same records, as large as they are twice
over, on which every anomaly check runs as it would on a recorded one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.histories.history import Outcome
from harness.integrity.anomaly_frames import READ_COLUMNS, SEND_COLUMNS, HistoryFrames, write_parquet
from harness.integrity.read import READ_UNCOMMITTED, load_values, offset_ranges, parse, read_values, write_values

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

TXN_SPAN = 5000  # offsets of one partition per transaction of a writer (the bench's batch size)
POLL_SPAN = 500  # offsets of one partition per poll
STEP_NS = 1000  # the history's clock: a send every microsecond along its partition's offsets
READ_AFTER_NS = 10**15  # every poll after every commit of the history (offset * STEP_NS stays below)


def history_of(values: DataFrame) -> HistoryFrames:
    """The clean client history the records imply (see the module docstring), in Spark only."""
    from pyspark.sql import functions as F

    ok = Outcome.OK.value
    rec = parse(values).select("topic", "partition", "offset", F.col("id").cast("string").alias("value"), "stage")
    block = F.floor(F.col("offset") / TXN_SPAN)
    txn = F.concat_ws(":", F.col("stage"), F.col("topic"), F.col("partition").cast("string"), block.cast("string"))
    start = F.col("offset") * STEP_NS
    sends = rec.select(
        F.col("stage").alias("process"), start.alias("start_ns"), (start + STEP_NS // 2).alias("end_ns"),
        txn.alias("txn"), F.lit(ok).alias("outcome"), "topic", "partition", "value", "offset",
        F.lit(None).cast("string").alias("error"), F.lit(ok).alias("status"),
        ((block + 1) * TXN_SPAN * STEP_NS).alias("commit_ns"), txn.alias("writer"),
    ).select(*SEND_COLUMNS)
    poll = F.floor(F.col("offset") / POLL_SPAN)
    poll_start = F.lit(READ_AFTER_NS) + poll * POLL_SPAN * STEP_NS
    process = F.concat(F.lit("reader-"), F.col("topic"))
    reads = rec.select(
        process.alias("process"), poll_start.alias("start_ns"), (poll_start + STEP_NS // 2).alias("end_ns"),
        F.lit(None).cast("string").alias("txn"), F.lit(ok).alias("outcome"),
        (F.col("offset") - poll * POLL_SPAN).cast("int").alias("pos"), "topic", "partition", "offset", "value",
        F.lit(0).alias("leader_epoch"),
        F.concat(process, F.lit("@"), poll_start.cast("string")).alias("reader"),
    ).select(*READ_COLUMNS)
    return HistoryFrames(sends, reads)


def stage(spark: SparkSession, client_config: dict[str, str], topics: list[str], folder: Path,
          uncommitted_cap: int) -> None:
    """Read the topics once from the cluster into `folder` (records, uncommitted, history)."""
    write_values(read_values(spark, client_config, topics), folder / "records")
    ranges = offset_ranges(client_config, topics, uncommitted_cap)
    write_values(read_values(spark, client_config, topics, READ_UNCOMMITTED, ranges), folder / "uncommitted")
    write_parquet(history_of(load_values(spark, folder / "records")), folder / "history")


DATASETS = ("records", "uncommitted", "history/sends", "history/reads")
