"""The Parquet layout the checks read in place: one directory per topic and partition
(`topic=<name>/partition=<n>`, as Spark's partitionBy writes them), judged by tasks of one directory
or one part file each."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Records per part file where the layout is written (`read.write_values`): a task judges at most this
# many, so a partition of ten million records is ten tasks that two cores share evenly, each with a
# working set that stays in cache, instead of one task whose length sets the pass's.
RECORDS_PER_FILE = 1_000_000


def has_parts(path: str | Path | None) -> bool:
    """Whether a partition's directory holds any part file (Spark writes none for an empty one), or
    `path` is a part file; a partition with no directory (None) holds none."""
    return path is not None and (str(path).endswith(".parquet") or any(Path(path).glob("*.parquet")))


def part_files(directory: Path) -> list[Path]:
    """A directory's part files, in name order (one writer's rolled files: c000, c001, ...)."""
    return sorted(directory.glob("*.parquet"))


def partition_dirs(folder: Path) -> dict[tuple[str, int], Path]:
    """Each (topic, partition) directory under `folder`, by its topic and partition."""
    return {(unquote(d.parent.name.split("=", 1)[1]), int(d.name.split("=", 1)[1])): d
            for d in folder.glob("topic=*/partition=*") if d.is_dir()}


def size(path: Path | None) -> int:
    """Bytes of a part file, or of a directory's part files (0 for None)."""
    if path is None:
        return 0
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in part_files(path))


def one_task_each(spark: SparkSession, rows: list[tuple[object, ...]], schema: str) -> DataFrame:
    """One Spark task per row (a directory or file to judge), in the order given. Spark hands the next
    task to whichever core is free, so callers give the largest first: cores then finish together,
    where a fixed share of rows per core leaves one idle while the other ends its last."""
    tasks = spark.sparkContext.parallelize(rows, max(1, len(rows)))
    return spark.createDataFrame(tasks, schema)
