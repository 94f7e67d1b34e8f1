"""The checker against a live target: read the pipeline's topics, check, report."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from harness import progress
from harness.clients.jvm import java_reaches
from harness.errors import KnownClientGap
from harness.integrity import report
from harness.integrity.checker import check
from harness.integrity.connector import connector_client_version
from harness.integrity.model import Expectation, Findings, ReportMeta, TruncationWindow
from harness.integrity.read import READ_COMMITTED, READ_UNCOMMITTED, offset_ranges, read_topics, read_values
from harness.workload.pipeline import Pipeline
from harness.workload.write_log import WriteLog, merge_ranges

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

UNCOMMITTED_CAP = 50_000  # offsets per partition read under read_uncommitted


def check_topics(
    spark: SparkSession,
    client_config: dict[str, str],
    expect: Expectation,
    writes: DataFrame | Callable[[], DataFrame] | None = None,
    read_uncommitted: bool = True,
    out_dir: Path | None = None,
    meta: ReportMeta | None = None,
    uncommitted_cap: int = UNCOMMITTED_CAP,
    read_to: dict[str, dict[int, int]] | None = None,
) -> Findings:
    """Read every topic of `expect` under read_committed, check, and write the report to `out_dir`
    (with `meta`, what the scene did).

    Each partition is read from its log start to ListOffsets LATEST, and with `read_to` (topic ->
    partition -> offset) at least to that offset: the offset after the last acknowledged write, on
    a target whose LATEST answers less than its log end (Tansu 0.6.0 in memory answers the last
    batch's base offset + 1), where the records past it would otherwise be reported lost.

    With `read_uncommitted`, the first `uncommitted_cap` offsets of each partition are also read
    under read_uncommitted: evidence that records of aborted transactions really are in the log
    (so that finding none under read_committed means something). A scenario's topics fit under
    the cap whole; on a million-record benchmark the evidence comes from a prefix, at a sixth of
    the cost of reading everything twice, and the totals say so (`uncommitted_capped`).

    A target that Spark's Java kafka-clients cannot talk to (`harness.clients.jvm.java_reaches`)
    raises `NotSupported` before anything is read.
    """
    return _check_topics(spark, client_config, expect, writes, read_uncommitted, out_dir,
                         meta.as_json() if meta is not None else {}, uncommitted_cap, read_to)


def _check_topics(
    spark: SparkSession, client_config: dict[str, str], expect: Expectation,
    writes: DataFrame | Callable[[], DataFrame] | None, read_uncommitted: bool, out_dir: Path | None,
    meta: dict[str, object], uncommitted_cap: int = UNCOMMITTED_CAP, read_to: dict[str, dict[int, int]] | None = None,
) -> Findings:
    """`check_topics`, with the report's meta already as its JSON (a pipeline's adds its own summary)."""
    t0 = time.monotonic()
    meta = dict(meta)
    if client_config.get("bootstrap.servers"):
        # Spark's Kafka source is a Java kafka-clients: where that client cannot talk to the target
        # (librdkafka's mock cluster), the check ends at once, "not supported" with the target's
        # ApiVersions answer, instead of an ERROR after Spark's admin times out ("Timed out waiting
        # for a node assignment").
        java_reaches(client_config["bootstrap.servers"],
                     f"{connector_client_version()} (Spark's Kafka source, which the checker reads with)",
                     client_config)
    try:
        findings, anomalies, capped = _read_and_check(
            spark, client_config, expect, writes, read_uncommitted, uncommitted_cap, read_to
        )
    except Exception as exc:
        gap = reader_gap_summary(exc)
        if gap is None:
            raise
        # Spark's admin offset reader cannot describe this target's topics (a kafka-clients defect,
        # not the target's): its consumer offset reader sizes the read from Metadata and ListOffsets.
        progress.status("checker (Spark): the admin offset reader failed on this target; reading with the consumer's")
        meta["offset_reader"] = f"consumer (Spark's admin offset reader: {gap})"
        with consumer_offset_fetching(spark):
            try:
                return _finish(*_read_and_check(spark, client_config, expect, writes, read_uncommitted,
                                                uncommitted_cap, read_to), spark, out_dir, meta, t0)
            except Exception as again:
                reader_gap(again)
                raise
    return _finish(findings, anomalies, capped, spark, out_dir, meta, t0)


def _read_and_check(
    spark: SparkSession, client_config: dict[str, str], expect: Expectation,
    writes: DataFrame | Callable[[], DataFrame] | None, read_uncommitted: bool, uncommitted_cap: int,
    read_to: dict[str, dict[int, int]] | None = None,
) -> tuple[Findings, DataFrame, set[str]]:
    topics = list(expect.topics)
    whole = reaching(offset_ranges(client_config, topics, 1 << 62), read_to) if read_to else None
    records = read_values(spark, client_config, topics, READ_COMMITTED, whole)
    uncommitted = None
    capped: set[str] = set()
    if read_uncommitted:
        ranges = offset_ranges(client_config, topics, uncommitted_cap)
        uncommitted = read_topics(spark, client_config, topics, READ_UNCOMMITTED, ranges)
        capped = {t for t, ps in ranges.items() for r in ps.values() if r[1] - r[0] >= uncommitted_cap}
    findings, anomalies = check(records, expect, writes, uncommitted)
    return findings, anomalies, capped


def reaching(
    ranges: dict[str, dict[str, list[int]]], read_to: dict[str, dict[int, int]]
) -> dict[str, dict[str, list[int]]]:
    """`ranges` (topic -> partition -> [start, end], as `offset_ranges` gives them) with each end
    raised to the offset `read_to` names for its partition, where that is higher."""
    return {
        topic: {p: [start, max(end, read_to.get(topic, {}).get(int(p), end))] for p, (start, end) in parts.items()}
        for topic, parts in ranges.items()
    }


def _finish(
    findings: Findings, anomalies: DataFrame, capped: set[str], spark: SparkSession, out_dir: Path | None,
    meta: dict[str, object], t0: float,
) -> Findings:
    for t in findings.totals:
        t.uncommitted_capped = t.topic in capped
    findings.timings["read_and_check_s"] = round(time.monotonic() - t0, 3)
    try:
        if out_dir is not None:
            report.write(findings, anomalies, out_dir, {"spark_master": spark.sparkContext.master, **meta})
    finally:
        anomalies.unpersist()
    return findings


CONSUMER_OFFSETS = "spark.sql.streaming.kafka.useDeprecatedOffsetFetching"


@contextmanager
def consumer_offset_fetching(spark: SparkSession) -> Iterator[None]:
    """Spark's Kafka source sizes its reads with a KafkaConsumer (Metadata, ListOffsets) instead of an
    Admin client (whose describeTopics asks DescribeTopicPartitions where the target offers it), for
    the reads planned inside; the session's setting is restored at exit."""
    before = spark.conf.get(CONSUMER_OFFSETS, None)
    spark.conf.set(CONSUMER_OFFSETS, "true")
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(CONSUMER_OFFSETS)
        else:
            spark.conf.set(CONSUMER_OFFSETS, before)


def _npe_line(exc: BaseException) -> str | None:
    """kafka-clients' NullPointerException on a DescribeTopicPartitions answer with
    EligibleLeaderReplicas = null (a field its schema declares nullable, which kfake leaves null),
    as the line that shows it; None for any other failure."""
    text = str(exc)
    if "eligibleLeaderReplicas()" in text and "NullPointerException" in text:
        return next((x.strip() for x in text.splitlines() if "NullPointerException" in x), text[:300])
    return None


def reader_gap_summary(exc: BaseException) -> str | None:
    """What Spark's Kafka source failed on, where that is the known defect of its Java client (see
    `_npe_line`); None for any other failure."""
    line = _npe_line(exc)
    return None if line is None else (
        f"kafka-clients {connector_client_version()} cannot describe topics on this target: {line}"
    )


def reader_gap(exc: BaseException) -> None:
    """A failure of Spark's Kafka source that is a known defect of its Java client, not of the target,
    ends the check as a known client gap, with the client's own error as evidence."""
    line = _npe_line(exc)
    if line is not None:
        raise KnownClientGap(
            f"kafka-clients {connector_client_version()} in Spark's Kafka source (the checker's reader)",
            "apache/kafka DescribeTopicPartitionsResponse.partitionToTopicPartitionInfo calls "
            "eligibleLeaderReplicas().stream() on a field DescribeTopicPartitionsResponse.json declares nullable",
            f"it cannot describe topics on this target, whose DescribeTopicPartitions answers "
            f"EligibleLeaderReplicas = null: {line}",
        )


def expectation(pipeline: Pipeline, windows: tuple[TruncationWindow, ...] = ()) -> Expectation:
    return Expectation(
        (pipeline.input_topic,), tuple(pipeline.outputs), tuple(merge_ranges(pipeline.generator.history.ranges)),
        windows,
    )


def write_log(spark: SparkSession, *logs: WriteLog) -> Callable[[], DataFrame]:
    """The acknowledged writes as a DataFrame, built only if the checker asks (something is missing)."""

    def build() -> DataFrame:
        rows = [row for log in logs for row in log.rows()]
        return spark.createDataFrame(rows, "id bigint, topic string, partition int, offset bigint")

    return build


def check_pipeline(
    spark: SparkSession,
    pipeline: Pipeline,
    out_dir: Path | None,
    windows: tuple[TruncationWindow, ...] = (),
    read_uncommitted: bool = True,
    meta: ReportMeta | None = None,
) -> Findings:
    expect = expectation(pipeline, windows)
    writes = write_log(spark, pipeline.generator.history.writes, pipeline.history.writes)
    logs = {"client_logs": pipeline.save_client_logs(out_dir / "clients")} if out_dir is not None else {}
    return _check_topics(
        spark, pipeline.cluster.client_config(), expect, writes, read_uncommitted, out_dir,
        {**pipeline.summary(), **logs, **(meta.as_json() if meta is not None else {})},
    )
