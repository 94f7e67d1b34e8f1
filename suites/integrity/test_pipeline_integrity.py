"""Record integrity: transactional pipelines keep every record exactly once, in order, under faults."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from fixtures.cluster import Cluster
from fixtures.integrity import Anomaly, Findings, IntegrityChecker
from fixtures.topics import TopicFactory
from harness.scenarios.integrity import FinishedPipeline, ProcessorKind, clean_faults, unclean_pipeline
from harness.verdicts import target_refused

pytestmark = [pytest.mark.integrity]

SAFE = {"min.insync.replicas": "2"}


def failures_message(findings: Findings, report: Path) -> str:
    return f"{findings.describe_failures()}\nfull report: {report / 'summary.txt'}"


# Heavy (tox -e integrity, kcts run -m integrity): the gate judges the promise under faults.
@pytest.mark.heavy
@pytest.mark.promise("eos.exactly-once-under-faults")
def test_fault_free_pipeline_keeps_every_record_exactly_once(
    finished: FinishedPipeline, integrity_checker: IntegrityChecker, integrity_dir: Path,
) -> None:
    """Scenario: the generator writes 500 keyed, checksummed records (every sixth transaction
    aborted) into a 3-partition input; one confluent-kafka exactly-once processor consumes them,
    produces to two output topics and commits offsets inside transactions, aborting every fifth;
    no fault. The promise of the scenes under faults, where nothing can excuse a miss: it judges a
    target the nemesis cannot reach (an external cluster) or whose faults a scene cannot use.

    Promise (KIP-98 exactly-once, KIP-447 group-metadata fencing): read_committed shows every
    committed input record exactly once in every output, none lost, no record of an aborted
    transaction, every key's records in sequence order, every payload intact."""
    findings = integrity_checker.pipeline(finished)
    pipeline = finished.pipeline

    # Without records of aborted transactions in the logs, "none visible" would be vacuous.
    by_topic = {t.topic: t for t in findings.totals}
    if not by_topic[pipeline.input_topic].aborted_in_log:
        target_refused(f"no record of an aborted generator transaction in the input log under read_uncommitted: "
                       f"{by_topic[pipeline.input_topic]}")
    assert findings.ok, failures_message(findings, integrity_dir)
    for t in findings.totals:
        assert t.distinct_valid == t.expected, f"{t.topic}: {t.distinct_valid} of {t.expected} committed ids"


# The gate judges the pipeline with the confluent-kafka processor; the same scene with Apache's
# TransactionalMessageCopier is heavy (tox -e integrity runs both), for the gate's 15 minutes.
@pytest.mark.needs_fault_control
@pytest.mark.parametrize("processor", [
    ProcessorKind.CONFLUENT, pytest.param(ProcessorKind.JAVA, marks=pytest.mark.heavy),
])
@pytest.mark.promise("eos.exactly-once-under-faults")
def test_clean_faults_keep_every_record_exactly_once(
    fault_cluster: Cluster, topic_factory: TopicFactory, run_prefix: str,
    integrity_checker: IntegrityChecker, integrity_dir: Path, processor: ProcessorKind,
) -> None:
    """Scenario: a generator writes keyed, checksummed records (some in transactions it aborts) into a
    3-partition input; two instances of one exactly-once processor (confluent-kafka, or the Java
    TransactionalMessageCopier on the cluster's kafka-clients) consume, produce to two output topics
    and commit offsets inside transactions, aborting some on purpose; meanwhile the nemesis crashes
    (SIGKILL) the leader of an output partition, bounces (clean stop and start) the leader of an input
    partition and pauses (SIGSTOP) the leader of another output partition, healing each in turn.

    Promise (KIP-98 exactly-once, KIP-447 group-metadata fencing): read_committed shows every
    committed input record exactly once in every output, none lost, no record of an aborted
    transaction, every key's records in sequence order, every payload intact."""
    inp = topic_factory(partitions=3, replication_factor=3, config=SAFE)
    outs = [topic_factory(partitions=3, replication_factor=3, config=SAFE) for _ in range(2)]
    group = f"{run_prefix}-eos-{processor.value}-{uuid.uuid4().hex[:6]}"
    run = clean_faults(fault_cluster, inp, outs, group, processor)
    faults = run.faults
    findings = integrity_checker.pipeline(run)

    assert [s.fault for s in run.done] == ["crash", "bounce", "pause"], f"nemesis did {run.done}"
    (generator_done,) = run.generator_done
    assert all(f.t < generator_done.t for f in faults), (
        f"a fault came after the generator stopped at t={generator_done.t}: {[f.flat() for f in faults]}"
    )
    assert findings.ok, failures_message(findings, integrity_dir)
    assert findings.count(Anomaly.LOST_IN_TRUNCATION) == 0, "no window was reported, so nothing may be explained"
    for t in findings.totals:
        assert t.distinct_valid == t.expected, f"{t.topic}: {t.distinct_valid} of {t.expected} committed ids"
    # The aborted-read check is not vacuous: the logs hold records of aborted transactions.
    by_topic = {t.topic: t for t in findings.totals}
    assert by_topic[inp].aborted_in_log, f"no aborted generator transaction in the input log: {by_topic[inp]}"
    for out in outs:
        t = by_topic[out]
        assert not t.uncommitted_capped and t.uncommitted_records is not None and t.uncommitted_records > t.records, (
            f"{out}: read_uncommitted shows {t.uncommitted_records} records, read_committed {t.records}: "
            "no aborted processor transaction reached the log"
        )


@pytest.mark.needs_fault_control
@pytest.mark.promise("eos.loss-only-in-truncation-window")
def test_unclean_election_loses_only_records_in_the_reported_window(
    unclean_cluster: Cluster, topic_factory: TopicFactory, run_prefix: str,
    integrity_checker: IntegrityChecker, integrity_dir: Path,
) -> None:
    """Scenario: the confluent-kafka pipeline runs into two outputs. One output allows unclean election
    (RF 2, min.insync.replicas 1) and its partition 0 alone has both replicas on brokers the nemesis
    stops. After a first batch is processed, the nemesis shrinks that partition's ISR to its leader,
    the pipeline processes a second batch (committed on the leader alone), the nemesis forces an
    unclean election of the stale follower (the followers stopped, the lone leader written to, then
    a follower elected uncleanly) and the old leader truncates; a third batch follows.

    Promise: every record missing from read_committed was last written inside the truncation window
    the nemesis reports (topic, partition, offset range); nothing else is lost, duplicated, reordered
    or read from an aborted transaction."""
    victim = f"{run_prefix}-unclean-victim-{uuid.uuid4().hex[:6]}"
    inp = topic_factory(partitions=3, replication_factor=3, config=SAFE)
    other = topic_factory(partitions=3, replication_factor=3, config=SAFE)
    group = f"{run_prefix}-unclean-{uuid.uuid4().hex[:6]}"
    run = unclean_pipeline(unclean_cluster, victim, inp, other, group)
    election, window, truncated = run.election, run.window, run.truncated
    findings = integrity_checker.pipeline(run)

    if not truncated:
        target_refused(f"the forced unclean election truncated no committed write (window {window}): {election}")
    assert findings.count(Anomaly.LOST) == 0, failures_message(findings, integrity_dir)
    assert findings.count(Anomaly.LOST_IN_TRUNCATION) == len(truncated), (
        f"{len(truncated)} committed records were written in {window} before the election, the checker "
        f"attributes {findings.count(Anomaly.LOST_IN_TRUNCATION)} losses to it\n"
        f"{findings.evidence(Anomaly.LOST_IN_TRUNCATION)}"
    )
    explained = findings.samples[Anomaly.LOST_IN_TRUNCATION]
    assert all((r.topic, r.partition) == (victim, 0) for r in explained), explained[:5]
    assert findings.ok, failures_message(findings, integrity_dir)
