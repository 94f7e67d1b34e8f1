"""`kcts bench integrity`: the Spark checker's wall time ÷ a plain confluent-kafka read of the same topics.

One local cluster; the confluent-kafka pipeline copies `records` generated records into two output
topics (transactions, some aborted on purpose, as in the suite). Then, on the same topics:
- `plain_read_s`: one confluent-kafka consumer reads every partition of the input and both outputs
  under read_committed, from the beginning to the end, touching each value (the floor for any
  checker that must see every record);
- `checker_s`: `check_pipeline` as the suite runs it (read_committed and read_uncommitted reads,
  every anomaly check, report.json + anomalies.parquet + summary.txt), on a SparkSession that has
  already run one check, which is what every scenario after the first in a pytest run gets;
- `checker_first_s`: the same on a fresh session (JIT and Spark code generation still cold), and
  `spark_start_s` (session start), reported beside the ratio, not in it.
The plain read runs before and after the warm check; its median is the denominator.
"""

from __future__ import annotations

import statistics
import time

from confluent_kafka import OFFSET_BEGINNING, KafkaError, TopicPartition

from harness import confluent, session
from harness.clients.admin import admin_client, create_topic
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.integrity.run import check_pipeline
from harness.integrity.spark import DEFAULT_MASTER, spark_session
from harness.kafka.dist import DEFAULT_VERSION
from harness.workload.pipeline import Pipeline, PipelineSpec

PARTITIONS = 3
SPEC = PipelineSpec(
    partitions=PARTITIONS, instances=2, keys=1000, generator_txn=5000, generator_aborts_every=10,
    processor_batch=5000, processor_aborts_every=10,
)


def plain_read(client_config: dict[str, str], topics: list[str], partitions: int) -> tuple[float, int]:
    """Seconds to read every committed record of `topics` with one consumer, and how many there were."""
    t0 = time.monotonic()
    config = {
        **client_config, "group.id": "kcts-bench-plain", "isolation.level": "read_committed",
        "enable.auto.commit": False, "enable.partition.eof": True, "fetch.max.bytes": 64 << 20,
        "max.partition.fetch.bytes": 8 << 20, "queued.min.messages": 1_000_000,
    }
    with confluent.consumer(config) as consumer:
        assignment = [TopicPartition(t, p, OFFSET_BEGINNING) for t in topics for p in range(partitions)]
        consumer.assign(assignment)
        at_end: set[tuple[str, int]] = set()
        count = size = 0
        deadline = t0 + 600
        while len(at_end) < len(assignment):
            if time.monotonic() > deadline:
                raise AssertionError(f"plain read incomplete after 600 s: {count} records, at end: {sorted(at_end)}")
            for msg in consumer.consume(10_000, 1.0):
                err = msg.error()
                if err is None:
                    count += 1
                    size += len(msg.value())
                elif err.code() == KafkaError._PARTITION_EOF:
                    at_end.add((msg.topic(), msg.partition()))
                else:
                    raise AssertionError(f"plain read: {err}")
    return time.monotonic() - t0, count


def run(records: int = 1_000_000, version: str = DEFAULT_VERSION, master: str = DEFAULT_MASTER) -> dict[str, object]:
    with LocalCluster(LocalClusterSpec(version=version)) as cluster, admin_client(cluster) as admin:
        safe = {"min.insync.replicas": "2"}
        inp = create_topic(cluster, admin, "bench-integrity-in", PARTITIONS, 3, safe)
        outs = [create_topic(cluster, admin, f"bench-integrity-out{i}", PARTITIONS, 3, safe) for i in range(2)]
        t0 = time.monotonic()
        pipeline = Pipeline(cluster, inp, outs, "bench-integrity", SPEC).start()
        try:
            pipeline.generator.write(records)
            pipeline.finish(timeout=1800)
        finally:
            pipeline.stop()
        pipeline_s = time.monotonic() - t0
        topics = [inp, *outs]
        out_dir = session.current().scratch("bench-integrity")
        t0 = time.monotonic()
        with spark_session(master) as spark:
            spark_start_s = time.monotonic() - t0
            first = check_pipeline(spark, pipeline, out_dir / "first")
            plain = [plain_read(cluster.client_config(), topics, PARTITIONS)]
            t0 = time.monotonic()
            findings = check_pipeline(spark, pipeline, out_dir / "warm")
            checker_s = time.monotonic() - t0
            plain.append(plain_read(cluster.client_config(), topics, PARTITIONS))
        session.remove_tree(out_dir)
    plain_s = statistics.median(p[0] for p in plain)
    read = sum(t.records for t in findings.totals)
    if not findings.ok or any(n != read for _, n in plain):
        raise AssertionError(
            f"bench run is not clean: {findings.describe_failures()}; plain reads saw {[n for _, n in plain]}, "
            f"the checker {read}"
        )
    return {
        "bench": "integrity",
        "kafka_version": version,
        "spark_master": master,
        "records": records,
        "records_read": read,
        "pipeline_s": round(pipeline_s, 3),
        "plain_read_s": round(plain_s, 3),
        "plain_read_samples_s": [round(p[0], 3) for p in plain],
        "checker_s": round(checker_s, 3),
        "checker_first_s": first.timings.get("read_and_check_s"),
        "spark_start_s": round(spark_start_s, 3),
        "checker_timings_s": findings.timings,
        "ratio": round(checker_s / plain_s, 3),
        "target": "<= 3",
    }
