"""The history `kcts bench integrity` derives from the records it staged (harness.bench.integrity_store).

The bench requires a clean history of clean records, so the derived history must be clean when the
log is, and must show an anomaly when the log holds one: here a record at two offsets of its
partition, which the anomaly checks call a duplicate. Both go through the Parquet layout the bench
times.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.bench.integrity_store import history_of
from harness.integrity.anomaly_checks import check_anomalies
from harness.integrity.anomaly_frames import load_parquet, write_parquet
from harness.integrity.read import load_values, write_values
from harness.workload import pipeline_record

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = "bench-t"


def judged(spark: SparkSession, rows: list[tuple[str, int, int, str]], folder: Path) -> dict[str, int]:
    values = spark.createDataFrame(rows, "topic string, partition int, offset bigint, raw string")
    write_values(values, folder / "records")
    write_parquet(history_of(load_values(spark, folder / "records")), folder / "history")
    return check_anomalies(load_parquet(spark, folder / "history")).found


def log(n: int, partition: int = 0) -> list[tuple[str, int, int, str]]:
    """`n` records of one key, written by the generator at offsets 0, 1, ..."""
    return [(T, partition, i, pipeline_record.make(i, "k", i).encode().decode()) for i in range(n)]


def test_the_history_of_a_clean_log_is_clean(spark: SparkSession, tmp_path: Path) -> None:
    assert judged(spark, log(12) + log(7, partition=1), tmp_path) == {}


def test_a_record_at_two_offsets_is_a_duplicate_in_the_history(spark: SparkSession, tmp_path: Path) -> None:
    rows = log(12)
    rows.append((T, 0, 12, rows[3][3]))  # record 3 again, at offset 12
    found = judged(spark, rows, tmp_path)
    # Its second send also lands behind the writer's previous one (the value's place is its first offset).
    assert found == {"duplicate": 1, "int-nonmonotonic-send": 1}, found
