"""The checks of what a consumer hands the application (isolation levels, a group resuming from its
commit) and of an exactly-once copy's output and commit, on histories built here and on the recorded
franz-go copy: what passes, and the failure each client bug of harness/replays.toml leaves."""

from __future__ import annotations

import dataclasses

import pytest
from alterations import raw, typed

from harness.checks.client_reads import (
    assert_read_committed_hands_committed_records_only,
    assert_read_uncommitted_hands_every_record,
    assert_resumes_from_the_committed_offset,
    handed_wrongly,
)
from harness.checks.exactly_once_copy import assert_copied_exactly_once
from harness.histories.client_reads import GroupResume, IsolationRead
from harness.histories.kip1319 import ClientRun
from harness.histories.observations import ClientEvent
from harness.protocol.records import RecordBatch, control_batch, encode_batch, parse_batches

PID = 7


def _log() -> list[RecordBatch]:
    """One producer: committed 0-2 (marker 3), aborted 4-6 (marker 7), committed 8-10 (marker 11),
    aborted 12-14 (marker 15), committed 16-18 (marker 19)."""
    out, offset = [], 0
    for i, marker in enumerate(("COMMIT", "ABORT", "COMMIT", "ABORT", "COMMIT")):
        out.append(encode_batch([b"x"] * 3, base_offset=offset, transactional=True, producer_id=PID, producer_epoch=0,
                                base_sequence=3 * i))
        out.append(control_batch(marker, producer_id=PID, producer_epoch=0, base_offset=offset + 3))
        offset += 4
    return parse_batches(b"".join(out))


EVERY = [0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18]
COMMITTED = [0, 1, 2, 8, 9, 10, 16, 17, 18]


def _read(isolation: str, read: list[int]) -> IsolationRead:
    return IsolationRead("franz-go v1.22.2", isolation, tuple(read), ())


def test_every_record_at_read_uncommitted_and_the_committed_ones_at_read_committed_pass() -> None:
    assert_read_uncommitted_hands_every_record(_read("read_uncommitted", EVERY), _log())
    assert_read_committed_hands_committed_records_only(_read("read_committed", COMMITTED), _log())


def test_read_uncommitted_without_the_aborted_records_fails_naming_them() -> None:
    """franz-go v1.17.0 when read_uncommitted answers list the aborted transactions (Redpanda #18852)."""
    with pytest.raises(AssertionError, match=r"read_uncommitted: it left out 6: \[4, 5, 6, 12, 13, 14\]"):
        assert_read_uncommitted_hands_every_record(_read("read_uncommitted", COMMITTED), _log())


def test_read_committed_handing_an_older_aborted_transaction_fails_naming_it() -> None:
    """franz-go v1.21.3 when the list comes newest first: the older aborted transaction surfaces."""
    with pytest.raises(AssertionError, match=r"it handed 3: \[4, 5, 6\], which read_committed must not"):
        assert_read_committed_hands_committed_records_only(_read("read_committed", sorted([*COMMITTED, 4, 5, 6])),
                                                           _log())


def test_franz_go_before_v1_21_4_leaks_the_older_aborted_transaction_and_drops_the_last_committed_one() -> None:
    """Its live reading of the list newest first (redpanda-aborted-transactions-out-of-order): the
    aborted 4-6 handed, then every batch from the newer one's first offset on taken for aborted, the
    last committed transaction (16-18) with them; it never reads through."""
    stuck = IsolationRead("franz-go v1.21.3", "read_committed", (0, 1, 2, 4, 5, 6, 8, 9, 10), (), False, 60.0)
    assert handed_wrongly(stuck, COMMITTED)
    with pytest.raises(AssertionError, match=r"left out 3: \[16, 17, 18\]; it handed 3: \[4, 5, 6\].*"
                                             r"handed nothing more within 60 s"):
        assert_read_committed_hands_committed_records_only(stuck, _log())


@pytest.mark.parametrize(("read", "wrong"), [
    ([], False), (COMMITTED[:4], False), (COMMITTED, False),  # a prefix: not through yet
    (COMMITTED[:3] + COMMITTED[4:6], True),  # past a record it left out
    ([0, 1, 2, 4], True), ([0, 1, 1], True), ([1, 0], True),
])
def test_a_read_not_through_is_wrong_only_past_a_prefix(read: list[int], wrong: bool) -> None:
    assert handed_wrongly(_read("read_committed", read), COMMITTED) is wrong


@pytest.mark.parametrize(("read", "shows"), [
    (COMMITTED + COMMITTED[-1:], "more than once"),
    (COMMITTED[3:] + COMMITTED[:3], "out of offset order"),
])
def test_a_repeat_or_a_reorder_fails(read: list[int], shows: str) -> None:
    with pytest.raises(AssertionError, match=shows):
        assert_read_committed_hands_committed_records_only(_read("read_committed", read), _log())


def _resume(read: list[int], errors: tuple[ClientEvent, ...] = ()) -> GroupResume:
    return GroupResume("franz-go v1.21.0", 10, 20, tuple(read), errors, 60.0)


def test_a_member_resuming_at_the_commit_passes_and_one_from_the_start_fails() -> None:
    assert_resumes_from_the_committed_offset(_resume(list(range(10, 20))))
    with pytest.raises(AssertionError, match=r"committed at offset 10, by handing 20, 0\.\.19"):
        assert_resumes_from_the_committed_offset(_resume(list(range(20))))


def test_a_member_that_never_starts_fails_with_what_it_reported() -> None:
    """franz-go v1.21.0 against Metadata below v10 (twmb/franz-go#1312)."""
    reported = ClientEvent("error", {"code": "UNKNOWN_TOPIC_OR_PARTITION", "message": "fetch offsets failed"})
    with pytest.raises(AssertionError, match=r"handed the application nothing within 60 s; it reported error .*"
                                             "UNKNOWN_TOPIC_OR_PARTITION"):
        assert_resumes_from_the_committed_offset(_resume([], (reported,)))


# -- an exactly-once copy ------------------------------------------------------------------------
def _copy() -> ClientRun:
    return typed(ClientRun, raw("kip1319-franz-go-v6-copy"))


def test_the_recorded_franz_go_copy_passes() -> None:
    assert_copied_exactly_once(_copy())


def test_a_copy_whose_first_transaction_was_rolled_back_behind_a_reported_commit_fails() -> None:
    """franz-go v1.21.3 after an EndTxn answered UNKNOWN_SERVER_ERROR: the first five copies are not in
    the output, yet the group committed past their input and the copier counted them."""
    run = _copy()
    lost = dataclasses.replace(run, visible=run.visible[5:])
    with pytest.raises(AssertionError, match=r"past 5 input record\(s\) whose copy read_committed does not show"):
        assert_copied_exactly_once(lost)
    with pytest.raises(AssertionError, match=r"it reported 20 record\(s\) copied .* read_committed shows 15"):
        assert_copied_exactly_once(lost)


def test_a_copy_left_unfinished_fails() -> None:
    run = _copy()
    with pytest.raises(AssertionError, match=r"the copy is not whole: 5 input record\(s\) have no copy"):
        assert_copied_exactly_once(dataclasses.replace(run, visible=run.visible[:15], fetched=(), events=()))


def test_a_copy_twice_or_foreign_fails() -> None:
    run = _copy()
    with pytest.raises(AssertionError, match="copied more than once"):
        assert_copied_exactly_once(dataclasses.replace(run, visible=run.visible + run.visible[:1]))
    with pytest.raises(AssertionError, match="no input record"):
        assert_copied_exactly_once(dataclasses.replace(run, visible=(*run.visible, b"stranger")))
