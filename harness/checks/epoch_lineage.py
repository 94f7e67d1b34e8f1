"""KIP-320 answers that depend on a partition's epoch lineage: end offsets, offset epochs, batch stamps.

The lineage is read from the log itself: every record batch carries the PartitionLeaderEpoch its
leader stamped at append, so the start offset of each epoch is the first offset of its first
batch. A broker answers OffsetsForLeaderEpoch from its leader-epoch cache (LeaderEpochFileCache):
for a past epoch E, the end offset is the start offset of the first later epoch; for the current
epoch, the log end offset; for an epoch above every known one, the sentinel (-1, -1).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from harness.errors import require_scene
from harness.histories.epochs import Step
from harness.histories.leader_answers import ListOffsetsAtTime
from harness.histories.metadata import MetadataAnswer
from harness.histories.observations import Body
from harness.histories.version_needs import FETCH_FROM_FOLLOWER, Offered, require_offered
from harness.protocol.errors import describe
from harness.protocol.records import RecordBatch, describe_log
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, NO_EPOCH

UNDEFINED = (-1, -1)  # OffsetsForLeaderEpoch's answer for an epoch no replica knows


def epoch_starts(batches: Sequence[RecordBatch]) -> dict[int, int]:
    """First offset of each epoch in the log, from the batches' PartitionLeaderEpoch."""
    starts: dict[int, int] = {}
    for b in sorted(batches, key=lambda b: b.base_offset):
        starts.setdefault(b.partition_leader_epoch, b.base_offset)
    return starts


def epoch_of_offset(batches: Sequence[RecordBatch], offset: int) -> int | None:
    for b in batches:
        if b.base_offset <= offset <= b.last_offset:
            return b.partition_leader_epoch
    return None


def assert_epochs_never_decrease(batches: Sequence[RecordBatch]) -> None:
    ordered = sorted(batches, key=lambda b: b.base_offset)
    drops = [
        f"offset {b.base_offset} has epoch {b.partition_leader_epoch} after epoch {a.partition_leader_epoch}"
        for a, b in itertools.pairwise(ordered)
        if b.partition_leader_epoch < a.partition_leader_epoch
    ]
    assert not drops, f"batch epochs go down along the log: {drops[:5]}; log {describe_log(batches)}"


def known_epochs(
    batches: Sequence[RecordBatch], current_epoch: int, log_end: int, log_start: int = 0
) -> dict[int, int]:
    """The leader's epoch entries as its log shows them: {epoch: start offset}.

    An epoch is known when a batch of it lies at or past the log start; the first entry starts at
    the log start at the earliest (a leader moves its first entry there when the log start advances,
    LeaderEpochFileCache.truncateFromStart); the current epoch is known even before its first batch,
    from the log end (a leader records its epoch when it takes the lead, KAFKA-7415).
    """
    live = [b for b in batches if b.last_offset >= log_start]
    known = {e: max(start, log_start) for e, start in epoch_starts(live).items()}
    known.setdefault(current_epoch, log_end)
    return known


def expected_end_offset(
    batches: Sequence[RecordBatch], epoch: int, current_epoch: int, log_end: int, log_start: int = 0
) -> tuple[int, int]:
    """(LeaderEpoch, EndOffset) owed for the asked `epoch`, as KIP-101/KIP-279 and KIP-320 "Consumer
    Handling" define it (Apache's LeaderEpochFileCache.endOffsetFor):

    - -1 (no epoch) and an epoch above the current one: (-1, -1);
    - the current epoch: (current, log end);
    - an epoch the leader knows: (that epoch, the start offset of the next epoch it knows);
    - an epoch it has no entry for, in a gap between two it knows: the LARGEST known epoch BELOW the
      asked one, and the start offset of the next epoch it knows;
    - an epoch below every one it knows: (the asked epoch, the start offset of the earliest it knows),
      "the starting offset of the next largest epoch that the leader is aware of".
    """
    if epoch == NO_EPOCH or epoch > current_epoch:
        return UNDEFINED
    if epoch == current_epoch:
        return epoch, log_end
    known = known_epochs(batches, current_epoch, log_end, log_start)
    after = known[min(e for e in known if e > epoch)]
    below = max((e for e in known if e <= epoch), default=None)
    return (epoch if below is None else below), after


def assert_end_offsets(
    batches: Sequence[RecordBatch], current_epoch: int, log_end: int, answers: Mapping[int, Body],
    log_start: int = 0,
) -> None:
    """OffsetsForLeaderEpoch answers, keyed by the LeaderEpoch asked, match the log's epoch lineage.

    Every epoch present in the log and the current epoch get (epoch, start of the next epoch or
    the log end); an epoch above the current one gets (-1, -1); any other epoch what
    `expected_end_offset` owes. Epochs asked are what the caller
    chose; at least one past epoch and one unknown epoch must be among them.
    """
    asked = sorted(answers)
    past = [e for e in asked if e < current_epoch]
    assert past and any(e > current_epoch for e in asked), (
        f"the probe must ask a past and an unknown epoch; asked {asked}, current {current_epoch}"
    )
    wrong = []
    for epoch in asked:
        p = answers[epoch]
        want = expected_end_offset(batches, epoch, current_epoch, log_end, log_start)
        got = (p["LeaderEpoch"], p["EndOffset"])
        if p["ErrorCode"] != 0 or got != want:
            wrong.append(f"epoch {epoch}: got {describe(p['ErrorCode'])} {got}, expected NONE {want}")
    assert not wrong, (
        f"OffsetsForLeaderEpoch disagrees with the log's epoch lineage (current epoch {current_epoch}, "
        f"log [{log_start}, {log_end}), epochs the leader knows (epoch: start) "
        f"{known_epochs(batches, current_epoch, log_end, log_start)}):\n  " + "\n  ".join(wrong)
        + f"\n  log: {describe_log(batches)}"
    )


def assert_batches_carry_append_epochs(
    batches: Sequence[RecordBatch], appends: Sequence[Mapping[str, int]], replica: str = "the leader"
) -> None:
    """Each acknowledged write ({first, last, epoch}) sits in batches stamped with its append epoch."""
    assert appends, "no acknowledged writes to compare the batches with"
    assert_epochs_never_decrease(batches)
    wrong = []
    for w in appends:
        for offset in (w["first"], w["last"]):
            got = epoch_of_offset(batches, offset)
            if got is None:
                wrong.append(f"offset {offset} written in epoch {w['epoch']} is missing")
            elif got != w["epoch"]:
                wrong.append(f"offset {offset} written in epoch {w['epoch']} is in a batch stamped {got}")
    assert not wrong, (
        f"record batches fetched from {replica} do not carry the epoch of their append: {wrong[:6]}; "
        f"log {describe_log(batches)}"
    )


def require_every_follower_read(followers_offered: Sequence[Offered]) -> None:
    """KIP-392 (fetch from follower): a follower serves a consumer's Fetch from v11 on and answers
    NOT_LEADER_OR_FOLLOWER below, so a follower that advertises no v11 (`followers_offered`: each
    in-sync follower's Fetch range) cannot be read as a consumer reads it: "not supported by this
    target", the ranges the evidence. Called once the logs that were read are judged, so a wrong stamp
    on the leader still FAILs."""
    if followers_offered:
        require_offered(FETCH_FROM_FOLLOWER, followers_offered)


def expected_list_offset(
    batches: Sequence[RecordBatch], timestamp: int, current_epoch: int, log_end: int
) -> tuple[int, int]:
    """(Offset, LeaderEpoch) owed by ListOffsets for a timestamp, from the log.

    EARLIEST: the first offset and the epoch of its batch; LATEST: the log end and the current
    epoch (the log end belongs to no batch yet); a time: the first record with a timestamp at or
    after it, and its batch's epoch.
    """
    ordered = sorted(batches, key=lambda b: b.base_offset)
    data = [b for b in ordered if not b.is_control]
    if timestamp == LATEST_TIMESTAMP:
        return log_end, current_epoch
    if timestamp == EARLIEST_TIMESTAMP:
        first = ordered[0]
        return first.base_offset, first.partition_leader_epoch
    for b in data:
        for r in b.records:
            if r.timestamp is not None and r.timestamp >= timestamp:
                assert r.offset is not None
                return r.offset, b.partition_leader_epoch
    return -1, -1


def assert_list_offsets_epochs(
    batches: Sequence[RecordBatch], current_epoch: int, log_end: int, answers: Sequence[ListOffsetsAtTime]
) -> None:
    """ListOffsets answers return the offset owed and the epoch of that offset."""
    assert answers, "no ListOffsets answers to judge"
    wrong = []
    for a in answers:
        p = a.partition
        want = expected_list_offset(batches, a.timestamp, current_epoch, log_end)
        got = (p["Offset"], p["LeaderEpoch"])
        if p["ErrorCode"] != 0 or got != want:
            wrong.append(f"timestamp {a.timestamp}: got {describe(p['ErrorCode'])} (offset, epoch) {got}, "
                         f"expected {want}")
    assert not wrong, (
        f"ListOffsets does not return the epoch of the offset it returns (current epoch {current_epoch}, "
        f"log end {log_end}):\n  " + "\n  ".join(wrong) + f"\n  log: {describe_log(batches)}"
    )


def assert_epochs_rise(steps: Sequence[Step]) -> None:
    """Metadata after each election step: every broker agrees, and the epoch rises strictly from step to step."""
    assert len(steps) >= 2, f"need an epoch before and after at least one election: {steps}"
    wrong = []
    previous: tuple[str, int] | None = None
    for s in steps:
        seen = set(s.epochs.values())
        if len(seen) != 1:
            wrong.append(f"after {s.step} brokers disagree on the epoch: {s.epochs}")
            continue
        (epoch,) = seen
        if previous is not None and epoch <= previous[1]:
            wrong.append(f"{s.step} (leader {s.leader}) left the epoch at {epoch}, after {previous[0]} at "
                         f"{previous[1]}")
        previous = (s.step, epoch)
    trail = " -> ".join(f"{s.step}:{sorted(set(s.epochs.values()))}" for s in steps)
    problems = "; ".join(wrong)
    assert not wrong, f"the Metadata leader epoch does not rise with every election: {problems}\n  {trail}"


def assert_metadata_versions_agree(answers: Sequence[MetadataAnswer], min_epoch: int) -> None:
    """KIP-320 "Protocol Changes / Metadata": every Metadata version with LeaderEpoch (v7+), from every
    broker, gives the same leader at the same epoch, without an error; the epoch is at least
    `min_epoch` (the partition's after the moves that made it)."""
    require_scene(answers, "the harness asked no broker for Metadata (v7 and later)")
    top = max(answers, key=lambda a: (a.broker == a.leader, a.version))
    leader, epoch = top.leader, top.epoch
    wrong = [f"broker {a.broker} Metadata v{a.version}: leader {a.leader} epoch {a.epoch} "
             f"error {a.error}" for a in answers if (a.leader, a.epoch, a.error) != (leader, epoch, 0)]
    versions = sorted({a.version for a in answers})
    assert not wrong, (f"{len(wrong)} of {len(answers)} Metadata answers (v{versions[0]}-v{versions[-1]}) differ from "
                       f"the leader's own at v{top.version} (leader {leader} at epoch {epoch}):\n  "
                       + "\n  ".join(wrong[:10]))
    assert epoch is not None and epoch >= min_epoch, (
        f"Metadata gives epoch {epoch}, below {min_epoch}, which the partition reached before")
