"""The epoch-truth checks (the epoch error before OFFSET_OUT_OF_RANGE; Metadata's epoch against the
epoch the leader appends at) reject answers that break them subtly: one field, one version (recorded
4.4.0 answers, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import Recording, restamp

from harness.checks.epoch_truth import (
    assert_commit_epoch_persisted,
    assert_epoch_error_before_out_of_range,
    assert_metadata_epoch_is_the_appending_leaders,
)
from harness.errors import SceneUnmet, TargetRefused
from harness.histories.epoch_truth import MetadataTruthProbe, OutOfRangeProbe
from harness.histories.persisted_epochs import PersistedEpochs

OUT_OF_RANGE, TRUTH = "kip320-fetch-out-of-range-epochs", "kip320-metadata-epoch-truth"
PERSISTED = "kip320-persisted-commit-epochs"


def _answer(r: dict[str, Any], version: int, requested: int) -> dict[str, Any]:
    (a,) = [a for a in r["answers"] if (a["version"], a["requested_epoch"]) == (version, requested)]
    return a["partition"]


def test_recorded_answers_pass(recording: Recording) -> None:
    r = recording(OUT_OF_RANGE)
    assert r["current_epoch"] >= 1 and r["fetch_offset"] > r["log_end"], "premise of the recording"
    assert_epoch_error_before_out_of_range(typed(OutOfRangeProbe, r))
    assert_metadata_epoch_is_the_appending_leaders(typed(MetadataTruthProbe, recording(TRUTH)))
    assert_commit_epoch_persisted(typed(PersistedEpochs, recording(PERSISTED)))


@pytest.mark.parametrize(("version", "case", "code", "shows"), [
    (12, "older", 1, "got OFFSET_OUT_OF_RANGE with 0 batch.*expected FENCED_LEADER_EPOCH"),
    (9, "newer", 1, "got OFFSET_OUT_OF_RANGE with 0 batch.*expected UNKNOWN_LEADER_EPOCH"),
    (17, "unset", 74, "got FENCED_LEADER_EPOCH with 0 batch.*expected OFFSET_OUT_OF_RANGE"),
    (13, "current", 0, "got NONE with 0 batch.*expected OFFSET_OUT_OF_RANGE"),
])
def test_one_version_answering_the_offset_error_or_the_wrong_epoch_error_fails(
    recording: Recording, version: int, case: str, code: int, shows: str
) -> None:
    """The zombie's answer of the KIP-1094 guide's phase 3 (OFFSET_OUT_OF_RANGE to a stale epoch), at
    one version; or an epoch error where the offset's own error is owed."""
    r = recording(OUT_OF_RANGE)
    current = r["current_epoch"]
    requested = {"older": current - 1, "newer": current + 1, "unset": -1, "current": current}[case]
    _answer(r, version, requested)["ErrorCode"] = code
    with pytest.raises(AssertionError, match=rf"Fetch v{version} offset {r['fetch_offset']} CurrentLeaderEpoch "
                                             rf"{requested}: {shows}"):
        assert_epoch_error_before_out_of_range(typed(OutOfRangeProbe, r))


def test_records_beside_the_epoch_error_fail(recording: Recording) -> None:
    """The right error, with the log's records beside it (as served from 0), at v11 only."""
    r = recording(OUT_OF_RANGE)
    _answer(r, 11, r["current_epoch"] - 1)["Records"] = recording(TRUTH)["fetches"][0]["partition"]["Records"]
    with pytest.raises(AssertionError, match=r"Fetch v11 .*: got FENCED_LEADER_EPOCH with 1 batch"):
        assert_epoch_error_before_out_of_range(typed(OutOfRangeProbe, r))


def test_a_leader_that_serves_nothing_is_a_refused_premise(recording: Recording) -> None:
    r = recording(OUT_OF_RANGE)
    r["served"]["partition"]["ErrorCode"] = 6
    with pytest.raises(TargetRefused, match=r"did not serve a Fetch from offset 0 .*NOT_LEADER_OR_FOLLOWER"):
        assert_epoch_error_before_out_of_range(typed(OutOfRangeProbe, r))


def test_a_probe_inside_the_log_is_an_unmet_scene(recording: Recording) -> None:
    r = recording(OUT_OF_RANGE)
    r["fetch_offset"] = r["log_end"]
    with pytest.raises(SceneUnmet, match="not past the log end"):
        assert_epoch_error_before_out_of_range(typed(OutOfRangeProbe, r))


def test_one_broker_whose_metadata_runs_one_epoch_ahead_after_a_move_fails(recording: Recording) -> None:
    """After the second move, broker 3 alone says epoch 3 where the new leader appends at 2."""
    r = recording(TRUTH)
    r["steps"][2]["epochs"]["3"] = 3
    with pytest.raises(AssertionError, match=r"after 'leader move to 1' Metadata gave epochs \{1: 2, 2: 2, "
                                             r"3: 3\}; the batches appended next \(offsets 10-14\) carry "
                                             r"PartitionLeaderEpoch \[2\]"):
        assert_metadata_epoch_is_the_appending_leaders(typed(MetadataTruthProbe, r))


def test_a_leader_that_stamps_the_epoch_before_its_own_fails(recording: Recording) -> None:
    """Metadata says 2 after the second move; the new leader stamped its first batch 1 (offset 10)."""
    r = recording(TRUTH)
    r["log"] = restamp(r["log"], 10, 1)
    with pytest.raises(AssertionError, match=r"offsets 10-14\) carry PartitionLeaderEpoch \[1\]"):
        assert_metadata_epoch_is_the_appending_leaders(typed(MetadataTruthProbe, r))


def test_one_version_fencing_the_metadata_epoch_fails(recording: Recording) -> None:
    r = recording(TRUTH)
    (f,) = [f for f in r["fetches"] if f["version"] == 13]
    f["partition"]["ErrorCode"] = 74
    f["partition"]["Records"] = None
    with pytest.raises(AssertionError, match=r"Fetch v13 offset 15 CurrentLeaderEpoch 3 \(the leader's Metadata "
                                             r"epoch\): FENCED_LEADER_EPOCH, batches stamped \[\]"):
        assert_metadata_epoch_is_the_appending_leaders(typed(MetadataTruthProbe, r))


@pytest.mark.parametrize(("version", "field", "value", "shows"), [
    (8, "leader_epoch", -1, "offset 308 LeaderEpoch -1"),
    (7, "leader_epoch", 46, "offset 307 LeaderEpoch 46"),
    (10, "offset", 309, "offset 309 LeaderEpoch 50"),
])
def test_one_version_persisting_another_epoch_or_offset_fails(
    recording: Recording, version: int, field: str, value: int, shows: str
) -> None:
    """No epoch (-1), the epoch of the commit before, or the offset before, in one version's record."""
    r = recording(PERSISTED)
    (rnd,) = [x for x in r["rounds"] if x["version"] == version]
    rnd["persisted"]["value"][field] = value
    with pytest.raises(AssertionError, match=rf"OffsetCommit v{version} of offset {300 + version} epoch "
                                             rf"{40 + version}: OffsetCommitValue v4 at __consumer_offsets offset "
                                             rf"\d+ holds {shows}"):
        assert_commit_epoch_persisted(typed(PersistedEpochs, r))


def test_no_record_for_one_version_fails(recording: Recording) -> None:
    r = recording(PERSISTED)
    r["rounds"][-1]["persisted"] = None
    with pytest.raises(AssertionError, match=r"OffsetCommit v10 of offset 310 epoch 50: no OffsetCommit record "
                                             r"holds nothing"):
        assert_commit_epoch_persisted(typed(PersistedEpochs, r))


def test_a_refused_plain_commit_is_a_refused_premise(recording: Recording) -> None:
    r = recording(PERSISTED)
    r["rounds"][1]["code"] = 16
    with pytest.raises(TargetRefused, match=r"v7: NOT_COORDINATOR"):
        assert_commit_epoch_persisted(typed(PersistedEpochs, r))
