"""KIP-320 OffsetsForLeaderEpoch for epochs the leader has no entry for (the semantics KIP-101 and
KIP-279 define and KIP-320 "Consumer Handling" relies on): a gap, before the earliest, and -1."""

from __future__ import annotations

import dataclasses

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from harness.checks import recorded
from harness.checks.epoch_end_offsets import (
    EndOffsetAnswers,
    assert_epoch_before_the_earliest_answered_with_its_start,
    assert_gap_epoch_answered_with_the_epoch_below,
    assert_no_epoch_answered_undefined,
)
from harness.checks.epoch_history import assert_end_offsets
from harness.scenarios.epoch_edges import EndOffsetProbe, GappedEpochs, gapped_epochs

pytestmark = pytest.mark.kip320


@pytest.fixture(scope="module")
def gapped(request: pytest.FixtureRequest, cluster: Cluster) -> GappedEpochs:
    """A 3-replica partition whose leader moved twice without a write between, then lost its log's head."""
    return gapped_epochs(cluster, module_topic(request, "gapped", 3))


def _answers(probe: EndOffsetProbe, name: str) -> EndOffsetAnswers:
    recorded.save(name, probe)
    return EndOffsetAnswers.from_record(dataclasses.asdict(probe))


@pytest.mark.promise("kip320.ofle.gap-epoch-answered-with-the-epoch-below")
def test_offsets_for_leader_epoch_answers_an_epoch_in_a_gap_with_the_largest_epoch_below(gapped: GappedEpochs) -> None:
    """KIP-279, "Proposed Changes" (on KIP-101's OffsetsForLeaderEpoch), as KIP-320 "Consumer Handling"
    uses it: an epoch the leader has no entry for (the leader moved twice without a write between)
    is answered with the largest epoch the leader knows below it, ending at the start offset of the
    next epoch it knows; not with the asked epoch. At every version from v2."""
    a = _answers(gapped.gap, "kip320-ofle-gap")
    assert_gap_epoch_answered_with_the_epoch_below(a)


@pytest.mark.promise("kip320.ofle.epoch-before-the-earliest")
def test_offsets_for_leader_epoch_answers_an_epoch_older_than_the_earliest_with_its_start(
    gapped: GappedEpochs,
) -> None:
    """KIP-320, "Consumer Handling": "we should be able to get close by finding the starting offset of
    the next largest epoch that the leader is aware of". After DeleteRecords removed the first epoch's
    records, an epoch older than the earliest the leader knows is answered with the asked epoch,
    ending at the start offset of the earliest epoch it knows (the log start), as Apache's
    LeaderEpochFileCache.endOffsetFor does since Kafka 2.1. At every version from v2."""
    a = _answers(gapped.require_head_deleted(), "kip320-ofle-head-deleted")
    assert_epoch_before_the_earliest_answered_with_its_start(a)


@pytest.mark.promise("kip320.ofle.no-epoch-undefined")
def test_offsets_for_leader_epoch_answers_no_epoch_with_undefined(gapped: GappedEpochs) -> None:
    """KIP-101, "Proposed Changes" (UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET): LeaderEpoch -1 is
    answered with LeaderEpoch -1 and EndOffset -1, without an error, at every version from v2."""
    assert_no_epoch_answered_undefined(_answers(gapped.gap, "kip320-ofle-gap"))


@pytest.mark.promise("kip320.ofle.epoch-end-offsets")
def test_offsets_for_leader_epoch_answers_every_epoch_from_the_leaders_epochs(gapped: GappedEpochs) -> None:
    """KIP-320, "Replica Handling" and "Consumer Handling", with KIP-279's LeaderEpoch: every epoch from
    0 to two above the current one, asked of a leader with an epoch gap, before and after its log's
    head was deleted, is answered as the leader's epochs (from its log) owe: a known past epoch ends
    where the next known begins, the current epoch at the log end, a newer one (-1, -1)."""
    probes = [gapped.gap, *([gapped.head_deleted] if gapped.head_deleted else [])]
    for probe in probes:
        a = EndOffsetAnswers.from_record(dataclasses.asdict(probe))
        for version, answers in sorted(a.answers.items()):
            try:
                assert_end_offsets(a.batches, a.current_epoch, a.log_end, answers, a.log_start)
            except AssertionError as exc:
                raise AssertionError(f"OffsetsForLeaderEpoch v{version} ({a.stage}): {exc}") from None
