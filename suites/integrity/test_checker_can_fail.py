"""Record integrity: the checker fails on real damage: an extra record, and a loss no window explains."""

from __future__ import annotations

import uuid

import pytest

from fixtures.cluster import Cluster
from fixtures.integrity import Anomaly, IntegrityChecker
from harness.scenarios.integrity import FinishedPipeline, copy_into_output, delete_output_head

# The checker's own can-fail runs here against real pipelines; tests/integrity judges the same checker in the
# gate, so this heavier pair runs in tox -e integrity.
pytestmark = [pytest.mark.integrity, pytest.mark.heavy]


@pytest.mark.promise("kcts.checker-finds-damage")
def test_checker_flags_a_duplicate_written_into_an_output(
    undamaged: FinishedPipeline, cluster: Cluster, integrity_checker: IntegrityChecker,
) -> None:
    """Scenario: after a clean run, one committed output record is copied byte for byte and appended to
    its partition by a plain (non-transactional) producer.

    Promise: the checker reports exactly one `duplicate`, naming that id and both offsets, and
    nothing else."""
    damage = copy_into_output(cluster, undamaged, f"dup-{uuid.uuid4().hex[:6]}")
    out = damage.output

    findings = integrity_checker.damaged(damage)

    assert findings.failures == {Anomaly.DUPLICATE: 1}, findings.describe_failures()
    (row,) = findings.samples[Anomaly.DUPLICATE]
    assert (row.topic, row.partition, row.offset) == (out, 0, damage.original_offset), row
    assert row.detail == f"2 copies, offsets {damage.original_offset} .. {damage.copy_offset}", row


@pytest.mark.promise("kcts.checker-finds-damage")
def test_checker_flags_a_loss_outside_every_reported_window(
    undamaged: FinishedPipeline, cluster: Cluster, integrity_checker: IntegrityChecker,
) -> None:
    """Scenario: after a clean run, the first records of one output partition are deleted
    (DeleteRecords), while the only truncation window reported lies on another partition.

    Promise: every deleted committed record is reported `lost`, located at its acknowledged offset
    and marked as outside every reported window; none is explained by the unrelated window."""
    damage = delete_output_head(cluster, undamaged)
    cut, deleted = damage.cut, damage.deleted

    findings = integrity_checker.damaged(damage)

    assert findings.failures == {Anomaly.LOST: len(deleted)}, findings.describe_failures()
    assert findings.count(Anomaly.LOST_IN_TRUNCATION) == 0, findings.evidence(Anomaly.LOST_IN_TRUNCATION)
    lost = findings.samples[Anomaly.LOST]
    assert {r.id for r in lost} <= deleted, f"reported lost ids that were not deleted: {lost}"
    assert all(r.partition == 0 and r.offset is not None and r.offset < cut and "outside every" in str(r.detail)
               for r in lost), lost
