"""OffsetsForLeaderEpoch for the epochs a leader has no entry of its own for: a gap, the time before
its earliest entry, and no epoch at all (-1).

KIP-101 made OffsetsForLeaderEpoch answer the end offset of the asked epoch; KIP-279 ("Proposed
Changes") added LeaderEpoch to the answer, so that an epoch the leader never had is answered with the
largest epoch it knows below the asked one, ending where the leader's next epoch begins. KIP-320
("Consumer Handling") relies on both for consumers: after repeated unclean elections "we should be
able to get close by finding the starting offset of the next largest epoch that the leader is aware
of", which is also what an epoch older than everything the leader still holds is answered with
(Apache since KAFKA-7415: the asked epoch, ending where the earliest known epoch begins). No epoch
(-1) gets the sentinels (-1, -1): KIP-320 "Compatibility" ("a sentinel value (-1) in the APIs that
expose it") and KIP-101's UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET; Apache answers them before
looking at its epochs (LeaderEpochFileCache.endOffsetFor), not as an epoch older than all. The epochs
the leader knows are read from its log: the PartitionLeaderEpoch of each batch from its log start on,
and its current epoch (`epoch_lineage.known_epochs`).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.epoch_lineage import expected_end_offset, known_epochs
from harness.errors import SetupError, TargetRefused
from harness.histories.leader_answers import EndOffsetAnswers
from harness.protocol.errors import describe
from harness.protocol.records import describe_log
from harness.protocol.sentinels import NO_EPOCH


def known(a: EndOffsetAnswers) -> dict[int, int]:
    """The epochs the leader knows, {epoch: start offset}, as its log shows them."""
    return known_epochs(a.batches, a.current_epoch, a.log_end, a.log_start)


def context(a: EndOffsetAnswers) -> str:
    return (f"leader {a.leader} at epoch {a.current_epoch}, log [{a.log_start}, {a.log_end}) "
            f"({a.stage}), epochs it knows (epoch: start offset) {known(a)}")


def _judge(a: EndOffsetAnswers, epochs: Sequence[int], what: str) -> None:
    if not a.answers:
        raise SetupError(f"no OffsetsForLeaderEpoch answer to judge ({context(a)})")
    wrong = []
    for version, by_epoch in sorted(a.answers.items()):
        for epoch in epochs:
            p = by_epoch.get(epoch)
            if p is None:
                wrong.append(f"v{version}: LeaderEpoch {epoch} was not asked")
                continue
            want = expected_end_offset(a.batches, epoch, a.current_epoch, a.log_end, a.log_start)
            got = (p["LeaderEpoch"], p["EndOffset"])
            if p["ErrorCode"] != 0 or got != want:
                wrong.append(f"v{version} LeaderEpoch {epoch}: got {describe(p['ErrorCode'])} (LeaderEpoch, EndOffset) "
                             f"{got}, expected NONE {want}")
    assert not wrong, (f"OffsetsForLeaderEpoch, {what}, {context(a)}:\n  " + "\n  ".join(wrong)
                       + f"\n  log: {describe_log(a.batches)}")


def gap_epochs(a: EndOffsetAnswers) -> list[int]:
    """Epochs between the earliest the leader knows and its current one that it has no entry for."""
    entries = known(a)
    return [e for e in range(min(entries), a.current_epoch) if e not in entries]


def assert_gap_epoch_answered_with_the_epoch_below(a: EndOffsetAnswers) -> None:
    """An epoch in a gap is answered with the largest known epoch below it and the start offset of
    the next known one, at every version asked."""
    gaps = gap_epochs(a)
    if not gaps:
        raise TargetRefused(f"no epoch gap formed on the leader: {context(a)}; the scene moves the leader twice "
                            "without a write in between")
    asked = [e for e in gaps if e in a.asked()]
    if not asked:
        raise SetupError(f"the probe asked none of the gap epochs {gaps} (asked {a.asked()})")
    _judge(a, asked, f"epochs in a gap {asked} (owed: the largest known epoch below, ending where the next begins)")


def assert_epoch_before_the_earliest_answered_with_its_start(a: EndOffsetAnswers) -> None:
    """An epoch below every one the leader still knows is answered with the asked epoch, ending where
    the earliest known epoch begins, at every version asked."""
    earliest = min(known(a))
    older = [e for e in a.asked() if 0 <= e < earliest]
    if not older:
        raise TargetRefused(f"the leader still knows its first epoch, so no epoch is older than the earliest it "
                            f"knows: {context(a)}; the scene deletes the log's head (DeleteRecords) to drop it")
    _judge(a, older, f"epochs {older} older than the earliest it knows (owed: the asked epoch, ending where "
                     f"epoch {earliest} begins)")


def assert_no_epoch_answered_undefined(a: EndOffsetAnswers) -> None:
    """LeaderEpoch -1 (no epoch) is answered (-1, -1) without an error, at every version asked."""
    if NO_EPOCH not in a.asked():
        raise SetupError(f"the probe did not ask LeaderEpoch -1 (asked {a.asked()})")
    _judge(a, [NO_EPOCH], "LeaderEpoch -1 (owed: UNDEFINED_EPOCH -1, UNDEFINED_EPOCH_OFFSET -1)")
