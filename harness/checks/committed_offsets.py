"""Committed offsets and their leader epoch: kept by the coordinator, and the right epoch to commit.

KIP-320 ("Protocol Changes", OffsetCommit and OffsetFetch) adds the leader epoch to commits, "the
epoch of the previously fetched record", so that a group restarted from it can check for
truncation. KIP-1094 ("How to Know Which Offset to Commit") makes the next offset and that epoch
available after poll, including when control records (transaction markers) follow the last data
record.

The record before a committed offset decides its epoch, control records included: after a
transaction whose COMMIT marker was written in a later epoch than its data, the marker's epoch is
the one that validates. A consumer checks a committed (offset, epoch) by asking
OffsetsForLeaderEpoch(epoch) and calls it truncated when the end offset is below the committed
offset; the data record's older epoch would end at the marker, below the commit, and the next
restart would report a truncation that never happened.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.epoch_lineage import epoch_of_offset
from harness.errors import require_scene
from harness.histories.kip1094 import CommitAfterRead, CommittedOffset, EpochEnd
from harness.histories.observations import ObservedExchange
from harness.histories.offset_commits import CommitRoundTrip
from harness.protocol.errors import describe
from harness.protocol.records import RecordBatch, describe_log

# The data a read_committed consumer is handed, for the suites' premises (suites import checks, not protocol).
from harness.protocol.records import committed_data as committed_data


def assert_commits_kept(rounds: Sequence[CommitRoundTrip]) -> None:
    """Each round reads back, with the API and version named in `read`, the offset and leader epoch
    committed with `commit`."""
    assert rounds, "nothing was committed"
    wrong = []
    for r in rounds:
        sent, got = r.sent, r.got
        if got.error != 0 or (got.offset, got.epoch) != (sent.offset, sent.epoch):
            wrong.append(
                f"{r.commit} of (offset {sent.offset}, epoch {sent.epoch}) read back by {r.read} as "
                f"{describe(got.error)} (offset {got.offset}, epoch {got.epoch})"
            )
    listing = "\n  ".join(wrong[:12])
    assert not wrong, f"{len(wrong)} of {len(rounds)} committed leader epochs are not kept:\n  {listing}"


def assert_metadata_kept(rounds: Sequence[CommitRoundTrip]) -> None:
    """Each round's CommittedMetadata (`sent.metadata`) is what OffsetFetch returns with the offset."""
    assert rounds, "nothing was committed"
    wrong = [f"{r.commit} of metadata {r.sent.metadata!r} read back by {r.read} as "
             f"{r.got.metadata!r} ({describe(r.got.error)})"
             for r in rounds if r.got.error != 0 or r.got.metadata != r.sent.metadata]
    listing = "\n  ".join(wrong[:12])
    assert not wrong, f"{len(wrong)} of {len(rounds)} committed metadata strings are not kept:\n  {listing}"


def assert_commit_epochs_follow_consumption(
    commits: Sequence[CommitAfterRead], batches: Sequence[RecordBatch], client: str
) -> None:
    """Each commit made right after consuming the record at `last_offset` (whose epoch the client
    reported as `last_epoch`) names the next offset and the epoch that record was appended in."""
    assert commits, f"{client} made no commit"
    wrong = []
    for c in commits:
        appended = epoch_of_offset(batches, c.last_offset)
        if c.offset != c.last_offset + 1:
            wrong.append(f"after offset {c.last_offset} committed offset {c.offset}, not {c.last_offset + 1}")
        if not c.epoch == c.last_epoch == appended:
            wrong.append(
                f"after offset {c.last_offset} (appended in epoch {appended}, reported as {c.last_epoch}) "
                f"committed epoch {c.epoch}"
            )
    assert not wrong, (
        f"{client}: the committed leader epoch is not the epoch of the last consumed record: {wrong[:6]}; "
        f"log {describe_log(batches)}"
    )


def assert_commit_past_control_records(
    position: int, committed: CommittedOffset, batches: Sequence[RecordBatch], end: int, client: str,
    position_of: str = "position()", with_epoch: bool = True,
) -> None:
    """After reading every transaction: the position (`position_of`: what the client reports it
    from) and the committed offset are the log end (lag 0), and the committed epoch is the epoch of
    the last record before it, the COMMIT marker included (unless `with_epoch` is false: a client
    that commits no epoch is judged on the offsets alone)."""
    last = epoch_of_offset(batches, end - 1)
    trouble = []
    if position != end:
        trouble.append(f"{position_of} is {position}, not the log end {end}")
    if committed.offset != end:
        trouble.append(f"committed offset {committed.offset} leaves lag {end - committed.offset}")
    if with_epoch and committed.epoch != last:
        trouble.append(f"committed epoch {committed.epoch}, the last record (offset {end - 1}) is in epoch {last}")
    assert not trouble, f"{client}: " + "; ".join(trouble) + f"; log {describe_log(batches)}"


def assert_commit_validates(committed: CommittedOffset, answer: EpochEnd | None) -> None:
    """OffsetsForLeaderEpoch(committed epoch) ends at or after the committed offset: a consumer
    restarting from this commit finds no truncation, as none happened."""
    assert answer is not None, (
        f"committed (offset {committed.offset}, epoch {committed.epoch}) was not asked of OffsetsForLeaderEpoch: "
        "a commit without an epoch has nothing to validate")
    ok = answer.error == 0 and answer.leader_epoch == committed.epoch and answer.end_offset >= committed.offset
    assert ok, (
        f"committed (offset {committed.offset}, epoch {committed.epoch}) does not validate: "
        f"OffsetsForLeaderEpoch({committed.epoch}) answers {describe(answer.error)} epoch "
        f"{answer.leader_epoch} end offset {answer.end_offset}, so a restart would report a false truncation"
    )


def assert_poll_hands_no_control_record(read: Sequence[int], batches: Sequence[RecordBatch], client: str) -> None:
    """KIP-1094 guide, "Control Records vs Data Records": poll returns data records only. Every offset
    the client handed the application is a data record's, each data record is handed once, and no
    transaction marker is among them."""
    markers = {r.offset for b in batches if b.is_control for r in b.records}
    data = [r.offset for b in batches if not b.is_control for r in b.records]
    handed = [o for o in read if o in markers]
    assert not handed, f"{client}'s poll handed the application control records at offsets {handed[:5]}"
    assert sorted(read) == data, (
        f"{client}'s poll handed offsets {_span(read)}; the log's data records are {_span(data)}"
    )


def _span(offsets: Sequence[int]) -> str:
    return f"{len(offsets)} from {min(offsets)} to {max(offsets)}" if offsets else "none"


def assert_txn_commit_epochs_follow_consumption(
    commits: Sequence[ObservedExchange], batches: Sequence[RecordBatch], client: str
) -> None:
    """KIP-1094 guide, "Committing Specific Offsets" (sendOffsetsToTransaction, "ideally combined with
    the leader epoch"), and KIP-320's TxnOffsetCommit LeaderEpoch: each offset a client's transaction
    commits carries the epoch of the record before it, the last one it consumed, not the leader's
    current epoch."""
    sent = [(c.version, p["CommittedOffset"], p["CommittedLeaderEpoch"])
            for c in commits for t in (c.request or {}).get("Topics", []) for p in t["Partitions"]]
    require_scene(sent, f"the harness's {client} copier sent no TxnOffsetCommit with offsets through the proxy: "
                        f"{len(commits)} recorded")
    wrong = [f"v{v} committed offset {o} with epoch {e}; the record at {o - 1} was appended in epoch "
             f"{epoch_of_offset(batches, o - 1)}" for v, o, e in sent if e != epoch_of_offset(batches, o - 1)]
    assert not wrong, f"{len(wrong)} of {len(sent)} of {client}'s transactional commits carry the wrong epoch:\n  " + \
        "\n  ".join(wrong[:8])


def assert_epoch_ends_before_the_next(
    asked: int, answer: EpochEnd, log_end: int, batches: Sequence[RecordBatch]
) -> None:
    """KIP-320 "Replica Handling" (OffsetsForLeaderEpoch, after KIP-101): an epoch ends where the next
    one begins; asked for the epoch of the data before a later epoch's marker, the leader answers an
    end offset before the log's end."""
    assert answer.error == 0 and answer.end_offset < log_end, (
        f"KIP-320 \"Replica Handling\" (OffsetsForLeaderEpoch, after KIP-101): an epoch ends where the next one "
        f"begins; OffsetsForLeaderEpoch({asked}) answered {describe(answer.error)} end offset {answer.end_offset}, "
        f"not before the marker's epoch, which ends the log at {log_end}: {describe_log(batches)}")
