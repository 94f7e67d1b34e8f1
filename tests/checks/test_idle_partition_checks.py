"""The checks of what holds no record (lookups by time on an empty partition, OffsetsForLeaderEpoch at an
epoch reached without a write) pass the recorded 4.4.0 answers and reject each documented wrong answer
(one field of one version), and a premise that did not hold is no verdict."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import Recording, restamp

from harness.checks.idle_partition import assert_empty_partition_lookups_find_nothing, assert_unwritten_epoch_answered
from harness.errors import NotSupported, TargetRefused
from harness.histories.idle_partition import IdlePartition
from harness.protocol.errors import UNKNOWN_LEADER_EPOCH

IDLE = "kip320-idle-partition"


def _idle(data: dict[str, Any]) -> IdlePartition:
    return typed(IdlePartition, data)


def _lookup(data: dict[str, Any], stage: int, version: int, timestamp: int) -> dict[str, Any]:
    (x,) = [x for x in data["empty"][stage]["answers"] if x["version"] == version and x["timestamp"] == timestamp]
    partition: dict[str, Any] = x["partition"]
    return partition


def test_the_recorded_answers_pass(recording: Recording) -> None:
    idle = _idle(recording(IDLE))
    assert len(idle.empty) == 2 and len(idle.unwritten) == 2, "premise: created and moved; moved twice"
    assert idle.unwritten[0].batches == [] and idle.unwritten[1].batches, "premise: an empty log, then records"
    assert_empty_partition_lookups_find_nothing(idle.empty)
    assert_unwritten_epoch_answered(idle.unwritten)


def test_a_lookup_on_the_empty_partition_answered_with_the_current_epoch_fails(recording: Recording) -> None:
    """Redpanda's empty-partition path of CORE-12505: offset -1 with the current epoch, at v4 only."""
    data = recording(IDLE)
    current = data["empty"][1]["current_epoch"]
    _lookup(data, 1, 4, 0)["LeaderEpoch"] = current
    with pytest.raises(AssertionError, match=rf"v4 timestamp 0: NONE\(0\) offset -1 epoch {current} "):
        assert_empty_partition_lookups_find_nothing(_idle(data).empty)


def test_a_lookup_on_the_empty_partition_answered_with_an_offset_fails(recording: Recording) -> None:
    data = recording(IDLE)
    _lookup(data, 0, 1, 0)["Offset"] = 0
    with pytest.raises(AssertionError, match=r"v1 timestamp 0: NONE\(0\) offset 0 epoch \(none\)"):
        assert_empty_partition_lookups_find_nothing(_idle(data).empty)


def test_a_partition_its_leader_says_is_not_empty_is_no_verdict(recording: Recording) -> None:
    data = recording(IDLE)
    _lookup(data, 0, 7, -1)["Offset"] = 3
    with pytest.raises(TargetRefused, match="the partition must be empty"):
        assert_empty_partition_lookups_find_nothing(_idle(data).empty)


@pytest.mark.parametrize("stage", [0, 1])
def test_the_current_epoch_refused_as_unknown_fails(recording: Recording, stage: int) -> None:
    """AutoMQ's snapshot-read partition (#2911): UNKNOWN_LEADER_EPOCH at the epoch reached without a write."""
    data = recording(IDLE)
    a = data["unwritten"][stage]
    a["answers"]["3"][str(a["current_epoch"])].update(ErrorCode=UNKNOWN_LEADER_EPOCH, LeaderEpoch=-1, EndOffset=-1)
    with pytest.raises(AssertionError, match=rf"v3 LeaderEpoch {a['current_epoch']}: got UNKNOWN_LEADER_EPOCH"):
        assert_unwritten_epoch_answered(_idle(data).unwritten)


def test_the_last_records_epoch_ending_before_the_log_end_fails(recording: Recording) -> None:
    data = recording(IDLE)
    a = data["unwritten"][1]
    last = _idle(data).unwritten[1].batches[-1].partition_leader_epoch
    a["answers"]["4"][str(last)]["EndOffset"] = a["log_end"] - 1
    with pytest.raises(AssertionError, match=rf"v4 LeaderEpoch {last}: got NONE\(0\) \(LeaderEpoch, EndOffset\) "
                                             rf"\({last}, {a['log_end'] - 1}\)"):
        assert_unwritten_epoch_answered(_idle(data).unwritten)


def test_a_record_in_the_current_epoch_is_no_verdict(recording: Recording) -> None:
    """The premise: nothing written since the move; a log whose last batch carries the current epoch is not it."""
    data = recording(IDLE)
    a = data["unwritten"][1]
    a["log"] = restamp(a["log"], 0, a["current_epoch"])
    with pytest.raises(TargetRefused, match="must hold no record"):
        assert_unwritten_epoch_answered(_idle(data).unwritten)


def test_a_target_that_moved_no_leader_is_no_verdict(recording: Recording) -> None:
    data = recording(IDLE)
    refused = _idle({**data, "unwritten": [], "refused": "ElectLeaders not offered"})
    with pytest.raises(TargetRefused, match="ElectLeaders not offered"):
        refused.require_unwritten()
    lacking = _idle({**data, "unwritten": [], "refused": "one log per partition", "lacks_moves": True})
    with pytest.raises(NotSupported, match="one log per partition"):
        lacking.require_unwritten()
