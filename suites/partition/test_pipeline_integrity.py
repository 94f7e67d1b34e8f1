"""Record integrity of transactional pipelines while leaders are cut off from the rest of the cluster."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from fixtures.cluster import Cluster
from fixtures.integrity import Anomaly, IntegrityChecker
from fixtures.topics import TopicFactory
from harness.scenarios.integrity import ProcessorKind, cut_off_pipeline

# About a minute of pipeline and Spark checker: kept out of the gate's 15 minutes (tox -e partition runs it).
pytestmark = [pytest.mark.partition, pytest.mark.needs_fault_control, pytest.mark.heavy]

SAFE = {"min.insync.replicas": "2"}


@pytest.mark.promise("eos.exactly-once-under-faults")
def test_cut_off_leaders_keep_every_record_exactly_once(
    replica_link_cluster: Cluster, topic_factory: TopicFactory, run_prefix: str,
    integrity_checker: IntegrityChecker, integrity_dir: Path,
) -> None:
    """Scenario: a generator writes keyed, checksummed records (some in transactions it aborts) into a
    3-partition input; two instances of the confluent-kafka exactly-once processor copy them into two
    outputs; meanwhile the nemesis cuts off, one at a time, the leader of an output partition, of an
    input partition and of another output partition, from the controller and every other broker
    while clients still reach it (a zombie leader, KIP-320 "Motivation"), until another broker
    leads, then reconnects it.

    Promise (KIP-98 exactly-once, KIP-447, with KIP-320 fencing the zombies): read_committed shows
    every committed input record exactly once in every output, none lost (no truncation window is
    reported, so none may be explained), no record of an aborted transaction, every key's records
    in sequence order, every payload intact. A cut-off leader whose log goes on is a replica with a
    log of its own: "not supported" on a target that keeps one log per partition."""
    inp = topic_factory(partitions=3, replication_factor=3, config=SAFE)
    outs = [topic_factory(partitions=3, replication_factor=3, config=SAFE) for _ in range(2)]
    group = f"{run_prefix}-eos-cut-off-{uuid.uuid4().hex[:6]}"
    run = cut_off_pipeline(replica_link_cluster, inp, outs, group, ProcessorKind.CONFLUENT)
    findings = integrity_checker.pipeline(run)

    assert [s.fault for s in run.done] == ["cut-off"] * 3, f"nemesis did {run.done}"
    (generator_done,) = run.generator_done
    assert all(f.t < generator_done.t for f in run.faults), (
        f"a fault came after the generator stopped at t={generator_done.t}: {[f.flat() for f in run.faults]}"
    )
    assert findings.ok, f"{findings.describe_failures()}\nfull report: {integrity_dir / 'summary.txt'}"
    assert findings.count(Anomaly.LOST_IN_TRUNCATION) == 0, "no window was reported, so nothing may be explained"
    for t in findings.totals:
        assert t.distinct_valid == t.expected, f"{t.topic}: {t.distinct_valid} of {t.expected} committed ids"
