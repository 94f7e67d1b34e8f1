"""The OffsetsForLeaderEpoch edge checks (a gap, before the earliest, -1) reject answers that break
them subtly: one version, one field (recorded 4.4.0 answers, altered)."""

from __future__ import annotations

import pytest
from alterations import typed
from recordings import Recording, restamp

from harness.checks.epoch_end_offsets import (
    assert_epoch_before_the_earliest_answered_with_its_start,
    assert_gap_epoch_answered_with_the_epoch_below,
    assert_no_epoch_answered_undefined,
    context,
    gap_epochs,
    known,
)
from harness.checks.epoch_lineage import assert_end_offsets
from harness.errors import TargetRefused
from harness.histories.leader_answers import EndOffsetAnswers

GAP, HEAD_DELETED = "kip320-ofle-gap", "kip320-ofle-head-deleted"


def _answers(recording: Recording, name: str) -> EndOffsetAnswers:
    return typed(EndOffsetAnswers, recording(name))


@pytest.mark.parametrize("name", [GAP, HEAD_DELETED])
def test_recorded_answers_pass_every_check(recording: Recording, name: str) -> None:
    a = _answers(recording, name)
    assert gap_epochs(a), f"premise of the recording: {context(a)}"
    assert_gap_epoch_answered_with_the_epoch_below(a)
    assert_no_epoch_answered_undefined(a)
    for answers in a.answers.values():
        assert_end_offsets(a.batches, a.current_epoch, a.log_end, answers, a.log_start)
    if name == HEAD_DELETED:
        assert_epoch_before_the_earliest_answered_with_its_start(a)


def test_a_gap_epoch_answered_with_itself_at_one_version_fails(recording: Recording) -> None:
    """The old check's expectation (the asked epoch back), at v3 only."""
    a = _answers(recording, GAP)
    (gap,) = gap_epochs(a)
    a.answers[3][gap]["LeaderEpoch"] = gap
    with pytest.raises(AssertionError, match=rf"v3 LeaderEpoch {gap}: got NONE\(0\) \(LeaderEpoch, EndOffset\) "
                                             rf"\({gap}, \d+\), expected NONE \({gap - 1}, \d+\)"):
        assert_gap_epoch_answered_with_the_epoch_below(a)
    with pytest.raises(AssertionError, match=rf"epoch {gap}: got"):
        assert_end_offsets(a.batches, a.current_epoch, a.log_end, a.answers[3], a.log_start)


def test_a_gap_epoch_ending_at_its_own_start_fails(recording: Recording) -> None:
    """The right epoch below, but the end offset of that epoch's own start rather than the next's."""
    a = _answers(recording, HEAD_DELETED)
    (gap,) = gap_epochs(a)
    a.answers[4][gap]["EndOffset"] = known(a)[gap - 1]
    with pytest.raises(AssertionError, match=rf"v4 LeaderEpoch {gap}: got NONE\(0\) \(LeaderEpoch, EndOffset\) "
                                             rf"\({gap - 1}, {known(a)[gap - 1]}\)"):
        assert_gap_epoch_answered_with_the_epoch_below(a)


@pytest.mark.parametrize(("field", "value"), [("LeaderEpoch", -1), ("EndOffset", 5), ("EndOffset", -1)])
def test_an_epoch_before_the_earliest_answered_otherwise_fails(recording: Recording, field: str, value: int) -> None:
    """Undefined (-1), or the deleted first epoch's own end (5, below the log start 7), at v2 only."""
    a = _answers(recording, HEAD_DELETED)
    a.answers[2][0][field] = value
    with pytest.raises(AssertionError, match=r"v2 LeaderEpoch 0: got NONE\(0\) .* expected NONE \(0, 7\)"):
        assert_epoch_before_the_earliest_answered_with_its_start(a)


@pytest.mark.parametrize(("field", "value"), [("LeaderEpoch", 3), ("EndOffset", 15), ("ErrorCode", 74)])
def test_no_epoch_answered_otherwise_fails(recording: Recording, field: str, value: int) -> None:
    a = _answers(recording, GAP)
    a.answers[4][-1][field] = value
    with pytest.raises(AssertionError, match=r"v4 LeaderEpoch -1: got .* expected NONE \(-1, -1\)"):
        assert_no_epoch_answered_undefined(a)


def test_no_gap_is_a_refused_premise_not_a_pass(recording: Recording) -> None:
    """Had the target written in the skipped epoch (here: the batch at 10 restamped 2), no gap formed."""
    r = recording(GAP)
    r["log"] = restamp(r["log"], 10, 2)
    with pytest.raises(TargetRefused, match=r"no epoch gap formed on the leader.*\{0: 0, 1: 5, 2: 10, 3: 15\}"):
        assert_gap_epoch_answered_with_the_epoch_below(typed(EndOffsetAnswers, r))


def test_a_leader_that_knows_its_first_epoch_is_a_refused_premise_not_a_pass(recording: Recording) -> None:
    with pytest.raises(TargetRefused, match=r"still knows its first epoch.*log \[0, 15\)"):
        assert_epoch_before_the_earliest_answered_with_its_start(_answers(recording, GAP))
