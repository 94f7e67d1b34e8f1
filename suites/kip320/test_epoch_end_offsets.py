"""KIP-320 on a partition whose leader moved three times, one move without a write: OffsetsForLeaderEpoch
for epochs the leader has no entry for (the semantics KIP-101 and KIP-279 define and KIP-320 "Consumer
Handling" relies on: a gap, before the earliest, -1), ListOffsets at the log's edges, the API versions
without an epoch, and commits without one. One scene per module (see harness.scenarios.epoch_edges)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.checks.epoch_end_offsets import (
    assert_epoch_before_the_earliest_answered_with_its_start,
    assert_gap_epoch_answered_with_the_epoch_below,
    assert_no_epoch_answered_undefined,
)
from harness.checks.epoch_lineage import assert_end_offsets
from harness.checks.list_offsets_edges import (
    assert_max_timestamp_returns_its_records_epoch,
    assert_time_after_the_last_record_is_undefined,
)
from harness.checks.list_offsets_v0 import assert_list_offsets_v0_works
from harness.checks.old_versions import (
    assert_commit_without_epoch_reads_back_undefined,
    assert_old_commits_work,
    assert_old_list_offsets_work,
    assert_old_metadata_works,
)
from harness.histories import store
from harness.histories.leader_answers import EndOffsetAnswers, ListOffsetsAnswers
from harness.scenarios.epoch_edges import GappedEpochs, gapped_epochs
from harness.scenarios.list_offsets_v0 import list_offsets_v0

pytestmark = pytest.mark.kip320


@pytest.fixture(scope="module")
def gapped(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> GappedEpochs:
    """A 3-replica partition whose leader moved twice without a write between, then lost its log's head."""
    return gapped_epochs(cluster, module_topic(request, "gapped", 3), run_names.group("kip320-gapped-commits"))


def _answers(probe: EndOffsetAnswers, name: str) -> EndOffsetAnswers:
    store.save(name, probe)
    return probe


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
    """KIP-320, "Compatibility, Deprecation, and Migration Plan": where there is no epoch "we will use a
    sentinel value (-1) in the APIs that expose it"; OffsetsForLeaderEpoch's sentinels are KIP-101's
    UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET. LeaderEpoch -1 (what a replica or consumer without
    epochs asks) is answered with LeaderEpoch -1 and EndOffset -1, without an error, at every version
    from v2; not as an epoch older than the earliest (-1, log start), as kfake answers."""
    assert_no_epoch_answered_undefined(_answers(gapped.gap, "kip320-ofle-gap"))


@pytest.mark.promise("kip320.ofle.epoch-end-offsets")
def test_offsets_for_leader_epoch_answers_every_epoch_from_the_leaders_epochs(gapped: GappedEpochs) -> None:
    """KIP-320, "Replica Handling" and "Consumer Handling", with KIP-279's LeaderEpoch: every epoch from
    0 to two above the current one, asked of a leader with an epoch gap, before and after its log's
    head was deleted, is answered as the leader's epochs (from its log) owe: a known past epoch ends
    where the next known begins, the current epoch at the log end, a newer one (-1, -1)."""
    probes = [gapped.gap, *([gapped.head_deleted] if gapped.head_deleted else [])]
    for a in probes:
        for version, answers in sorted(a.answers.items()):
            try:
                assert_end_offsets(a.batches, a.current_epoch, a.log_end, answers, a.log_start)
            except AssertionError as exc:
                raise AssertionError(f"OffsetsForLeaderEpoch v{version} ({a.stage}): {exc}") from None



def _list_offsets(gapped: GappedEpochs) -> ListOffsetsAnswers:
    store.save("kip320-list-offsets-edges", gapped.list_offsets)
    return gapped.list_offsets


@pytest.mark.promise("kip320.list-offsets.max-timestamp-epoch")
def test_list_offsets_max_timestamp_returns_the_epoch_of_the_record_with_the_largest_timestamp(
    gapped: GappedEpochs,
) -> None:
    """KIP-320, "Protocol Changes / ListOffsets": the leader epoch returned "corresponds with the
    returned offset"; for MAX_TIMESTAMP (-3, v7+, KIP-734) that is the record with the largest
    timestamp, written two epochs before the current one: its offset, its timestamp and its batch's
    epoch, not the current epoch. At every version from v7."""
    assert_max_timestamp_returns_its_records_epoch(_list_offsets(gapped))


@pytest.mark.promise("kip320.list-offsets.after-last-record-undefined")
def test_list_offsets_for_a_time_after_the_last_record_answers_no_offset_and_no_epoch(gapped: GappedEpochs) -> None:
    """KIP-320, "Protocol Changes / ListOffsets" and "Compatibility" (the sentinel -1 where there is no
    epoch), on ListOffsets' own rule "if no such message is found, returns -1" (KIP-79): a time after
    the largest timestamp is answered offset -1, and from v4 epoch -1, without an error, at every
    version from v1."""
    assert_time_after_the_last_record_is_undefined(_list_offsets(gapped))


@pytest.mark.promise("kip320.compat.old-versions-work")
def test_list_offsets_versions_without_an_epoch_keep_working_after_leader_moves(gapped: GappedEpochs) -> None:
    """KIP-320, "Compatibility, Deprecation, and Migration Plan": "Older versions of the modified APIs
    will continue to work as expected": on a partition whose leader moved three times, ListOffsets
    v1-v3 answer EARLIEST, LATEST and lookups by time with the offsets the log owes."""
    assert_old_list_offsets_work(_list_offsets(gapped))


@pytest.mark.promise("kip320.compat.old-versions-work")
def test_metadata_versions_without_an_epoch_keep_working_after_leader_moves(gapped: GappedEpochs) -> None:
    """KIP-320, "Compatibility, Deprecation, and Migration Plan": Metadata below v7 (no LeaderEpoch),
    from every broker, names the leader the same broker's newest Metadata names, without an error."""
    store.save("kip320-old-metadata", {"answers": gapped.metadata})
    assert_old_metadata_works(gapped.metadata)


@pytest.mark.promise("kip320.compat.old-versions-work")
def test_offset_commit_and_fetch_versions_without_an_epoch_keep_working_after_leader_moves(
    gapped: GappedEpochs,
) -> None:
    """KIP-320, "Compatibility, Deprecation, and Migration Plan": OffsetCommit v2-v5 are accepted, and
    every commit reads back with every OffsetFetch version, v1-v4 included, on a partition whose
    leader moved."""
    rounds = gapped.require_commits()
    store.save("kip320-old-commits", {"rounds": rounds, "current_epoch": gapped.list_offsets.current_epoch})
    assert_old_commits_work(rounds, gapped.list_offsets.current_epoch)


@pytest.mark.promise("kip320.offset-commit.no-epoch-reads-back-undefined")
def test_a_commit_without_an_epoch_reads_back_without_the_previous_epoch(gapped: GappedEpochs) -> None:
    """KIP-320, "Protocol Changes / OffsetCommit" and "Compatibility" ("we will use a sentinel value
    (-1) in the APIs that expose it"): after a commit with the leader's epoch, a commit without an epoch
    (OffsetCommit v2-v5, or CommittedLeaderEpoch -1 from v6) reads back from OffsetFetch v5+ with
    CommittedLeaderEpoch -1, not that epoch."""
    rounds = gapped.require_commits()
    store.save("kip320-old-commits", {"rounds": rounds, "current_epoch": gapped.list_offsets.current_epoch})
    assert_commit_without_epoch_reads_back_undefined(rounds)


@pytest.mark.promise("kip320.compat.old-versions-work")
def test_list_offsets_v0_keeps_working_after_leader_moves(gapped: GappedEpochs, cluster: Cluster) -> None:
    """KIP-320, "Compatibility, Deprecation, and Migration Plan": "Older versions of the modified APIs
    will continue to work as expected", down to ListOffsets v0 (MaxNumOffsets, OldStyleOffsets): on the
    partition whose leader moved three times and lost its log's head, v0 answers EARLIEST and LATEST
    (MaxNumOffsets 1) with the log start and end the newest version gives. Apache Kafka 4.0 removed v0
    (KIP-896): a leader that does not advertise it is "not supported by this target"."""
    h = list_offsets_v0(cluster, gapped.topic)
    store.save("kip320-list-offsets-v0", h)
    assert_list_offsets_v0_works(h)
