"""Judgements of what nodes and clients did across a network partition (harness.scenarios.network_splits).

Each takes the scenario's record (harness.histories.text_records and network_splits: writes with their
acknowledgement, logs read back, answers a cut-off leader gave) and raises AssertionError naming what
broke the promise; a premise that did not hold ends the check without a verdict (harness.errors:
`require_target`, `require_scene`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from harness.errors import NotSupported, require_scene, require_target
from harness.histories.network_splits import IsrSample, ZombieFetchFrom, ZombieWrite
from harness.histories.text_records import DeliveryReport, LogRecord

EPOCH_ERRORS = ("FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH")


def assert_zombie_refuses_the_new_epoch(
    answers: Sequence[ZombieFetchFrom], zombie: str, advertised: Sequence[int] = (-1, -1)
) -> None:
    """KIP-320 "Replica Handling": a leader asked with a CurrentLeaderEpoch other than its own answers
    with an epoch error (UNKNOWN_LEADER_EPOCH when the request's is newer), never with data and never
    with OFFSET_OUT_OF_RANGE, whatever the offset. No answer: the zombie speaks no Fetch version with
    CurrentLeaderEpoch (v9 on; `advertised`, its ApiVersions range, is the evidence)."""
    if not answers:
        raise NotSupported("CurrentLeaderEpoch in Fetch (v9 and later, KIP-320)",
                           f"{zombie} advertises Fetch v{advertised[0]}-v{advertised[1]}: no Fetch from v9 was sent")
    wrong = [a for a in answers if a.error not in EPOCH_ERRORS or a.records]
    assert not wrong, (
        f"{len(wrong)} of {len(answers)} Fetches at the new leader's epoch to {zombie} were not refused with "
        f"{' or '.join(EPOCH_ERRORS)}: " + "; ".join(
            f"v{a.version} offset {a.offset} epoch {a.epoch} -> {a.error} with {a.records} records"
            for a in wrong[:6])
    )


def assert_zombie_refuses_writes_at_the_new_epoch(
    writes: Sequence[ZombieWrite], log: Sequence[LogRecord], zombie: str
) -> None:
    """KIP-359 "Motivation" and "Public Interfaces": a Produce carrying CurrentLeaderEpoch is checked
    against the leader's own epoch before anything is appended, so a leader cut off before it learned
    of the election refuses a write at the newer epoch with an epoch error (UNKNOWN_LEADER_EPOCH: the
    request's is newer) and its log holds none of those records."""
    if not writes:
        raise NotSupported("KIP-359 CurrentLeaderEpoch in Produce",
                           f"no Produce version {zombie} speaks carries the field, so none was sent with it")
    taken = [w for w in writes if w.error not in EPOCH_ERRORS]
    kept = {r.value for r in log} & {w.value for w in writes}
    assert not taken and not kept, (
        f"{len(taken)} of {len(writes)} acks=1 Produce requests at the new leader's epoch to {zombie} were not "
        f"refused with {' or '.join(EPOCH_ERRORS)}: " + "; ".join(
            f"v{w.version} epoch {w.epoch} -> {w.error} at offset {w.offset}" for w in taken[:6])
        + (f"; its log holds {sorted(kept)}" if kept else "")
    )


def assert_truncated_to_the_new_leader(
    old_log: Sequence[LogRecord], new_log: Sequence[LogRecord], divergence: int,
    gone: Sequence[str],
) -> None:
    """KIP-101/KIP-320 "Replica Handling": the former leader, back as a follower, truncates its log at
    the divergence point and then holds exactly the new leader's records; none of `gone` (what only
    it held: its divergent records and what it acknowledged while cut off) is left."""
    left = [r for r in old_log if r.value in set(gone)]
    assert not left, (
        f"the former leader still holds {len(left)} records it should have truncated at {divergence}: "
        + ", ".join(f"{r.offset}={r.value}" for r in left[:6])
    )
    mine = [(r.offset, r.value) for r in old_log]
    theirs = [(r.offset, r.value) for r in new_log]
    if mine != theirs:
        pairs = enumerate(zip(mine, theirs, strict=False))
        first = next((i for i, (a, b) in pairs if a != b), min(len(mine), len(theirs)))
        raise AssertionError(
            f"the former leader's log differs from the new leader's from index {first}: former "
            f"{mine[first:first + 3]}, new {theirs[first:first + 3]} ({len(mine)} vs {len(theirs)} records)"
        )


def assert_no_acknowledged_write_lost(writes: Sequence[DeliveryReport], log: Sequence[LogRecord]) -> None:
    """acks=all (KIP-1 "min.insync.replicas", and the replication design KIP-320 builds on): every
    write the leader acknowledged is in the log after the partition heals, exactly once, at the
    offset its acknowledgement gave."""
    acked = [w for w in writes if w.error is None]
    require_scene(writes, "the harness's producer reported no write: nothing was sent")
    require_target(acked, f"the target acknowledged none of the {len(writes)} acks=all writes: "
                          f"{sorted(Counter(str(w.error) for w in writes).items())}")
    at = {r.offset: r.value for r in log}
    lost = [w for w in acked if w.offset is None or at.get(w.offset) != w.value]
    twice = sorted(v for v, n in Counter(r.value for r in log).items() if n > 1)
    assert not lost, (
        f"{len(lost)} of {len(acked)} acknowledged writes are not at their acknowledged offset after the heal: "
        + ", ".join(f"{w.value}@{w.offset} (log has {at.get(w.offset, 'nothing')})" for w in lost[:6])
    )
    assert not twice, f"{len(twice)} values are in the log more than once: {twice[:6]}"


def assert_served_without_the_controller(
    writes: Sequence[DeliveryReport], reads: Sequence[LogRecord], cut_for: float, session_timeout: float,
) -> None:
    """KRaft brokers keep leading at their epochs when they cannot hear the controller (KIP-320: the
    epoch changes only with a new leader): writes with acks=all are acknowledged and consumers read
    them while the controller is cut off."""
    require_scene(cut_for >= 2 * session_timeout, f"the harness cut the controller off for {cut_for:.1f} s, less "
                                                  f"than twice the session timeout {session_timeout} s")
    during = [w for w in writes if w.value.startswith("controller-cut-off")]
    failed = [w for w in during if w.error is not None]
    assert during and not failed, (
        f"{len(failed)} of {len(during)} writes while the controller was cut off failed: "
        + "; ".join(f"{w.value}: {w.error}" for w in failed[:4])
    )
    acked = {w.value for w in during}
    read = {r.value for r in reads}
    assert read and read <= acked, f"read {len(read)} values while cut off, {len(read - acked)} never acknowledged"


def assert_fenced_replica_kept_out_of_the_isr(watched: Sequence[IsrSample], follower: int) -> None:
    """KIP-320 "Proposed Changes": "the leader ... is not permitted to add a replica to the ISR if it is
    marked as offline by the controller" (such a zombie would count for acks=all and min.insync.replicas
    while it cannot become leader). While the follower, fenced, had caught up with the leader's log
    end, no ISR the brokers reported held it."""
    caught_up = [w for w in watched if w.follower_log_end == w.leader_log_end]
    require_scene(watched, f"the harness never watched the ISR while follower {follower} was fenced")
    require_target(caught_up, f"the fenced follower {follower} never caught up with the leader while watched, so "
                              f"keeping it out of the ISR was never asked of the leader: {list(watched)[-2:]}")
    back = [w for w in watched if follower in w.isr]
    assert not back, (
        f"fenced follower {follower} was added back to the ISR: at {back[0].t} s the ISR was {back[0].isr} "
        f"(leader {back[0].leader}, epoch {back[0].epoch})"
    )
