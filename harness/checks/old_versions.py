"""KIP-320 "Compatibility, Deprecation, and Migration Plan": "Older versions of the modified APIs will
continue to work as expected", judged on a partition whose leader moved (its epoch is no longer the
first): ListOffsets below v4, Metadata below v7, OffsetCommit below v6 and OffsetFetch below v5; and
a commit without an epoch (OffsetCommit below v6, or -1 from v6) reads back with the sentinel -1
("we will use a sentinel value (-1) in the APIs that expose it"), not with an epoch committed before.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.epoch_lineage import expected_list_offset
from harness.checks.list_offsets_edges import FIRST_WITH_EPOCH
from harness.errors import NotSupported, SetupError, TargetRefused
from harness.histories.leader_answers import ListOffsetsAnswers
from harness.histories.metadata import MetadataAnswer
from harness.histories.offset_commits import CommitRound
from harness.protocol.errors import REPLICA_NOT_AVAILABLE, describe
from harness.protocol.records import describe_log

FIRST_METADATA_WITH_EPOCH = 7
FIRST_COMMIT_WITH_EPOCH = 6
FIRST_FETCH_WITH_EPOCH = 5


def _require_moved(current_epoch: int, what: str) -> None:
    if current_epoch < 1:
        raise TargetRefused(f"{what} needs a partition whose leader moved; its epoch is still {current_epoch}")


def assert_old_list_offsets_work(a: ListOffsetsAnswers) -> None:
    """ListOffsets v1-v3 (no epoch) are answered without an error and with the offset the log owes, for
    EARLIEST, LATEST and each batch's first timestamp."""
    _require_moved(a.current_epoch, "old ListOffsets versions")
    old = [x for x in a.answers if x.version < FIRST_WITH_EPOCH]
    if not old:
        versions = sorted({x.version for x in a.answers})
        raise NotSupported("ListOffsets below v4", f"ListOffsets versions spoken: {versions}")
    batches = a.batches
    newest = max(x.version for x in a.answers)
    wrong = []
    for x in old:
        p = x.partition
        want, _ = expected_list_offset(batches, x.timestamp, a.current_epoch, a.log_end)
        if p["ErrorCode"] != 0 or p["Offset"] != want:
            wrong.append(f"v{x.version} timestamp {x.timestamp}: got {describe(p['ErrorCode'])} offset "
                         f"{p['Offset']}, expected NONE offset {want}")
    assert not wrong, (
        f"ListOffsets versions without an epoch do not keep working on a partition at epoch {a.current_epoch} "
        f"(v{newest} answered it):\n  " + "\n  ".join(wrong) + f"\n  log: {describe_log(batches)}"
    )


def _as_v0_always_did(a: MetadataAnswer, newest: MetadataAnswer) -> bool:
    """Metadata v0 answers a partition with a replica down REPLICA_NOT_AVAILABLE, that replica left out
    (Kafka's Metadata cache filters unavailable endpoints for v0 alone): the old version working "as
    expected", as it did before KIP-320, when the newest answer of the same broker lists more replicas."""
    return (a.version == 0 and a.error == REPLICA_NOT_AVAILABLE and a.leader == newest.leader
            and set(a.replicas) < set(newest.replicas))


def assert_old_metadata_works(answers: Sequence[MetadataAnswer]) -> None:
    """Metadata below v7 (no LeaderEpoch) gives, from every broker and without an error, the leader that
    the same broker's newest Metadata gives (at v0 with a replica down: REPLICA_NOT_AVAILABLE and that
    leader, as v0 always answered)."""
    newest: dict[int, MetadataAnswer] = {}
    for a in answers:
        if a.version >= FIRST_METADATA_WITH_EPOCH and (a.broker not in newest or a.version >= newest[a.broker].version):
            newest[a.broker] = a
    if not newest:
        raise SetupError(f"no Metadata answer at v{FIRST_METADATA_WITH_EPOCH}+ to compare with: {answers}")
    # The newest answer is what the old ones are held to: one without a leader (a broker fenced while it
    # was asked, LEADER_NOT_AVAILABLE at every version) gives nothing to hold them to.
    leaderless = [f"broker {b}: v{n.version} {describe(n.error)} leader {n.leader}" for b, n in sorted(newest.items())
                  if n.leader < 0 or n.error not in (0, REPLICA_NOT_AVAILABLE)]
    if leaderless:
        raise TargetRefused("old Metadata versions are held to the same broker's newest answer, which named no "
                            "leader: " + "; ".join(leaderless))
    _require_moved(min(a.epoch for a in newest.values()), "old Metadata versions")
    old = [a for a in answers if a.version < FIRST_METADATA_WITH_EPOCH]
    if not old:
        raise NotSupported("Metadata below v7", f"versions answered: {sorted({a.version for a in answers})}")
    wrong = [f"broker {a.broker} Metadata v{a.version}: {describe(a.error)} leader {a.leader}"
             for a in old if (a.error != 0 or a.leader != newest[a.broker].leader)
             and not _as_v0_always_did(a, newest[a.broker])]
    assert not wrong, (
        "Metadata versions without an epoch do not keep working on a partition whose leader moved (each "
        "broker's newest: " + ", ".join(f"{b}: v{n.version} leader {n.leader} epoch {n.epoch}"
                                       for b, n in sorted(newest.items())) + "):\n  " + "\n  ".join(wrong)
    )


def assert_old_commits_work(rounds: Sequence[CommitRound], current_epoch: int) -> None:
    """OffsetCommit below v6 is accepted, and every commit reads back (offset, no error) with every
    OffsetFetch version, those below v5 included."""
    _require_moved(current_epoch, "old OffsetCommit and OffsetFetch versions")
    old = [r for r in rounds if r.version < FIRST_COMMIT_WITH_EPOCH]
    reads = {x.version for r in rounds for x in r.reads}
    if not old or not any(v < FIRST_FETCH_WITH_EPOCH for v in reads):
        raise NotSupported("OffsetCommit below v6 and OffsetFetch below v5",
                           f"OffsetCommit rounds {[r.commit for r in rounds]}, OffsetFetch versions {sorted(reads)}")
    wrong = []
    for r in rounds:
        if r.code != 0:
            if r.version < FIRST_COMMIT_WITH_EPOCH:
                wrong.append(f"{r.commit} of offset {r.sent.offset}: {describe(r.code)}")
            continue
        for x in r.reads:
            got = x.got
            if got.error != 0 or got.offset != r.sent.offset:
                if r.version < FIRST_COMMIT_WITH_EPOCH or x.version < FIRST_FETCH_WITH_EPOCH:
                    wrong.append(f"{r.commit} of offset {r.sent.offset}, read by {x.read}: "
                                 f"{describe(got.error)} offset {got.offset}")
    assert not wrong, (
        f"OffsetCommit and OffsetFetch versions without an epoch do not keep working (partition at epoch "
        f"{current_epoch}):\n  " + "\n  ".join(wrong)
    )


def assert_commit_without_epoch_reads_back_undefined(rounds: Sequence[CommitRound]) -> None:
    """After a commit with an epoch, a commit without one (OffsetCommit below v6, or -1 from v6) reads
    back from every OffsetFetch version from v5 with CommittedLeaderEpoch -1, not the earlier epoch."""
    judged = [r for r in rounds if r.code == 0]
    if not judged:
        raise SetupError(f"no commit without an epoch was accepted: {[(r.commit, r.code) for r in rounds]}")
    unkept = [f"{r.commit}: committed {r.before}, read back {r.before_read}" for r in judged
              if r.before_read.epoch != r.before.epoch]
    if unkept:
        raise TargetRefused("a commit without an epoch can only be told from one that kept the previous epoch "
                            "when the previous epoch was stored; it was not: " + "; ".join(unkept))
    wrong = []
    for r in judged:
        for x in r.reads:
            if x.version < FIRST_FETCH_WITH_EPOCH:
                continue
            got = x.got
            if (got.error, got.offset, got.epoch) != (0, r.sent.offset, -1):
                wrong.append(f"{r.commit} (epoch {r.sent.epoch if r.sent.epoch is not None else 'none'})"
                             f" of offset {r.sent.offset} after ({r.before.offset}, epoch "
                             f"{r.before.epoch}), read by {x.read}: {describe(got.error)} offset "
                             f"{got.offset} epoch {got.epoch}")
    if not any(x.version >= FIRST_FETCH_WITH_EPOCH for r in judged for x in r.reads):
        raise NotSupported("OffsetFetch v5+ (CommittedLeaderEpoch)",
                           f"versions read: {sorted({x.version for r in judged for x in r.reads})}")
    assert not wrong, ("a commit without an epoch does not read back with CommittedLeaderEpoch -1:\n  "
                       + "\n  ".join(wrong))
