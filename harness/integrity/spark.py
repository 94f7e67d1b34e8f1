"""A SparkSession for the integrity checker: the Kafka connector on its classpath, tagged and on loopback.

The driver JVM is started by pyspark (spark-submit), not by the harness, so it cannot get
PR_SET_PDEATHSIG; it carries the session marker instead, so the reaper finds it, and it exits on
its own when its stdin (a pipe held by this process) closes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from harness import session
from harness.integrity.connector import connector_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"
LOOPBACK = "127.0.0.1"
# The checks' Python workers allocate and free arrays of tens to hundreds of megabytes per
# partition, numpy's through glibc and Arrow's through its own pool. Each fresh mapping is page
# faulted in again, and two workers faulting at once spend as much time in the kernel as in the
# checks: glibc maps anything over 32 MB (its highest mmap threshold), Arrow's jemalloc returns
# pages it holds, and Arrow's threads (one per core, in each worker) fault their own arenas. So the
# workers keep one heap (no mmap), never trimmed, that both numpy and Arrow (its system pool) reuse,
# and one Arrow thread each, as Spark gives each task one core. Two workers judging three history
# partitions of the 10M bench each: 0.33 us of CPU per row with these, 0.51 with glibc's 32 MB
# threshold and jemalloc. The workers keep their peak memory until they exit.
WORKER_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(4 << 30), "ARROW_DEFAULT_MEMORY_POOL": "system",
              "OMP_NUM_THREADS": "1"}


def on_loopback(master: str) -> bool:
    """local[...], or a master URL whose host is this machine's loopback."""
    host = urlsplit(master).hostname if "://" in master else None
    return master.startswith("local") or host in (LOOPBACK, "localhost")


# The checker's jobs last seconds over thousands of rows: C1 alone compiles what they run for about
# two thirds of the CPU C2 spends (tests/integrity, 2 cores: 86 -> 53 CPU s for the anomaly checks,
# 159 -> 117 for the pipeline checker). Millions of rows (`kcts bench integrity`) pay C2 back.
QUICK_JIT = "-XX:TieredStopAtLevel=1"


def session_config(master: str, *, long_jobs: bool = False) -> dict[str, str]:
    """Every setting the session starts with; each is one the driver JVM reads at launch.
    `long_jobs`: the full tiered JIT, for jobs over millions of rows."""
    marker = session.current().marker
    scratch = session.current().scratch("spark")
    conf = {
        "spark.master": master,
        "spark.app.name": "kcts-integrity",
        "spark.jars": ",".join(str(j) for j in connector_jars()),
        "spark.driver.extraJavaOptions": f"{marker} -XX:+UseParallelGC -XX:-UsePerfData"
                                         + ("" if long_jobs else f" {QUICK_JIT}"),
        "spark.executor.extraJavaOptions": marker,
        "spark.driver.memory": os.environ.get("KCTS_SPARK_DRIVER_MEMORY", "3g"),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.local.dir": str(scratch),
        "spark.sql.warehouse.dir": str(scratch / "warehouse"),
        "spark.sql.session.timeZone": "UTC",
        # A few thousand to a few million rows: 200 shuffle partitions would be mostly scheduling.
        "spark.sql.shuffle.partitions": os.environ.get("KCTS_SPARK_SHUFFLE_PARTITIONS", "4"),
        "spark.sql.adaptive.enabled": "true",
        # The checker caches one narrow row per record for a few seconds: compressing it costs
        # more CPU than the memory it saves.
        "spark.sql.inMemoryColumnarStorage.compressed": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "false",
        **{f"spark.executorEnv.{k}": v for k, v in WORKER_ENV.items()},
    }
    if on_loopback(master):
        # Nothing of a local checker, or of one on a loopback cluster, should listen beyond loopback.
        conf["spark.driver.host"] = LOOPBACK
        conf["spark.driver.bindAddress"] = LOOPBACK
    elif host := os.environ.get("KCTS_SPARK_DRIVER_HOST"):
        conf["spark.driver.host"] = host
    return conf


def start(master: str = DEFAULT_MASTER, *, long_jobs: bool = False) -> SparkSession:
    from pyspark.sql import SparkSession

    if on_loopback(master):
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    # The anomaly checks judge each partition in a Python worker (numpy over Arrow): the workers
    # run this interpreter, which has them, not whatever python3 is first on PATH. pyspark reads the
    # environment, not the session's settings, for this.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder
    for key, value in session_config(master, long_jobs=long_jobs).items():
        builder = builder.config(key, value)
    # In local mode the workers are children of the driver JVM: it starts with WORKER_ENV in its
    # environment, and nothing else this process starts later does.
    before = {key: os.environ.get(key) for key in WORKER_ENV}
    os.environ.update({key: value for key, value in WORKER_ENV.items() if before[key] is None})
    try:
        spark = builder.getOrCreate()
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextmanager
def spark_session(master: str = DEFAULT_MASTER, *, long_jobs: bool = False) -> Iterator[SparkSession]:
    """A started session that is stopped (driver JVM gone) when the block ends, however it ends."""
    spark = start(master, long_jobs=long_jobs)
    try:
        yield spark
    finally:
        stop(spark)


def stop(spark: SparkSession) -> None:
    """Stop the session and wait for its driver JVM to exit, so nothing outlives the caller."""
    from pyspark import SparkContext

    gateway = spark.sparkContext._gateway
    proc = getattr(gateway, "proc", None)
    spark.stop()
    if gateway is not None:
        gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    if proc is not None:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(30)
