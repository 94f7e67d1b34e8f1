"""The read_committed and aborted-commit checks reject answers that break them subtly: one field, one
version (recorded 4.4.0 answers, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import Recording

from harness.checks.read_committed import (
    assert_aborted_commit_leaves_offsets_unchanged,
    assert_read_committed_hides_aborted_and_open,
)
from harness.errors import TargetRefused
from harness.histories.transactions_on_the_wire import AbortedCommits, ReadCommittedLog

WIRE, ABORTED = "kip1094-read-committed-wire", "kip1094-aborted-commits"


def _answer(r: dict[str, Any], version: int, isolation: int = 1) -> dict[str, Any]:
    (a,) = [a for a in r["answers"] if (a["version"], a["isolation"]) == (version, isolation)]
    return a["partition"]


def test_recorded_answers_pass(recording: Recording) -> None:
    r = recording(WIRE)
    assert r["open"]["first"] < r["log_end"], "premise of the recording: the high watermark is past the open data"
    assert_read_committed_hides_aborted_and_open(typed(ReadCommittedLog, r))
    assert_aborted_commit_leaves_offsets_unchanged(typed(AbortedCommits, recording(ABORTED)))


@pytest.mark.parametrize(("version", "lso"), [(11, 7), (4, 5), (16, 11)])
def test_a_last_stable_offset_off_the_open_transactions_first_offset_at_one_version_fails(
    recording: Recording, version: int, lso: int
) -> None:
    """One past (aborted data visible: redpanda#3036's off-by-one), one before, or the high watermark."""
    r = recording(WIRE)
    _answer(r, version)["LastStableOffset"] = lso
    with pytest.raises(AssertionError, match=rf"Fetch v{version} read_committed from 0: LastStableOffset {lso}, "
                                             rf"HighWatermark 11; expected LastStableOffset 6"):
        assert_read_committed_hides_aborted_and_open(typed(ReadCommittedLog, r))


@pytest.mark.parametrize(("field", "value", "shows"), [
    ("AbortedTransactions", None, r"AbortedTransactions \[\]"),
    ("AbortedTransactions", [{"ProducerId": 0, "FirstOffset": 3}], r"'FirstOffset': 3"),
    ("AbortedTransactions", [{"ProducerId": 0, "FirstOffset": 2}, {"ProducerId": 1000, "FirstOffset": 6}],
     r"'ProducerId': 1000"),
])
def test_a_missing_or_wrong_aborted_transaction_at_one_version_fails(
    recording: Recording, field: str, value: Any, shows: str
) -> None:
    r = recording(WIRE)
    _answer(r, 13)[field] = value
    with pytest.raises(AssertionError, match=rf"Fetch v13 read_committed from 0: .*{shows}"):
        assert_read_committed_hides_aborted_and_open(typed(ReadCommittedLog, r))


def test_the_open_transactions_data_returned_at_one_version_fails(recording: Recording) -> None:
    """read_committed answered with the read_uncommitted records (the open data past the LSO), v9 only."""
    r = recording(WIRE)
    _answer(r, 9)["Records"] = _answer(r, 9, isolation=0)["Records"]
    with pytest.raises(AssertionError, match=r"Fetch v9 read_committed from 0: batches \[\(6, 8\), .*at or past "
                                             r"LastStableOffset 6"):
        assert_read_committed_hides_aborted_and_open(typed(ReadCommittedLog, r))


@pytest.mark.parametrize(("round_version", "read_version", "field", "value"), [
    (3, 8, "offset", 103), (6, 1, "offset", 106), (2, 10, "epoch", 22),
])
def test_an_aborted_commit_read_back_at_one_version_fails(
    recording: Recording, round_version: int, read_version: int, field: str, value: int
) -> None:
    r = recording(ABORTED)
    (rnd,) = [x for x in r["rounds"] if x["version"] == round_version]
    (read,) = [x for x in rnd["reads"] if x["version"] == read_version]
    read["got"][field] = value
    with pytest.raises(AssertionError, match=rf"after TxnOffsetCommit v{round_version} of .* was aborted, "
                                             rf"OffsetFetch v{read_version} read .*{field}={value}"):
        assert_aborted_commit_leaves_offsets_unchanged(typed(AbortedCommits, r))


def test_a_coordinator_that_keeps_no_transactional_commit_is_a_refused_premise(recording: Recording) -> None:
    """librdkafka's mock keeps no TxnOffsetCommit: an aborted one then commits nothing, vacuously."""
    r = recording(ABORTED)
    r["committed"]["reads"][0]["got"]["offset"] = 10
    with pytest.raises(TargetRefused, match=r"in a committed transaction did not commit either"):
        assert_aborted_commit_leaves_offsets_unchanged(typed(AbortedCommits, r))


def test_a_refused_transactional_commit_is_no_pass(recording: Recording) -> None:
    r = recording(ABORTED)
    r["rounds"][0]["code"] = 35
    with pytest.raises(TargetRefused, match=r"TxnOffsetCommit v0: UNSUPPORTED_VERSION"):
        assert_aborted_commit_leaves_offsets_unchanged(typed(AbortedCommits, r))
