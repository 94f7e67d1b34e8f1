"""`kcts bench integrity`: the Spark checker, every anomaly check included, ÷ a plain Spark read of the same records.

One local cluster; the confluent-kafka pipeline copies `records` generated records into two output
topics (transactions, some aborted on purpose, as in the suite). Spark then reads the three topics
once into Parquet partitioned by topic and partition and sorted by offset (the records in files of
a million, `layout.RECORDS_PER_FILE`), with the client history of those records (`integrity_store`:
`stage_s`, outside the ratio). On that data, in one session:
- `plain_read_s`: Spark reads every dataset the checker reads (records, the read_uncommitted prefix,
  the history's sends and reads) and hashes every column of every row: the floor for any checker
  that must see every record;
- `checker_s`: `check` as the suite runs it (read_committed records, the read_uncommitted evidence,
  every anomaly check, report.json + anomalies.parquet + summary.txt), its records read in place
  from the Parquet (`checker.InPlace`), then `check_anomalies` (every
  history class of Jepsen's Kafka checker but the G0 and G1c cycles, which the checker runs only
  when asked: see `anomaly_checks.cycles` for their cost), on a session that has already run one
  check, as every scenario after the first in a pytest run gets;
- `checker_first_s`: the same on its first run (JIT and Spark code generation still cold), and
  `spark_start_s` (session start), reported beside the ratio, not in it;
- `kafka_read_s`: Spark's Kafka source reading the same committed records from the cluster, each
  value hashed (what the suite's checker pays before any check), also beside the ratio;
- `records_from_spark_s`: the record checks again, their records given as a DataFrame (Spark's
  Parquet reader, then Arrow into the Python workers), as the suite gives those it reads from
  Kafka: beside the ratio, to show what reading in place saves.
The plain read runs before, between and after three warm checks; the ratio is the checks' median over
the plain reads' median.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING

from harness import session
from harness.bench.integrity_store import DATASETS, stage
from harness.clients.admin import admin_client, create_topic
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.integrity import report
from harness.integrity.anomaly_checks import AnomalyFindings, check_anomalies
from harness.integrity.anomaly_frames import load_parquet
from harness.integrity.checker import InPlace, check
from harness.integrity.model import Expectation, Findings
from harness.integrity.read import load_values, parse, read_values
from harness.integrity.run import UNCOMMITTED_CAP, expectation, write_log
from harness.integrity.spark import DEFAULT_MASTER, spark_session
from harness.kafka.dist import DEFAULT_VERSION
from harness.workload.pipeline import Pipeline, PipelineSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PARTITIONS = 3
WARM_RUNS = 3
SPEC = PipelineSpec(
    partitions=PARTITIONS, instances=2, keys=1000, generator_txn=5000, generator_aborts_every=10,
    processor_batch=5000, processor_aborts_every=10,
)


def plain_read(spark: SparkSession, folder: Path) -> tuple[float, dict[str, int]]:
    """Seconds to read every row of every dataset, each column hashed, and the rows of each."""
    from pyspark.sql import functions as F

    t0 = time.monotonic()
    rows = {}
    for name in DATASETS:
        df = spark.read.parquet(str(folder / name))
        rows[name] = df.select(F.count(F.lit(1)), F.bit_xor(F.xxhash64(*df.columns))).collect()[0][0]
    return time.monotonic() - t0, rows


def kafka_read(spark: SparkSession, client_config: dict[str, str], topics: list[str]) -> tuple[float, int]:
    """Seconds for Spark to read every committed record of `topics` from the cluster, values hashed."""
    from pyspark.sql import functions as F

    t0 = time.monotonic()
    row = read_values(spark, client_config, topics).select(F.count(F.lit(1)), F.bit_xor(F.xxhash64("raw"))).collect()
    return time.monotonic() - t0, row[0][0]


def run_checker(
    spark: SparkSession, folder: Path, expect: Expectation, writes: object, out_dir: Path,
) -> tuple[float, Findings, AnomalyFindings]:
    """The record checks with their report, then the anomaly checks: seconds, and both findings."""
    t0 = time.monotonic()
    uncommitted: DataFrame = parse(load_values(spark, folder / "uncommitted"))
    findings, anomalies = check(InPlace(folder / "records"), expect, writes, uncommitted)  # type: ignore[arg-type]
    try:
        report.write(findings, anomalies, out_dir, {"spark_master": spark.sparkContext.master})
    finally:
        anomalies.unpersist()
    t1 = time.monotonic()
    jepsen = check_anomalies(load_parquet(spark, folder / "history"))
    findings.timings["records_s"] = round(t1 - t0, 3)
    findings.timings["anomaly_checks_s"] = round(time.monotonic() - t1, 3)
    return time.monotonic() - t0, findings, jepsen


def records_from_spark(spark: SparkSession, folder: Path, expect: Expectation, writes: object) -> float:
    """Seconds for the record checks on the records as a DataFrame instead of in place."""
    t0 = time.monotonic()
    findings, anomalies = check(load_values(spark, folder / "records"), expect, writes)  # type: ignore[arg-type]
    anomalies.unpersist()
    if not findings.ok:
        raise AssertionError(f"the record checks over a DataFrame found {findings.describe_failures()}")
    return time.monotonic() - t0


def run(records: int = 1_000_000, version: str = DEFAULT_VERSION, master: str = DEFAULT_MASTER) -> dict[str, object]:
    with LocalCluster(LocalClusterSpec(version=version)) as cluster, admin_client(cluster) as admin:
        safe = {"min.insync.replicas": "2"}
        inp = create_topic(cluster, admin, "bench-integrity-in", PARTITIONS, 3, safe)
        outs = [create_topic(cluster, admin, f"bench-integrity-out{i}", PARTITIONS, 3, safe) for i in range(2)]
        t0 = time.monotonic()
        with Pipeline(cluster, inp, outs, "bench-integrity", SPEC) as pipeline:
            pipeline.generator.write(records)
            pipeline.finish(timeout=3600)
        pipeline_s = time.monotonic() - t0
        topics = [inp, *outs]
        expect = expectation(pipeline)
        out_dir = session.current().scratch("bench-integrity")
        try:
            t0 = time.monotonic()
            with spark_session(master, long_jobs=True) as spark:
                spark_start_s = time.monotonic() - t0
                kafka_s, kafka_rows = kafka_read(spark, cluster.client_config(), topics)
                t0 = time.monotonic()
                stage(spark, cluster.client_config(), topics, out_dir / "data", UNCOMMITTED_CAP)
                stage_s = time.monotonic() - t0
                writes = write_log(spark, pipeline.generator.history.writes, pipeline.history.writes)
                first_s, _, _ = run_checker(spark, out_dir / "data", expect, writes, out_dir / "first")
                # Plain and checker in turn, plain first and last: each side's median, so that one slow moment
                # of a shared machine moves neither.
                plain = [plain_read(spark, out_dir / "data")]
                warm = []
                for i in range(WARM_RUNS):
                    warm.append(run_checker(spark, out_dir / "data", expect, writes, out_dir / f"warm-{i}"))
                    plain.append(plain_read(spark, out_dir / "data"))
                from_spark_s = records_from_spark(spark, out_dir / "data", expect, writes)
        finally:
            session.remove_tree(out_dir)
    plain_s = statistics.median(p[0] for p in plain)
    checker_s = statistics.median(w[0] for w in warm)
    _, findings, jepsen = warm[-1]
    rows = plain[0][1]
    read = sum(t.records for t in findings.totals)
    if not findings.ok or jepsen.found or not read == rows["records"] == kafka_rows:
        raise AssertionError(
            f"bench run is not clean: {findings.describe_failures()}; anomaly checks: {jepsen.found}; "
            f"the plain read saw {rows}, the Kafka read {kafka_rows}, the checker {read} records"
        )
    return {
        "bench": "integrity",
        "kafka_version": version,
        "spark_master": master,
        "records": records,
        "records_read": read,
        "rows_read": rows,
        "pipeline_s": round(pipeline_s, 3),
        "stage_s": round(stage_s, 3),
        "plain_read_s": round(plain_s, 3),
        "plain_read_samples_s": [round(p[0], 3) for p in plain],
        "checker_s": round(checker_s, 3),
        "checker_samples_s": [round(w[0], 3) for w in warm],
        "checker_first_s": round(first_s, 3),
        "spark_start_s": round(spark_start_s, 3),
        "kafka_read_s": round(kafka_s, 3),
        "records_from_spark_s": round(from_spark_s, 3),
        "checker_timings_s": findings.timings,
        "anomaly_checks_found": jepsen.found,
        "ratio": round(checker_s / plain_s, 3),
        "target": "<= 2",
    }
