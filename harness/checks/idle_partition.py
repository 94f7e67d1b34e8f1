"""KIP-320 answers about what holds no record: a lookup by time on an empty partition, and an epoch a
leader move reached with no write since.

ListOffsets by time returns the first offset whose timestamp is at or after the one asked, and "if no
such message is found, returns -1" (KIP-79); KIP-320 "Compatibility" gives the epoch of no offset its
sentinel, -1. An empty partition has no such message for any time.

A leader records its epoch when it takes the lead (KAFKA-7415), so an epoch reached with no write since
is known to it, starting at the log end: OffsetsForLeaderEpoch validates a CurrentLeaderEpoch equal to
it and answers it (KIP-320 "Protocol Changes / OffsetsForLeaderEpoch": "the current one ... answered"),
with the log end (KIP-320 "Replica Handling": the current epoch ends at the log end offset); the epoch of
the last record, which a consumer at the log end validates its position with ("Consumer Handling"), ends
where the current epoch starts, at the log end too.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.epoch_lineage import expected_end_offset, known_epochs
from harness.errors import SetupError, require_target
from harness.histories.idle_partition import EmptyLookups
from harness.histories.leader_answers import EndOffsetAnswers, ListOffsetsAtTime
from harness.protocol.errors import describe
from harness.protocol.records import describe_log
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

FIRST_WITH_EPOCH = 4  # ListOffsets' first version with LeaderEpoch


def _lookup(x: ListOffsetsAtTime) -> str:
    p = x.partition
    return (f"v{x.version} timestamp {x.timestamp}: {describe(p['ErrorCode'])} offset {p.get('Offset')} "
            f"epoch {p.get('LeaderEpoch', '(none)')} timestamp {p.get('Timestamp', '(none)')}")


def require_empty(probe: EmptyLookups) -> None:
    """The premise: the leader's own EARLIEST and LATEST answers name the same offset, at every version."""
    edges = [x for x in probe.answers if x.timestamp in (EARLIEST_TIMESTAMP, LATEST_TIMESTAMP)]
    if not edges:
        raise SetupError(f"the probe ({probe.stage}) asked no EARLIEST or LATEST")
    offsets = {x.partition.get("Offset") for x in edges if not x.partition["ErrorCode"]}
    refused = [_lookup(x) for x in edges if x.partition["ErrorCode"]]
    require_target(not refused and len(offsets) == 1,
                   f"the partition must be empty ({probe.stage}), as the leader's EARLIEST and LATEST say it "
                   f"is, but they answered:\n  " + "\n  ".join(_lookup(x) for x in edges))


def assert_empty_partition_lookups_find_nothing(probes: Sequence[EmptyLookups]) -> None:
    """Every lookup by time of an empty partition is answered without an error with offset -1 and, from
    v4, leader epoch -1, at every version asked."""
    if not probes:
        raise SetupError("no lookup of an empty partition to judge")
    wrong = []
    for probe in probes:
        require_empty(probe)
        asked = [x for x in probe.answers if x.timestamp >= 0]
        if not asked:
            raise SetupError(f"the probe ({probe.stage}) asked no lookup by time")
        for x in asked:
            p = x.partition
            want_epoch = -1 if x.version >= FIRST_WITH_EPOCH else None
            if (p["ErrorCode"], p.get("Offset"), p.get("LeaderEpoch")) != (0, -1, want_epoch):
                wrong.append(f"{probe.stage}, leader {probe.leader} at epoch {probe.current_epoch}: {_lookup(x)}")
    assert not wrong, ("ListOffsets by time on an empty partition is not (offset -1, epoch -1 from v4):\n  "
                       + "\n  ".join(wrong))


def require_unwritten(a: EndOffsetAnswers) -> int | None:
    """The premise: no batch of the leader's log carries its current epoch, which is above every batch's.
    Returns the epoch of the last record (None for an empty log)."""
    epochs = [b.partition_leader_epoch for b in a.batches]
    require_target(all(e < a.current_epoch for e in epochs),
                   f"the current epoch {a.current_epoch} must hold no record ({a.stage}: nothing was written since "
                   f"the move), but the leader's log holds: {describe_log(a.batches)}")
    return epochs[-1] if epochs else None


def assert_unwritten_epoch_answered(probes: Sequence[EndOffsetAnswers]) -> None:
    """At every version asked, with CurrentLeaderEpoch the current epoch: the current epoch (which no record
    carries) is answered without an error with (current epoch, log end), and the epoch of the last record
    with (that epoch, log end)."""
    if not probes:
        raise SetupError("no OffsetsForLeaderEpoch answer at an epoch reached without a write to judge")
    wrong = []
    for a in probes:
        last = require_unwritten(a)
        if not a.answers:
            raise SetupError(f"no OffsetsForLeaderEpoch answer ({a.stage})")
        epochs = [a.current_epoch, *([] if last is None else [last])]
        for version, by_epoch in sorted(a.answers.items()):
            for epoch in epochs:
                p = by_epoch.get(epoch)
                if p is None:
                    raise SetupError(f"the probe ({a.stage}) did not ask LeaderEpoch {epoch} at v{version}")
                want = expected_end_offset(a.batches, epoch, a.current_epoch, a.log_end, a.log_start)
                got = (p["LeaderEpoch"], p["EndOffset"])
                if p["ErrorCode"] != 0 or got != want:
                    wrong.append(f"{a.stage}: v{version} LeaderEpoch {epoch}: got {describe(p['ErrorCode'])} "
                                 f"(LeaderEpoch, EndOffset) {got}, expected NONE {want}")
    a = probes[-1]
    assert not wrong, (
        "OffsetsForLeaderEpoch asked (CurrentLeaderEpoch the current epoch) about an epoch a leader move reached "
        "with no write since:\n  " + "\n  ".join(wrong)
        + f"\n  last probe: leader {a.leader} at epoch {a.current_epoch}, log [{a.log_start}, {a.log_end}), epochs "
        f"it knows (epoch: start) {known_epochs(a.batches, a.current_epoch, a.log_end, a.log_start)}; "
        f"log: {describe_log(a.batches)}")
