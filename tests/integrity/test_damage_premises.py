"""The integrity scenes' premises: a clean output before the damage, the damage done as asked, and
faults that can move a leader.

Each is the target's part: a broken one ends the check "target refused" (or "not supported", for
what the target has no way to give) with the target's answers or account, never a FAIL of the
checker (whose promise it is) nor an ERROR."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.cluster.state import PartitionState
from harness.errors import NotSupported, TargetRefused
from harness.integrity.model import Anomaly, AnomalyRow, Findings, TopicTotals
from harness.scenarios.integrity import (
    ProcessorKind,
    clean_faults,
    cut_off_pipeline,
    require_clean,
    require_deleted_head,
)
from tests.harness.test_epochless import StateCluster


def findings(**counts: int) -> Findings:
    rows = {Anomaly(k): [AnomalyRow(Anomaly(k), "out", 0, 7, 3, "k1", 2, "d")] for k in counts}
    return Findings({Anomaly(k): n for k, n in counts.items()}, rows, [TopicTotals("out", "output", 10, 10, 10)])


def test_a_clean_pipeline_is_the_premise() -> None:
    require_clean(findings(), "summary.txt")
    # A loss inside a reported window is no failure.
    require_clean(findings(lost_in_truncation=2), "summary.txt")


@pytest.mark.parametrize("kind", [a.value for a in Anomaly if a.is_failure])
def test_any_failure_before_the_damage_refuses_the_premise(kind: str) -> None:
    with pytest.raises(TargetRefused, match=rf"shows \{{'{kind}': 4\}} before any damage") as info:
        require_clean(findings(**{kind: 4}), "r/summary.txt")
    assert "out" in str(info.value) and "r/summary.txt" in str(info.value)


def test_the_head_deleted_as_asked_is_the_premise() -> None:
    require_deleted_head("out", 6, (0, 40), (6, 40))


@pytest.mark.parametrize(("after", "what"), [
    ((0, 6), "the records from the offset on deleted instead (Tansu 0.6.0 on PostgreSQL: record.id >= offset)"),
    ((0, 40), "nothing deleted"),
    ((40, 40), "everything deleted"),
    ((6, 41), "a record appended"),
])
def test_a_deletion_other_than_asked_refuses_the_premise(after: tuple[int, int], what: str) -> None:
    with pytest.raises(TargetRefused, match=rf"log start {after[0]}, high watermark {after[1]};") as info:
        require_deleted_head("out", 6, (0, 40), after)
    assert "KIP-107 leaves it at log start 6, high watermark 40" in str(info.value), what


TANSU = ("Tansu brokers keep no replica logs: every broker reads and writes the one copy of each partition in the "
         "shared PostgreSQL storage engine, and each broker's Metadata names itself (node 111) as leader")


@pytest.mark.parametrize("scene", [clean_faults, cut_off_pipeline])
def test_faults_that_move_no_leader_are_not_supported_before_anything_runs(scene: object) -> None:
    """Tansu's profile: one log per partition and no way of its own to move a leader. The nemesis of the
    scenes under faults waits for each fault to move a leader, so they are "not supported" with the
    target's account, decided from the capabilities (the stub answers no request)."""
    cluster = StateCluster(PartitionState("t", 0, 111, 0, (111,), (111,)))
    cluster.target = replace(cluster.target, replication=False, tables={"replication_why": TANSU})
    with pytest.raises(NotSupported, match=r"a broker fault that moves a partition's leader to another broker is not "
                                           r"supported by this target \(Tansu brokers keep no replica logs"):
        scene(cluster, "in", ["out0", "out1"], "g", ProcessorKind.CONFLUENT)  # type: ignore[operator]
