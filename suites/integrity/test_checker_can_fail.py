"""Record integrity: the checker fails on real damage: an extra record, and a loss no window explains."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from harness.clients.admin import QUIET, create_topic, topic_name
from harness.clients.history import produce, read_partition
from harness.cluster.base import Cluster
from harness.integrity.model import Anomaly, Expectation, TruncationWindow
from harness.integrity.run import check_topics, expectation, write_log
from harness.workload.pipeline import Pipeline, PipelineSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.integrity


@pytest.fixture(scope="module")
def finished_pipeline(cluster: Cluster, admin: AdminClient, run_prefix: str) -> Iterator[Pipeline]:
    """A small fault-free pipeline into two outputs, finished; each test damages one output."""
    inp = create_topic(cluster, admin, topic_name(run_prefix, "canfail-in"), 3)
    outs = [create_topic(cluster, admin, topic_name(run_prefix, f"canfail-out{i}"), 3) for i in range(2)]
    pipeline = Pipeline(
        cluster, inp, outs, f"{run_prefix}-canfail-{uuid.uuid4().hex[:6]}", PipelineSpec(instances=1)
    ).start()
    try:
        pipeline.generator.write(500)
        pipeline.finish()
    finally:
        pipeline.stop()
    yield pipeline


def only_output(pipeline: Pipeline, output: str, windows: tuple[TruncationWindow, ...] = ()) -> Expectation:
    full = expectation(pipeline, windows)
    return Expectation(full.inputs, (output,), full.ranges, windows)


def test_checker_flags_a_duplicate_written_into_an_output(
    finished_pipeline: Pipeline, cluster: Cluster, spark: SparkSession, integrity_dir: Path,
) -> None:
    """Scenario: after a clean run, one committed output record is copied byte for byte and appended to
    its partition by a plain (non-transactional) producer.

    Promise: the checker reports exactly one `duplicate`, naming that id and both offsets, and
    nothing else."""
    pipeline = finished_pipeline
    out = pipeline.outputs[0]
    consumer = Consumer({**cluster.client_config(), **QUIET, "group.id": f"dup-{uuid.uuid4().hex[:6]}",
                         "isolation.level": "read_committed", "enable.partition.eof": True})
    first = min(w[3] for w in pipeline.history.writes.rows() if w[1] == out and w[2] == 0)
    try:
        (original,) = read_partition(consumer, out, 0, first, first + 1)
    finally:
        consumer.close()
    history = produce(Producer({**cluster.client_config(), **QUIET}), out, [original.value], partition=0)
    (copy,) = history.acked

    findings = check_topics(spark, cluster.client_config(), only_output(pipeline, out),
                            write_log(spark, pipeline.history.writes), out_dir=integrity_dir,
                            meta={"scenario": "one record copied into an output", "copied_offset": original.offset,
                                  "copy_offset": copy.offset})

    assert findings.failures == {Anomaly.DUPLICATE: 1}, findings.describe_failures()
    (row,) = findings.samples[Anomaly.DUPLICATE]
    assert (row["topic"], row["partition"], row["offset"]) == (out, 0, original.offset), row
    assert str(row["detail"]) == f"2 copies, offsets {original.offset} .. {copy.offset}", row


def test_checker_flags_a_loss_outside_every_reported_window(
    finished_pipeline: Pipeline, cluster: Cluster, admin: AdminClient, spark: SparkSession, integrity_dir: Path,
) -> None:
    """Scenario: after a clean run, the first records of one output partition are deleted
    (DeleteRecords), while the only truncation window reported lies on another partition.

    Promise: every deleted committed record is reported `lost`, located at its acknowledged offset
    and marked as outside every reported window; none is explained by the unrelated window."""
    pipeline = finished_pipeline
    out = pipeline.outputs[1]
    writes = sorted(w for w in pipeline.history.writes.rows() if w[1] == out and w[2] == 0)
    cut = sorted(w[3] for w in writes)[5]
    deleted = {w[0] for w in writes if w[3] < cut}
    admin.delete_records([TopicPartition(out, 0, cut)])[TopicPartition(out, 0, cut)].result(30)
    elsewhere = TruncationWindow(out, 1, 0, 1_000_000)

    findings = check_topics(spark, cluster.client_config(), only_output(pipeline, out, (elsewhere,)),
                            write_log(spark, pipeline.history.writes), out_dir=integrity_dir,
                            meta={"scenario": f"records before offset {cut} of {out}-0 deleted"})

    assert findings.failures == {Anomaly.LOST: len(deleted)}, findings.describe_failures()
    assert findings.count(Anomaly.LOST_IN_TRUNCATION) == 0, findings.evidence(Anomaly.LOST_IN_TRUNCATION)
    lost = findings.samples[Anomaly.LOST]
    assert {r["id"] for r in lost} <= deleted, f"reported lost ids that were not deleted: {lost}"
    assert all(r["partition"] == 0 and r["offset"] < cut and "outside every" in str(r["detail"]) for r in lost), lost
