"""KIP-320 on a partition whose leader moved three times: the leader's epoch judged by what the leader
does (the epoch check before the offset's own error, the epoch it stamps into what it appends), not
by what Metadata says alone. One leader-moves lineage per module (suites/kip320/conftest.py)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames
from harness.checks.epoch_truth import (
    assert_commit_epoch_persisted,
    assert_epoch_error_before_out_of_range,
    assert_metadata_epoch_is_the_appending_leaders,
)
from harness.histories import store
from harness.scenarios.epoch_truth import metadata_truth_probe, out_of_range_probe, require_moves
from harness.scenarios.kip320 import EpochLineage
from harness.scenarios.persisted_epoch import persisted_commit_epochs
from harness.verdicts import not_supported

pytestmark = pytest.mark.kip320

MOVES = 3  # the leader-moves lineage's


@pytest.mark.promise("kip320.fetch.epoch-error-before-out-of-range")
def test_fetch_past_the_log_end_gets_the_epoch_error_before_offset_out_of_range(
    leader_moves: EpochLineage, cluster: Cluster
) -> None:
    """KIP-320, "Leader Fetch Handling": the leader "will compare the requested epoch with its own. The
    fetch will only be permitted if the requested epoch matches the leader's epoch", older is
    FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH; the KIP-1094 guide ("Committing Leader Epoch",
    phase 3) shows the loss when a stale fetch is answered OFFSET_OUT_OF_RANGE instead. On a healthy
    leader, a Fetch from past its log end, at every version from v9, is answered FENCED_LEADER_EPOCH
    for an older CurrentLeaderEpoch and UNKNOWN_LEADER_EPOCH for a newer one, never
    OFFSET_OUT_OF_RANGE; with the current epoch or -1 it is OFFSET_OUT_OF_RANGE."""
    require_moves(leader_moves, MOVES)
    probe = out_of_range_probe(cluster, leader_moves)
    store.save("kip320-fetch-out-of-range-epochs", probe)
    assert_epoch_error_before_out_of_range(probe)


@pytest.mark.promise("kip320.metadata.epoch-is-the-appending-leaders")
def test_metadata_epoch_after_a_move_is_the_epoch_the_new_leader_appends_and_serves_at(
    leader_moves: EpochLineage, cluster: Cluster
) -> None:
    """KIP-320, "Protocol Changes / Metadata" ("The metadata response will be extended to include the
    leader epoch") with "Replica Handling" (the leader stamps its epoch on each batch it appends, as
    KIP-101 defines it): after each of three leader moves, the epoch every broker's Metadata gives
    is the PartitionLeaderEpoch of the batches the new leader appends next, and a Fetch with
    CurrentLeaderEpoch = the leader's Metadata epoch is served (at every version from v9), with
    batches of that epoch; not an epoch Metadata made up."""
    require_moves(leader_moves, MOVES)
    probe = metadata_truth_probe(cluster, leader_moves)
    store.save("kip320-metadata-epoch-truth", probe)
    assert_metadata_epoch_is_the_appending_leaders(probe)


@pytest.mark.promise("kip320.offset-commit.epoch-persisted")
def test_a_plain_commit_persists_its_leader_epoch_in_the_offset_commit_value(
    leader_moves: EpochLineage, cluster: Cluster, run_names: RunNames
) -> None:
    """KIP-320, "Offset Schema Changes": the committed-offset value schema gains LeaderEpoch, and
    "corresponds with the changes to the OffsetCommit APIs". After a plain OffsetCommit (outside any
    transaction) of (offset, epoch), at every version from v6, the group's latest OffsetCommitValue
    record in __consumer_offsets holds that offset and that LeaderEpoch (read from the log, decoded
    with the coordinator's own schema), not -1 and not the epoch of an earlier commit."""
    persisted = persisted_commit_epochs(cluster, leader_moves.topic, run_names.group("kip320-persisted-epoch"))
    store.save("kip320-persisted-commit-epochs", persisted)
    if persisted.unreadable:
        not_supported("reading the committed offsets the group coordinator persisted", persisted.unreadable)
    assert_commit_epoch_persisted(persisted)
