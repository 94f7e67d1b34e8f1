"""The ListOffsets edge checks (MAX_TIMESTAMP, a time after the last record), the old-version checks and
the commit-without-epoch check reject answers that break them subtly: one version, one field
(recorded 4.4.0 answers on a partition whose leader moved three times, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import Recording, restamp

from harness.checks.list_offsets_edges import (
    MAX_TIMESTAMP,
    assert_max_timestamp_returns_its_records_epoch,
    assert_time_after_the_last_record_is_undefined,
)
from harness.checks.old_versions import (
    assert_commit_without_epoch_reads_back_undefined,
    assert_old_commits_work,
    assert_old_list_offsets_work,
    assert_old_metadata_works,
)
from harness.errors import TargetRefused
from harness.histories.leader_answers import ListOffsetsAnswers
from harness.histories.metadata import MetadataAnswer
from harness.histories.offset_commits import CommitRound

LIST_OFFSETS, METADATA, COMMITS = "kip320-list-offsets-edges", "kip320-old-metadata", "kip320-old-commits"


def _answer(r: dict[str, Any], version: int, timestamp: int) -> dict[str, Any]:
    return next(a["partition"] for a in r["answers"] if a["version"] == version and a["timestamp"] == timestamp)


def _list_offsets(r: dict[str, Any]) -> ListOffsetsAnswers:
    return typed(ListOffsetsAnswers, r)


def _metadata(answers: list[dict[str, Any]]) -> list[MetadataAnswer]:
    return typed(list[MetadataAnswer], answers)


def _rounds(rounds: list[dict[str, Any]]) -> list[CommitRound]:
    return typed(list[CommitRound], rounds)


def test_recorded_answers_pass(recording: Recording) -> None:
    lo = _list_offsets(recording(LIST_OFFSETS))
    assert_max_timestamp_returns_its_records_epoch(lo)
    assert_time_after_the_last_record_is_undefined(lo)
    assert_old_list_offsets_work(lo)
    assert_old_metadata_works(_metadata(recording(METADATA)["answers"]))
    c = recording(COMMITS)
    assert_old_commits_work(_rounds(c["rounds"]), c["current_epoch"])
    assert_commit_without_epoch_reads_back_undefined(_rounds(c["rounds"]))


@pytest.mark.parametrize(("field", "delta"), [("LeaderEpoch", 2), ("Offset", 1)])
def test_max_timestamp_with_another_epoch_or_offset_at_one_version_fails(
    recording: Recording, field: str, delta: int
) -> None:
    """The current epoch (as Redpanda's ListOffsets once answered), or the batch's last offset (KAFKA-16310)."""
    r = recording(LIST_OFFSETS)
    top = max(a["version"] for a in r["answers"])
    _answer(r, top, MAX_TIMESTAMP)[field] += delta
    with pytest.raises(AssertionError, match=rf"v{top}: got NONE\(0\) offset \d+ epoch \d+"):
        assert_max_timestamp_returns_its_records_epoch(_list_offsets(r))


def test_max_timestamp_record_in_the_current_epoch_is_a_refused_premise(recording: Recording) -> None:
    r = recording(LIST_OFFSETS)
    lo = _list_offsets(r)
    _, offset, _ = lo.max_record()
    r["log"] = restamp(r["log"], offset, lo.current_epoch)
    with pytest.raises(TargetRefused, match="lies in the current epoch"):
        assert_max_timestamp_returns_its_records_epoch(_list_offsets(r))


@pytest.mark.parametrize(("version", "field", "value"), [(9, "LeaderEpoch", 3), (2, "Offset", 15), (5, "Offset", 15)])
def test_a_time_after_the_last_record_answered_with_the_log_end_or_an_epoch_fails(
    recording: Recording, version: int, field: str, value: int
) -> None:
    r = recording(LIST_OFFSETS)
    ts = _list_offsets(r).max_record()[0] + 1
    _answer(r, version, ts)[field] = value
    with pytest.raises(AssertionError, match=rf"v{version} timestamp {ts}: got NONE\(0\) offset"):
        assert_time_after_the_last_record_is_undefined(_list_offsets(r))


@pytest.mark.parametrize(("field", "value"), [("Offset", 10), ("ErrorCode", 74)])
def test_an_old_list_offsets_version_answering_otherwise_fails(recording: Recording, field: str, value: int) -> None:
    """v3 answering LATEST with the current epoch's start, or fencing a request that carries no epoch."""
    r = recording(LIST_OFFSETS)
    _answer(r, 3, -1)[field] = value
    with pytest.raises(AssertionError, match=r"v3 timestamp -1: got .* expected NONE offset 15"):
        assert_old_list_offsets_work(_list_offsets(r))


def test_old_versions_on_a_partition_whose_leader_never_moved_is_a_refused_premise(recording: Recording) -> None:
    r = recording(LIST_OFFSETS)
    r["current_epoch"] = 0
    with pytest.raises(TargetRefused, match="epoch is still 0"):
        assert_old_list_offsets_work(_list_offsets(r))


@pytest.mark.parametrize(("field", "value"), [("leader", 1), ("error", 6)])
def test_an_old_metadata_version_answering_otherwise_fails(recording: Recording, field: str, value: int) -> None:
    answers = recording(METADATA)["answers"]
    a = next(a for a in answers if a["version"] == 6 and a["broker"] == 3)
    a[field] = value
    with pytest.raises(AssertionError, match=r"broker 3 Metadata v6: "):
        assert_old_metadata_works(_metadata(answers))


def test_old_metadata_held_to_a_newest_answer_without_a_leader_is_a_refused_premise(recording: Recording) -> None:
    """A broker fenced while it was asked answers LEADER_NOT_AVAILABLE at every version: nothing to hold
    the old versions to, so no verdict rather than a FAIL of them."""
    answers = recording(METADATA)["answers"]
    for a in answers:
        if a["broker"] == 1:
            a["error"], a["leader"] = 5, -1
    with pytest.raises(TargetRefused, match=r"named no leader: broker 1: v\d+ LEADER_NOT_AVAILABLE\(5\) leader -1"):
        assert_old_metadata_works(_metadata(answers))


def test_an_old_offset_fetch_version_reading_another_offset_fails(recording: Recording) -> None:
    """OffsetFetch v1 reading the commit before the latest one, after OffsetCommit v9."""
    c = recording(COMMITS)
    r = next(r for r in c["rounds"] if r["version"] == 9)
    x = next(x for x in r["reads"] if x["version"] == 1)
    x["got"]["offset"] = r["before"]["offset"]
    with pytest.raises(AssertionError, match=r"OffsetCommit v9 of offset 2009, read by OffsetFetch v1: NONE\(0\) "
                                             r"offset 1009"):
        assert_old_commits_work(_rounds(c["rounds"]), c["current_epoch"])


def test_an_old_offset_commit_version_refused_fails(recording: Recording) -> None:
    c = recording(COMMITS)
    r = next(r for r in c["rounds"] if r["version"] == 2)
    r["code"], r["reads"] = 35, []  # UNSUPPORTED_VERSION
    with pytest.raises(AssertionError, match=r"OffsetCommit v2 of offset 2002: UNSUPPORTED_VERSION"):
        assert_old_commits_work(_rounds(c["rounds"]), c["current_epoch"])


@pytest.mark.parametrize(("commit", "read"), [(4, 5), (7, 10)])
def test_a_commit_without_an_epoch_reading_back_the_previous_epoch_fails(
    recording: Recording, commit: int, read: int
) -> None:
    """The previous commit's epoch (7) kept, at one OffsetFetch version, after OffsetCommit v4 (no
    epoch field) or v7 (epoch -1)."""
    c = recording(COMMITS)
    r = next(r for r in c["rounds"] if r["version"] == commit)
    next(x for x in r["reads"] if x["version"] == read)["got"]["epoch"] = 7
    with pytest.raises(AssertionError, match=rf"OffsetCommit v{commit} .* read by OffsetFetch v{read}: NONE\(0\) "
                                             rf"offset {2000 + commit} epoch 7"):
        assert_commit_without_epoch_reads_back_undefined(_rounds(c["rounds"]))


def test_a_previous_epoch_that_was_never_stored_is_a_refused_premise(recording: Recording) -> None:
    """A target that stores no epoch at all would pass vacuously; it gets no verdict instead."""
    c = recording(COMMITS)
    for r in c["rounds"]:
        r["before_read"]["epoch"] = -1
    with pytest.raises(TargetRefused, match=r"the previous epoch was stored; it was not: OffsetCommit v2"):
        assert_commit_without_epoch_reads_back_undefined(_rounds(c["rounds"]))


def _v0_with_a_replica_down(answers: list[dict[str, Any]], version: int = 0) -> list[dict[str, Any]]:
    """Every broker's newest answer lists replicas 1-3; its answer at `version` leaves 3 out with
    REPLICA_NOT_AVAILABLE, as Kafka answers v0 while broker 3 is down."""
    for a in answers:
        a["replicas"] = [1, 2, 3]
        if a["version"] == version:
            a["error"], a["replicas"] = 9, [1, 2]
    return answers


def test_metadata_v0_with_a_replica_down_answers_replica_not_available_as_it_always_did(
    recording: Recording,
) -> None:
    answers = recording(METADATA)["answers"]
    if not any(a["version"] == 0 for a in answers):
        pytest.skip("the recording has no Metadata v0 answer")
    assert_old_metadata_works(_metadata(_v0_with_a_replica_down(answers)))


def test_replica_not_available_with_every_replica_listed_fails(recording: Recording) -> None:
    answers = _v0_with_a_replica_down(recording(METADATA)["answers"])
    for a in answers:
        a["replicas"] = [1, 2, 3]
    with pytest.raises(AssertionError, match=r"Metadata v0: REPLICA_NOT_AVAILABLE"):
        assert_old_metadata_works(_metadata(answers))


def test_replica_not_available_above_v0_fails(recording: Recording) -> None:
    answers = _v0_with_a_replica_down(recording(METADATA)["answers"], version=6)
    with pytest.raises(AssertionError, match=r"Metadata v6: REPLICA_NOT_AVAILABLE"):
        assert_old_metadata_works(_metadata(answers))
