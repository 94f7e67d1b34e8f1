"""Topics into DataFrames: Spark's Kafka source, then the record fields parsed with SQL functions only.

No Python UDF touches a row: parsing is `split` and `try_cast`, so a million records never cross
into Python. A value that does not parse keeps its raw text and gets `parsed = false`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from harness import confluent
from harness.workload import pipeline_record

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"

VALUES_SCHEMA = "topic string, partition int, offset bigint, raw string"
RECORD_COLUMNS = (
    "topic", "partition", "offset", "raw", "id", "key", "seq", "crc", "flag", "stage", "payload", "parsed",
)


def kafka_options(client_config: dict[str, str]) -> dict[str, str]:
    """librdkafka client settings as the Java client options Spark's Kafka source passes on."""
    opts = {"kafka.bootstrap.servers": client_config["bootstrap.servers"]}
    if "security.protocol" in client_config:
        opts["kafka.security.protocol"] = client_config["security.protocol"]
    if client_config.get("sasl.mechanism") == "PLAIN":
        opts["kafka.sasl.mechanism"] = "PLAIN"
        opts["kafka.sasl.jaas.config"] = (
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{client_config["sasl.username"]}" password="{client_config["sasl.password"]}";'
        )
    return opts


def offset_ranges(client_config: dict[str, str], topics: list[str], cap: int) -> dict[str, dict[str, list[int]]]:
    """Per topic and partition: [log start, min(high watermark, log start + cap)]."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    with confluent.admin(client_config) as admin:
        metadata = admin.list_topics(timeout=10).topics
        partitions = [TopicPartition(t, p) for t in topics for p in metadata[t].partitions]

        def offsets(spec: OffsetSpec) -> dict[tuple[str, int], int]:
            futures = admin.list_offsets({tp: spec for tp in partitions}, request_timeout=10)
            return {(tp.topic, tp.partition): f.result(10).offset for tp, f in futures.items()}

        start, end = offsets(OffsetSpec.earliest()), offsets(OffsetSpec.latest())
    ranges: dict[str, dict[str, list[int]]] = {}
    for (topic, partition), first in start.items():
        ranges.setdefault(topic, {})[str(partition)] = [first, min(end[(topic, partition)], first + cap)]
    return ranges


def read_topics(
    spark: SparkSession, client_config: dict[str, str], topics: list[str], isolation: str = READ_COMMITTED,
    ranges: dict[str, dict[str, list[int]]] | None = None,
) -> DataFrame:
    """Every record of `topics` from the earliest to the latest offset (or within `ranges`, see
    `offset_ranges`), parsed (see `parse`)."""
    return parse(read_values(spark, client_config, topics, isolation, ranges))


def read_values(
    spark: SparkSession, client_config: dict[str, str], topics: list[str], isolation: str = READ_COMMITTED,
    ranges: dict[str, dict[str, list[int]]] | None = None,
) -> DataFrame:
    """(topic, partition, offset, raw) of every record `read_topics` reads, before parsing."""
    bounds = {"startingOffsets": "earliest", "endingOffsets": "latest"}
    if ranges is not None:
        bounds = {
            "startingOffsets": json.dumps({t: {p: r[0] for p, r in ps.items()} for t, ps in ranges.items()}),
            "endingOffsets": json.dumps({t: {p: r[1] for p, r in ps.items()} for t, ps in ranges.items()}),
        }
    reader = spark.read.format("kafka")
    for key, value in {
        **kafka_options(client_config),
        "subscribe": ",".join(topics),
        **bounds,
        "kafka.isolation.level": isolation,
        # Spark's own data-loss guard would stop at the first offset gap; loss is this checker's
        # finding to name and attribute, not a reason to abort the read.
        "failOnDataLoss": "false",
        "kafka.max.partition.fetch.bytes": str(8 << 20),
        "kafka.fetch.max.bytes": str(64 << 20),
        "kafka.receive.buffer.bytes": str(4 << 20),
        "kafka.max.poll.records": "20000",
        "kafka.fetch.max.wait.ms": "10",
    }.items():
        reader = reader.option(key, value)
    return reader.load().selectExpr("topic", "CAST(partition AS INT) AS partition", "offset",
                                    "CAST(value AS STRING) AS raw")


def parse(raw: DataFrame) -> DataFrame:
    """(topic, partition, offset, raw) -> RECORD_COLUMNS."""
    parts = f"split(raw, '{pipeline_record.SEP}', {len(pipeline_record.FIELDS)})"
    return raw.selectExpr(
        "topic", "CAST(partition AS INT) AS partition", "offset", "raw",
        f"try_cast(get({parts}, 0) AS BIGINT) AS id",
        f"get({parts}, 1) AS key",
        f"try_cast(get({parts}, 2) AS BIGINT) AS seq",
        f"try_cast(get({parts}, 3) AS BIGINT) AS crc",
        f"get({parts}, 4) AS flag",
        f"get({parts}, 5) AS stage",
        f"get({parts}, 6) AS payload",
    ).selectExpr(
        *RECORD_COLUMNS[:-1],
        "(id IS NOT NULL AND seq IS NOT NULL AND crc IS NOT NULL AND payload IS NOT NULL "
        "AND flag IN ('A', 'C')) AS parsed",
    )


def write_values(values: DataFrame, folder: Path, records_per_file: int | None = None) -> None:
    """(topic, partition, offset, raw) rows, partitioned by topic and partition, sorted by offset:
    each partition's records written by one task, in files of `records_per_file` (by default
    `layout.RECORDS_PER_FILE`) rolled in offset order (c000, c001, ...)."""
    from harness.integrity.layout import RECORDS_PER_FILE

    (values.repartition("topic", "partition").sortWithinPartitions("topic", "partition", "offset")
     .write.mode("overwrite").option("maxRecordsPerFile", records_per_file or RECORDS_PER_FILE)
     .partitionBy("topic", "partition").parquet(str(folder)))


def load_values(spark: SparkSession, folder: Path) -> DataFrame:
    """What `write_values` wrote, typed by VALUES_SCHEMA (not by inference from directory names)."""
    return spark.read.schema(VALUES_SCHEMA).parquet(str(folder)).select("topic", "partition", "offset", "raw")
