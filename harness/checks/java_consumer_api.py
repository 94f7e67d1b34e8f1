"""KIP-320 "Public Interfaces" and "Consumer Handling": the Java consumer API the KIP defines.

- A truncation raised with no reset policy is an OffsetOutOfRangeException: "This exception extends
  from `OffsetOutOfRangeException` for compatibility. If a user's offset reset policy is set to
  "none," they will still be able to catch `OffsetOutOfRangeException`." Judged by type, as an
  application catches it (the driver's catch of OffsetOutOfRangeException and instanceof), not by
  the class name.
- A truncation the reset policy handles is logged: "The consumer will log a message to indicate that
  the truncation was detected, but will reset the position automatically."
- seek(TopicPartition, OffsetAndMetadata): "Like the other seek() overload, this method does not make
  any remote calls."
- OffsetAndMetadata's constructors: "Old constructors will still be supported and will use
  Optional.empty() as the default leader epoch", so what they build is committed with no epoch (-1).

The histories are harness.histories.java_consumer_api's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.errors import ClientLacks, require_scene, require_target
from harness.histories.client_reactions import ClientRecord
from harness.histories.java_consumer_api import (
    OUT_OF_RANGE,
    OldConstructorCommits,
    RaisedError,
    SeekTruncation,
    SeekWindow,
)
from harness.histories.kip320_clients import VALIDATION
from harness.histories.version_needs import OFFSET_COMMIT_LEADER_EPOCH

OFFSET_COMMIT_WITH_EPOCH = OFFSET_COMMIT_LEADER_EPOCH.first
MIN_QUIET_S = 1.0  # the least idleness before the seek that lets a request in the window be the seek's
_CONTEXT = re.compile(r"\[Consumer clientId=[^\]]*\]")
NO_EPOCH = -1


def _reads(reads: Sequence[ClientRecord]) -> str:
    return "nothing" if not reads else f"{len(reads)} records, offsets {reads[0].offset}..{reads[-1].offset}"


def _raised(errors: Sequence[RaisedError]) -> str:
    return "; ".join(f"{e.exception} ({e.message}) caught as {e.caught_as}, instance of {list(e.types)}, divergent "
                     f"{[(d.offset, d.epoch) for d in e.divergent]}" for e in errors[:2]) or "nothing"


def _require_truncation_found(run: SeekTruncation) -> None:
    """The target's part of the scene: asked where the sought epoch ended, the leader answered the offset
    where the next epoch starts (`log.moved_at`), below the sought offset (the validation finds a
    truncation). Where the client never asked, its refusals are the evidence."""
    log = run.log
    require_scene(log.epoch_after > log.epoch_before and run.sought_epoch == log.epoch_before
                  and run.sought > log.moved_at,
                  f"the harness's seek to ({run.sought}, epoch {run.sought_epoch}) is not past the end of epoch "
                  f"{log.epoch_before} (the leader moved to {log.epoch_after} at offset {log.moved_at})")
    asked = [a for a in run.asks if a.api == VALIDATION and a.asked == run.sought_epoch]
    answered = [a for a in asked if a.error == "NONE"]
    require_target(answered and all(a.offset == log.moved_at for a in answered),
                   f"the leader did not answer {run.client}'s OffsetsForLeaderEpoch for epoch {run.sought_epoch} with "
                   f"the offset where epoch {log.epoch_after} starts ({log.moved_at}): "
                   f"{[str(a) for a in asked] or 'it asked none'}; its requests {[str(a) for a in run.asks[:6]]}; "
                   f"driver refusals {list(run.refused) or 'none'}")


def assert_truncation_is_an_out_of_range_exception(run: SeekTruncation) -> None:
    """KIP-320 "Public Interfaces": with no reset policy, the truncation the consumer found (its
    OffsetsForLeaderEpoch answer put the sought epoch's end below its position) is raised from poll as
    an exception an application catching OffsetOutOfRangeException catches (LogTruncationException
    "extends from OffsetOutOfRangeException for compatibility"), with the divergent offset (the
    KIP's `truncationOffsets`, Java's divergentOffsets()), and nothing past it is read. Judged by the
    type: the driver's catch clause and instanceof, not the class name."""
    require_scene(run.reset == "none", f"the check needs a consumer with no reset policy, not {run.reset}")
    _require_truncation_found(run)
    log = run.log
    caught = [e for e in run.errors if e.caught_as == "OffsetOutOfRangeException" and e.out_of_range]
    where = (f"{run.client} positioned by seek at ({run.sought}, epoch {run.sought_epoch}), epoch "
             f"{run.sought_epoch} ending at {log.moved_at} by the leader's answer")
    assert caught, (f"{where}: poll raised nothing an application catching OffsetOutOfRangeException catches: it "
                    f"raised {_raised(run.errors)} and read {_reads(run.reads)} (KIP-320 \"Public Interfaces\": "
                    "LogTruncationException \"extends from OffsetOutOfRangeException\")")
    e = caught[0]
    assert OUT_OF_RANGE in e.types, f"{where}: the exception caught is not typed {OUT_OF_RANGE}: {_raised(caught)}"
    assert [(d.partition, d.offset) for d in e.divergent] == [(0, log.moved_at)], (
        f"{where}: the OffsetOutOfRangeException raised names divergent offsets "
        f"{[(d.partition, d.offset, d.epoch) for d in e.divergent]}, not partition 0 at {log.moved_at}: "
        f"{_raised(caught)}")
    past = [r for r in run.reads if r.offset >= log.moved_at]
    assert not past, f"{where}: it raised the truncation but also read {_reads(past)}"


def assert_truncation_reset_is_logged(run: SeekTruncation) -> None:
    """KIP-320 "Consumer Handling": with auto.offset.reset earliest or latest, the consumer that finds
    a truncation resets "as precisely as possible" and "will log a message to indicate that the
    truncation was detected, but will reset the position automatically": it raises nothing, reads
    from the divergent offset (where the sought epoch ended) the records written there, and its client
    log holds a line naming the truncation ("truncat") and the partition."""
    require_scene(run.reset in ("earliest", "latest"), f"the check needs a reset policy, not {run.reset}")
    _require_truncation_found(run)
    log = run.log
    where = (f"{run.client} (auto.offset.reset {run.reset}) positioned by seek at ({run.sought}, epoch "
             f"{run.sought_epoch}), epoch {run.sought_epoch} ending at {log.moved_at} by the leader's answer")
    want = [(w.offset, w.value) for w in log.written if w.offset >= log.moved_at]
    got = [(r.offset, r.value) for r in run.reads]
    assert not run.errors and got == want, (
        f"{where}: it did not reset to the divergent offset and read on: raised {_raised(run.errors)}, read "
        f"{_reads(run.reads)}, expected offsets {want[0][0]}..{want[-1][0]}"
        + (f"; {run.incomplete}" if run.incomplete else ""))
    partition = f"{log.topic}-0"
    # The message, without the logger's "[Consumer clientId=..., groupId=...]" context, whose names are
    # the harness's: the client's own words must say it.
    logged = [line for line in run.log_lines
              if "truncat" in _CONTEXT.sub("", line).lower() and partition in line]
    shown = [line for line in run.log_lines if log.topic in line][-4:] or list(run.log_lines[-4:])
    assert logged, (f"{where}: it reset to {log.moved_at}, but its client log has no line about the truncation of "
                    f"{partition} ({len(run.log_lines)} lines; the last naming the topic: {shown or 'none'})")


def assert_seek_with_epoch_makes_no_remote_call(run: SeekWindow) -> None:
    """KIP-320 "Public Interfaces": seek(TopicPartition, OffsetAndMetadata), "Like the other seek()
    overload, this method does not make any remote calls": from the moment the harness told the idle
    consumer to seek until SETTLE_S after seek returned, it sent no request through the proxy. Premises
    (of the harness's making): it had sent requests before (the proxy watches its connections), sent
    nothing for the quiet time before the seek (no poll left anything to send), the seek returned inside
    the window, and it sent requests again once polled (so a request in the window would have been seen)."""
    start, end = run.window
    before = [s for s in run.sent if s.at < start]
    after = [s for s in run.sent if s.at > end]
    require_scene(before and run.quiet >= MIN_QUIET_S and start <= run.answered <= end and run.seek_nanos >= 0,
                  f"the scene did not happen: {len(before)} requests before the window {start:.3f}..{end:.3f}s, "
                  f"quiet {run.quiet:.3f}s before it, seek answered at {run.answered:.3f}s ({run.seek_nanos} ns in the "
                  f"call); driver refusals {list(run.refused) or 'none'}")
    require_scene(after, f"{run.client} sent nothing once polled after the seek, so the proxy would not have seen a "
                         f"request in the window either: its requests {[(s.at, s.api) for s in run.sent[-6:]]}")
    inside = [s for s in run.sent if start <= s.at <= end]
    assert not inside, (
        f"{run.client} sent {len(inside)} requests while seek(tp, OffsetAndMetadata({run.sought}, epoch "
        f"{run.sought_epoch})) ran on a consumer nothing polled (window {start:.3f}..{end:.3f}s, seek returned at "
        f"{run.answered:.3f}s after {run.seek_nanos / 1e6:.1f} ms in the call): "
        + ", ".join(f"{s.api} v{s.version} at {s.at:.3f}s" for s in inside[:6])
        + " (KIP-320 \"Public Interfaces\": \"this method does not make any remote calls\")")


def assert_old_constructors_commit_no_epoch(run: OldConstructorCommits) -> None:
    """KIP-320 "Public Interfaces": OffsetAndMetadata's "Old constructors will still be supported and
    will use Optional.empty() as the default leader epoch": what OffsetAndMetadata(offset) and
    OffsetAndMetadata(offset, metadata) build has no leader epoch, and commitSync sends it with
    CommittedLeaderEpoch -1, though the consumer's last record was at a known epoch (what committed()
    reads back is the broker's answer, shown as evidence: kip320.offset-commit.no-epoch-reads-back-undefined
    judges it). Premises: the consumer read records at an epoch (so an epoch it could
    have put in was there), and the KIP-320 constructor's commit, of another epoch, carried it on the
    wire (so the field is sent at all; a client whose OffsetCommit carries no epoch is "not supported
    by this client")."""
    # Records the harness wrote that the consumer was never served, or served without an epoch, are the
    # target's part of the scene.
    require_target(run.consumed_epoch >= 0 and run.reads,
                   f"the target served {run.client} {_reads(run.reads)}, the last at epoch {run.consumed_epoch}: no "
                   f"epoch it could have committed; driver refusals {list(run.refused) or 'none'}")
    by_mode = {c.mode.split(":")[0]: c for c in run.commits}
    require_scene(set(by_mode) == {"offset", "metadata", "epoch"},
                  f"the harness's commits: {[c.mode for c in run.commits]}; driver refusals "
                  f"{list(run.refused) or 'none'}")
    control = by_mode["epoch"]
    wanted = int(control.mode.split(":")[1])
    require_scene(wanted != run.consumed_epoch and wanted >= 0,
                  f"the KIP-320 constructor's epoch {wanted} must differ from the consumed epoch {run.consumed_epoch}")
    fielded = [(v, e) for v, e in control.sent if v >= OFFSET_COMMIT_WITH_EPOCH]
    if not fielded or all(e == NO_EPOCH for _, e in fielded):
        raise ClientLacks(run.client, "the leader epoch in OffsetCommit (v6+, KIP-320)",
                          f"its commit of OffsetAndMetadata({control.offset}, Optional.of({wanted}), ...) went out as "
                          f"(version, CommittedLeaderEpoch) {list(control.sent)}")
    wrong = []
    for mode in ("offset", "metadata"):
        c = by_mode[mode]
        built = "OffsetAndMetadata(" + str(c.offset) + (")" if mode == "offset" else ", metadata)")
        if not c.sent:
            wrong.append(f"{built}: no OffsetCommit of offset {c.offset} went out")
            continue
        carried = sorted({e for _, e in c.sent})
        if c.built_epoch != NO_EPOCH or carried != [NO_EPOCH]:
            wrong.append(f"{built}: leaderEpoch() {c.built_epoch}, committed with CommittedLeaderEpoch {carried} "
                         f"(version, epoch: {list(c.sent)}), read back by committed() at epoch {c.read_epoch}")
    assert not wrong, (
        f"{run.client}, its last record read at epoch {run.consumed_epoch}, committed with the old constructors an "
        "epoch other than none (KIP-320 \"Public Interfaces\": they \"will use Optional.empty() as the default leader "
        "epoch\"):\n  " + "\n  ".join(wrong)
        + f"\n  the KIP-320 constructor's commit of epoch {wanted} went out as {list(control.sent)}")
