"""The Parquet layout the checks read in place: one directory per topic and partition
(`topic=<name>/partition=<n>`, as Spark's partitionBy writes them), judged one directory to a task."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def has_parts(path: str | Path | None) -> bool:
    """Whether a partition's directory holds any part file (Spark writes none for an empty one); a
    partition with no directory (None) holds none."""
    return path is not None and any(Path(path).glob("*.parquet"))


def partition_dirs(folder: Path) -> dict[tuple[str, int], Path]:
    """Each (topic, partition) directory under `folder`, by its topic and partition."""
    return {(unquote(d.parent.name.split("=", 1)[1]), int(d.name.split("=", 1)[1])): d
            for d in folder.glob("topic=*/partition=*") if d.is_dir()}


def one_task_each(spark: SparkSession, rows: list[tuple[object, ...]], schema: str) -> DataFrame:
    """`rows` (one per directory to judge) spread over as many Spark tasks as there are cores, or rows."""
    tasks = spark.createDataFrame(rows, schema)
    return tasks.repartition(max(1, min(len(rows), spark.sparkContext.defaultParallelism)))
