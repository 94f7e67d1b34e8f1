"""The Parquet layout the checks read in place: one directory per topic and partition
(`topic=<name>/partition=<n>`, as Spark's partitionBy writes them), whose directories or part files
the checks deal to a few Spark tasks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import unquote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Row: TypeAlias = tuple[object, ...]

# Records per part file where the layout is written (`read.write_values`): the record checks judge
# one file at a time, so a partition of ten million records is ten pieces that two cores share
# evenly, with working sets of a bounded size, instead of one piece whose length sets the pass's.
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


def deal(rows: list[Row], sizes: list[int], tasks: int) -> list[list[Row]]:
    """`rows` dealt to `tasks` lists: the largest first, each to the list with the least so far; the
    lists ordered by what they hold, the most first (empty lists where rows are fewer)."""
    dealt: list[list[Row]] = [[] for _ in range(tasks)]
    load = [0] * tasks
    for i in sorted(range(len(rows)), key=lambda i: -sizes[i]):
        least = load.index(min(load))
        dealt[least].append(rows[i])
        load[least] += sizes[i]
    return [dealt[i] for i in sorted(range(tasks), key=lambda i: -load[i])]


def spread(spark: SparkSession, rows: list[Row], sizes: list[int], schema: str) -> DataFrame:
    """`rows` (each a directory or file to judge, of `sizes` bytes) dealt (`deal`) to twice as many
    Spark tasks as there are cores, the largest task first, for Spark to hand the next to whichever
    core is free. The cores then finish together, and a task's start (a tenth of a second of
    Spark's) is paid a few times a pass, not once per file."""
    tasks = max(1, min(len(rows), 2 * spark.sparkContext.defaultParallelism))
    return spark.createDataFrame(
        spark.sparkContext.parallelize(deal(rows, sizes, tasks), tasks).flatMap(lambda held: held), schema)
