"""The committed-offset checks (KIP-320 commits, KIP-1094 next offsets) reject broken answers (recorded, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import Alteration, alteration, altered, typed
from recordings import Recording, batches

from harness.checks.committed_offsets import (
    assert_commit_epochs_follow_consumption,
    assert_commit_past_control_records,
    assert_commit_validates,
    assert_commits_kept,
    assert_metadata_kept,
    assert_poll_hands_no_control_record,
    assert_txn_commit_epochs_follow_consumption,
    committed_data,
)
from harness.checks.epoch_lineage import epoch_of_offset
from harness.histories.kip1094 import CommitAfterRead, CommittedOffset, EpochEnd, MarkerRead
from harness.histories.observations import ObservedExchange
from harness.histories.offset_commits import CommitRoundTrip
from harness.promises import catalogue

CLIENTS = ["librdkafka", "java", "franz-go"]
PAST_MARKERS = ["librdkafka", "java"]  # franz-go commits the offset of the marker: see below


def _commits(r: dict[str, Any]) -> list[CommitAfterRead]:
    """The recorded commits of a last-epoch run, as the histories type them."""
    return [CommitAfterRead(**c) for c in r["commits"]]


def _committed(r: dict[str, Any]) -> CommittedOffset:
    return CommittedOffset(**r["committed"])


def _rounds(rounds: list[dict[str, Any]]) -> list[CommitRoundTrip]:
    return typed(list[CommitRoundTrip], rounds)


def test_recorded_commit_rounds_pass(recording: Recording) -> None:
    assert_commits_kept(_rounds(recording("kip320-committed-epoch")["rounds"]))


@pytest.mark.parametrize("api", ["OffsetCommit", "TxnOffsetCommit"])
def test_a_lost_committed_epoch_fails(recording: Recording, api: str) -> None:
    rounds = recording("kip320-committed-epoch" if api == "OffsetCommit" else "kip320-committed-txn-epoch")["rounds"]
    r = next(r for r in rounds if r["commit"].startswith(api))
    r["got"]["epoch"] = -1
    with pytest.raises(AssertionError, match=rf"{r['commit']} of \(offset \d+, epoch \d+\) read back by "
                                             rf"{r['read']} as NONE\(0\) \(offset \d+, epoch -1\)"):
        assert_commits_kept(_rounds(rounds))


@pytest.mark.parametrize("stack", CLIENTS)
def test_recorded_commits_follow_consumption(recording: Recording, stack: str) -> None:
    r = recording(f"kip1094-last-epoch-{stack}")
    assert_commit_epochs_follow_consumption(_commits(r), batches(r["log"]), stack)


@pytest.mark.parametrize("stack", CLIENTS)
def test_committing_the_leaders_current_epoch_instead_of_the_records_fails(recording: Recording, stack: str) -> None:
    r = recording(f"kip1094-last-epoch-{stack}")
    first, last = r["commits"][0], r["commits"][-1]
    first["epoch"] = last["epoch"]  # what a client reading the epoch off its metadata would commit
    with pytest.raises(AssertionError, match=rf"after offset {first['last_offset']} \(appended in epoch \d+, "
                                             rf"reported as \d+\) committed epoch {last['epoch']}"):
        assert_commit_epochs_follow_consumption(_commits(r), batches(r["log"]), stack)


def test_committing_the_last_records_own_offset_fails(recording: Recording) -> None:
    r = recording("kip1094-last-epoch-java")
    r["commits"][0]["offset"] -= 1
    with pytest.raises(AssertionError, match=r"after offset 19 committed offset 19, not 20"):
        assert_commit_epochs_follow_consumption(_commits(r), batches(r["log"]), "java")


@pytest.mark.parametrize("stack", PAST_MARKERS)
def test_recorded_transaction_reads_pass(recording: Recording, stack: str) -> None:
    r = recording(f"kip1094-markers-{stack}")
    assert_commit_past_control_records(r["position"], _committed(r), batches(r["log"]), r["end"], stack)


def test_franz_gos_recorded_commit_of_the_marker_offset_fails(recording: Recording) -> None:
    """franz-go commits the last record's offset + 1 with that record's epoch (kgo consumer_group.go,
    updateUncommitted): after a transaction that is its COMMIT marker's offset, one short of the end."""
    r = recording("kip1094-markers-franz-go")
    end, last = r["end"], r["end"] - 1
    assert r["committed"]["offset"] == last, f"premise: the recording holds franz-go's commit at {last}: {r}"
    with pytest.raises(AssertionError, match=rf"UncommittedOffsets\(\) is {last}, not the log end {end}; committed "
                                             rf"offset {last} leaves lag 1; committed epoch \d+, the last record"):
        assert_commit_past_control_records(r["position"], _committed(r), batches(r["log"]), end, "franz-go",
                                           "UncommittedOffsets()")


def test_a_position_stuck_before_the_last_marker_fails(recording: Recording) -> None:
    r = recording("kip1094-markers-librdkafka")
    with pytest.raises(AssertionError, match=rf"position\(\) is {r['end'] - 1}, not the log end {r['end']}"):
        assert_commit_past_control_records(r["end"] - 1, _committed(r), batches(r["log"]), r["end"], "librdkafka")


def test_a_commit_that_leaves_lag_fails(recording: Recording) -> None:
    r = recording("kip1094-markers-java")
    r["committed"]["offset"] = r["end"] - 1  # the last data record + 1: the marker's offset
    with pytest.raises(AssertionError, match=r"leaves lag 1"):
        assert_commit_past_control_records(r["position"], _committed(r), batches(r["log"]), r["end"], "java")


def test_committing_the_data_records_epoch_before_a_later_marker_fails(recording: Recording) -> None:
    r = recording("kip1094-markers-java")
    log = batches(r["log"])
    data_epoch = epoch_of_offset(log, r["end"] - 2)
    r["committed"]["epoch"] = data_epoch
    last = r["end"] - 1
    with pytest.raises(AssertionError, match=rf"committed epoch {data_epoch}, the last record \(offset {last}\)"):
        assert_commit_past_control_records(r["position"], _committed(r), log, r["end"], "java")


def test_a_commit_that_would_not_validate_fails() -> None:
    """OffsetsForLeaderEpoch(data epoch) ends at the marker, below the commit: a false truncation."""
    assert_commit_validates(CommittedOffset(33, 2), EpochEnd(0, 2, 33))
    with pytest.raises(AssertionError, match="restart would report a false truncation"):
        assert_commit_validates(CommittedOffset(33, 1), EpochEnd(0, 1, 32))
    with pytest.raises(AssertionError, match="was not asked of OffsetsForLeaderEpoch"):
        assert_commit_validates(CommittedOffset(33, None), None)


@pytest.mark.parametrize("name", ["kip320-committed-epoch", "kip320-committed-txn-epoch"])
def test_recorded_metadata_is_kept(recording: Recording, name: str) -> None:
    rounds = recording(name)["rounds"]
    assert all(r["sent"]["metadata"] for r in rounds), "premise: every round committed a metadata string"
    assert_metadata_kept(_rounds(rounds))


@pytest.mark.parametrize("name", ["kip320-committed-epoch", "kip320-committed-txn-epoch"])
def test_metadata_dropped_by_one_commit_version_fails(recording: Recording, name: str) -> None:
    rounds = recording(name)["rounds"]
    r = rounds[-1]
    r["got"]["metadata"] = None
    with pytest.raises(AssertionError, match=rf"(?s)1 of {len(rounds)} committed metadata .*{r['commit']} of metadata "
                                             rf"'{r['sent']['metadata']}' read back by {r['read']} as None"):
        assert_metadata_kept(_rounds(rounds))


@pytest.mark.parametrize("stack", CLIENTS)
def test_recorded_polls_hand_no_control_record(recording: Recording, stack: str) -> None:
    r = recording(f"kip1094-markers-{stack}")
    assert_poll_hands_no_control_record(r["read"], batches(r["log"]), stack)


@pytest.mark.parametrize("stack", CLIENTS)
def test_a_marker_handed_to_the_application_fails(recording: Recording, stack: str) -> None:
    r = recording(f"kip1094-markers-{stack}")
    log = batches(r["log"])
    marker = next(rec.offset for b in log if b.is_control for rec in b.records)
    with pytest.raises(AssertionError, match=rf"handed the application control records at offsets \[{marker}\]"):
        assert_poll_hands_no_control_record(sorted([*r["read"], marker]), log, stack)


def test_a_data_record_handed_twice_or_skipped_fails(recording: Recording) -> None:
    r = recording("kip1094-markers-java")
    log = batches(r["log"])
    with pytest.raises(AssertionError, match="poll handed offsets"):
        assert_poll_hands_no_control_record([*r["read"], r["read"][0]], log, "java")
    with pytest.raises(AssertionError, match="poll handed offsets"):
        assert_poll_hands_no_control_record(r["read"][1:], log, "java")


def _exchanges(r: dict[str, Any]) -> list[ObservedExchange]:
    """The recorded TxnOffsetCommit exchanges (decoded mappings) as the histories type them."""
    return [ObservedExchange(c["api"], c["version"], c["request"], c.get("response")) for c in r["commits"]]


def test_recorded_transactional_commits_carry_the_consumed_epochs(recording: Recording) -> None:
    r = recording("kip1094-txn-commit-epochs")
    assert_txn_commit_epochs_follow_consumption(_exchanges(r), batches(r["log"]), "java")


def test_a_transactional_commit_with_the_leaders_current_epoch_fails(recording: Recording) -> None:
    """The commit after the older epoch's last record, stamped with the leader's current epoch instead."""
    r = recording("kip1094-txn-commit-epochs")
    log = batches(r["log"])
    current = max(b.partition_leader_epoch for b in log)
    parts = [p for c in r["commits"] for t in c["request"]["Topics"] for p in t["Partitions"]]
    older = next(p for p in parts if p["CommittedLeaderEpoch"] < current)
    older["CommittedLeaderEpoch"] = current
    with pytest.raises(AssertionError, match=rf"committed offset {older['CommittedOffset']} with epoch {current}"):
        assert_txn_commit_epochs_follow_consumption(_exchanges(r), log, "java")


# -- a log that ends in an aborted transaction (its ABORT marker last, in a later epoch than the data) --

ABORTED = ["librdkafka", "java"]  # the stacks of the gate; franz-go commits short of the markers (above)
P = "kip1094."


def _past_the_abort_marker(r: MarkerRead) -> None:
    """The suite's judgement of a read past a trailing ABORT marker, on a recording."""
    c = r.commit
    assert_commit_past_control_records(c.position, c.committed, batches(r.log), r.end, c.client, c.position_of)
    assert_commit_validates(c.committed, c.validation)


def _aborted_log(rec: Any) -> tuple[int, int, int]:
    """(the offset after the last committed record, that record's epoch, the log end) of a recording."""
    data = committed_data(batches(rec["log"]))
    return data[-1].last_offset + 1, data[-1].partition_leader_epoch, rec["end"]


@pytest.mark.parametrize("stack", ABORTED)
def test_recorded_reads_past_a_trailing_abort_marker_pass(stack: str) -> None:
    r = altered(Alteration("as-recorded", P + "next-offset-past-abort-marker", f"kip1094-aborted-markers-{stack}", (),
                           _past_the_abort_marker), MarkerRead)
    log = batches(r.log)
    assert log[-1].control_type() == "ABORT", f"premise: the recording ends in an ABORT marker: {log[-1]}"
    _past_the_abort_marker(r)


ABORT_MARKER_ALTERATIONS: list[Alteration] = [
    *[alteration(f"{stack}-position-stuck-after-the-last-consumed-record", P + "next-offset-past-abort-marker",
                 f"kip1094-aborted-markers-{stack}", "commit.position", lambda _, rec: _aborted_log(rec)[0],
                 _past_the_abort_marker, "position() is ") for stack in ABORTED],
    # franz-go's commit: the last consumed record's offset + 1, short of the aborted records and their marker.
    *[alteration(f"{stack}-commit-after-the-last-consumed-record", P + "next-offset-past-abort-marker",
                 f"kip1094-aborted-markers-{stack}", "commit.committed.offset", lambda _, rec: _aborted_log(rec)[0],
                 _past_the_abort_marker, "leaves lag ") for stack in ABORTED],
    *[alteration(f"{stack}-commit-with-the-consumed-records-epoch", P + "next-offset-past-abort-marker",
                 f"kip1094-aborted-markers-{stack}", "commit.committed.epoch", lambda _, rec: _aborted_log(rec)[1],
                 _past_the_abort_marker, "the last record (offset ") for stack in ABORTED],
    alteration("commit-that-would-not-validate", P + "next-offset-past-abort-marker",
               "kip1094-aborted-markers-java", "commit.validation.end_offset", lambda old, _: old - 1,
               _past_the_abort_marker, "restart would report a false truncation"),
]


@pytest.mark.parametrize("a", ABORT_MARKER_ALTERATIONS, ids=[a.id for a in ABORT_MARKER_ALTERATIONS])
def test_a_read_that_stops_short_of_the_abort_marker_fails(a: Alteration) -> None:
    assert a.promise in catalogue(), f"{a.id} names no promise of harness/promises.toml: {a.promise}"
    with pytest.raises(a.raises) as caught:
        a.check(altered(a, MarkerRead))
    assert a.shows in str(caught.value), f"{a.id}: the failure does not show {a.shows!r}: {caught.value}"


def test_franz_gos_recorded_commit_short_of_the_aborted_transaction_fails() -> None:
    """franz-go v1.22.2 commits the last record it handed over + 1 with that record's epoch (kgo
    consumer_group.go, updateUncommitted skips a fetch of a partition with no records): after a committed
    transaction and an aborted one, that is the COMMIT marker's offset, short of the aborted records
    and their ABORT marker."""
    r = altered(Alteration("as-recorded", P + "next-offset-past-abort-marker", "kip1094-aborted-markers-franz-go", (),
                           _past_the_abort_marker), MarkerRead)
    short = committed_data(batches(r.log))[-1].last_offset + 1
    assert r.commit.committed.offset == short, f"premise: the recording holds franz-go's commit at {short}: {r}"
    with pytest.raises(AssertionError, match=rf"UncommittedOffsets\(\) is {short}, not the log end {r.end}; "
                                             rf"committed offset {short} leaves lag {r.end - short}"):
        _past_the_abort_marker(r)
