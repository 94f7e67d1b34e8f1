"""The checks' Python workers run as `spark.WORKER_ENV` sets them up: its figures hold only there."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from harness.integrity.spark import WORKER_ENV

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_the_checks_workers_keep_one_heap_and_one_arrow_thread(spark: SparkSession) -> None:
    """No mmap and no trim in glibc, Arrow on the system allocator (that heap) with one thread: a
    worker that faulted its memory in afresh on every partition spent as long in the kernel."""
    names = sorted(WORKER_ENV)

    def probe(batches: Iterator[Any]) -> Iterator[Any]:  # runs in a worker: pickled by value
        import os

        import pyarrow as pa

        for _ in batches:
            yield pa.RecordBatch.from_pylist([{
                "pool": pa.default_memory_pool().backend_name, "threads": pa.cpu_count(),
                "env": ",".join(f"{k}={os.environ.get(k)}" for k in names),
            }])

    seen = {tuple(r) for r in spark.range(2).repartition(2).mapInArrow(
        probe, "pool string, threads bigint, env string").collect()}
    env = ",".join(f"{k}={WORKER_ENV[k]}" for k in names)
    assert seen == {("system", 1, env)}, f"workers ran with {seen}, not {env}"
