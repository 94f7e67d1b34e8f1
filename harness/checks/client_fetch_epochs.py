"""Judgements of the leader epoch a consumer fences its Fetches with (harness.scenarios.client_fetch_epochs).

What a consumer "had received" when it sent a Fetch is read at the proxy: an answer passed on to it
before the Fetch reached the proxy. The proxy cannot see when the client took the answer in, so an
answer passed on less than GRACE_S before the Fetch may not have been applied yet: the epoch of the
answer before it is accepted too, for that long.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.client_reactions import (
    FETCH_WITH_EPOCH,
    LIST_OFFSETS_WITH_EPOCH,
    METADATA_WITH_EPOCH,
    metadata_answers,
    reported,
    require_answers_readable,
    require_fetch_fencing,
    require_not_lacking,
)
from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.client_reactions import (
    LEADER_HINT,
    METADATA,
    ClientRecord,
    EpochLearned,
    FetchEpochRun,
    FetchSent,
    ProxiedRequest,
    ResetAheadRun,
)

GRACE_S = 0.5


def known_epochs(learned: Sequence[EpochLearned], at: float, grace: float = GRACE_S) -> set[int]:
    """The leader epochs a consumer may fence a Fetch sent at `at` with: the newest and the highest it
    had been told (`_usable`) before `at - grace`, and each it was told in the `grace` before `at`."""
    told = [m for m in learned if _usable(m) and m.at <= at]
    settled = [m for m in told if m.at <= at - grace]
    epochs = {m.epoch for m in told if m.at > at - grace}
    if settled:
        epochs |= {settled[-1].epoch, max(m.epoch for m in settled)}
    return epochs


def _usable(m: EpochLearned) -> bool:
    """An epoch the consumer may take as current: a Metadata answer's without a partition error, or a
    KIP-951 leader hint (which comes with the Fetch error that made the broker send it)."""
    return m.epoch >= 0 and (m.error == "NONE" or m.source == LEADER_HINT)


def _fenced_as_told(f: FetchSent, known: set[int]) -> bool:
    """Whether `f` carried an epoch the consumer `known` when it sent it; -1 while it knew none is
    one: the target had given it no epoch to send."""
    return f.current in known or (not known and f.current < 0)


def _fetch(f: FetchSent) -> str:
    return (f"Fetch v{f.version} at {f.at:.3f}s to {f.broker}: offset {f.offset} CurrentLeaderEpoch {f.current}"
            f" -> {f.answer or 'no answer'}")


def _told(learned: Sequence[EpochLearned], at: float, n: int = 3) -> str:
    before = [m for m in learned if m.at <= at][-n:]
    return ", ".join(f"{m.source} v{m.version} at {m.at:.3f}s: leader {m.leader} epoch {m.epoch}"
                     + ("" if m.error == "NONE" else f" ({m.error})") for m in before) or "nothing"


def _require_sent(sent: Sequence[ProxiedRequest], client: str, api: str, lowest: int, field: str, found: int,
                  seen: str) -> None:
    """The premise that the client sent `api` at `lowest`+ and it was answered (`found` of them count)."""
    if found:
        return
    mine = [s for s in sent if s.api == api]
    if not mine:
        raise TargetRefused(f"{client} never sent {api} to the target; {seen}")
    if max(s.version for s in mine) < lowest:
        raise ClientLacks(client, field, f"it sent {api} v{sorted({s.version for s in mine})}, none from v{lowest}")
    raise TargetRefused(f"the target answered none of {client}'s {api} requests from v{lowest} usefully; {seen}")


def _reads(reads: Sequence[ClientRecord]) -> str:
    if not reads:
        return "nothing"
    return f"{len(reads)} records, offsets {reads[0].offset}..{reads[-1].offset}"


def assert_fetch_epochs_follow_metadata(run: FetchEpochRun, grace: float = GRACE_S) -> None:
    """KIP-320 "Consumer Handling": "The consumer will obtain the current leader epoch using the Metadata
    API", and "Proposed Changes": it includes that epoch in each Fetch (CurrentLeaderEpoch, Fetch v9+),
    which the leader compares with its own. After the harness moved the leader, every Fetch entry of the
    partition carries an epoch the consumer had been told when it sent it (`known_epochs`: its newest
    Metadata's, or the highest it knew; KIP-951's leader hint in a Fetch answer counts as being told),
    never -1 and never one it was not told; the consumer fetched after learning the new epoch."""
    require_answers_readable(run.client, run.errors)
    client = run.client
    seen = f"its exchanges through the proxy: {[f'{s.api} v{s.version}' for s in run.exchanges[:12]]}; " \
           f"it reported {reported(run.errors)}"
    move = run.move
    told = [m for m in run.learned if m.source == METADATA and m.epoch >= 0]
    if not run.exchanges:
        require_not_lacking(client, run.errors)
    # A client the target never served (Java 4.4.0 against Tansu: the connection closes at ApiVersions)
    # read nothing, so the harness never came to move the leader: the target's part, not the harness's.
    _require_sent(run.exchanges, client, METADATA, METADATA_WITH_EPOCH, "leader epochs in Metadata (v7+, KIP-320)",
                  len(told), f"{metadata_answers(run.learned)}; {seen}")
    if move is None and not run.reads:
        raise TargetRefused(f"the target served {client} none of the records written before the leader move, "
                            f"so the harness never moved the leader; {seen}")
    if move is None or move.epoch_after <= move.epoch_before:
        raise SceneUnmet(f"the harness's leader move did not happen ({move}); {client} read {_reads(run.reads)}")
    fenced = [f for f in run.fetches if f.version >= FETCH_WITH_EPOCH]
    _require_sent(run.exchanges, client, "Fetch", FETCH_WITH_EPOCH, "CurrentLeaderEpoch in Fetch (KIP-320 fencing)",
                  len(fenced), seen)
    # An entry sent before the target had told the client any epoch has none to carry but -1.
    require_fetch_fencing(run, [f.current for f in fenced if known_epochs(run.learned, f.at, grace)],
                          "Fetch partition entries (v9+) sent once Metadata had given it an epoch")
    learned_new = next((m.at for m in run.learned if m.epoch >= move.epoch_after and _usable(m)), None)
    after = [f for f in fenced if learned_new is not None and f.at > learned_new]
    if not after:
        raise SceneUnmet(
            f"{client} sent no Fetch after it was told the new epoch {move.epoch_after} (leader {move.leader_after}, "
            f"moved at {move.at:.3f}s; told: {_told(run.learned, 1e9, 6)}): nothing to judge; it read "
            f"{_reads(run.reads)}; {run.incomplete or ''}")
    wrong = [f for f in fenced if not _fenced_as_told(f, known_epochs(run.learned, f.at, grace))]
    assert not wrong, (
        f"{client} fenced {len(wrong)} of its {len(fenced)} Fetch entries with an epoch that was not its current "
        f"one (the newest or the highest it had been told): "
        + "; ".join(f"{_fetch(f)} (told before it: {_told(run.learned, f.at)})" for f in wrong[:3])
        + f"; the leader moved from {move.leader_before} (epoch {move.epoch_before}) to {move.leader_after} "
        f"(epoch {move.epoch_after}) at {move.at:.3f}s")


def assert_reset_ahead_of_metadata_read_from_the_reset(run: ResetAheadRun, grace: float = GRACE_S) -> None:
    """KIP-320 "Consumer Handling", extension 1: ListOffsets returns "the corresponding epoch for any
    offsets looked up"; extension 2: "it is possible for the leader epoch ... to be ahead of the
    metadata that is known to the consumer. Consumers are expected to wait until the metadata has at
    least reached the epoch ... before checking for truncation." With its Metadata held one epoch
    behind the epoch ListOffsets returned, the consumer fences every Fetch of the partition with an
    epoch it was told (Metadata's, as "Consumer Handling" says it obtains the epoch, or the one
    ListOffsets returned), never -1 (a Fetch below the leader's epoch is refused, never served); it
    sends no OffsetsForLeaderEpoch about the ListOffsets epoch while its current epoch is below it;
    and once Metadata reaches the epoch it reads from the reset offset every record once, in order,
    reporting nothing (no data lost, no second reset). Premises, the target's part: ListOffsets
    returned an epoch with the offset, and its own Metadata answers after the hold carry epochs (else
    "target refused the premise", those answers the evidence)."""
    require_answers_readable(run.client, run.errors)
    client, reset = run.client, run.reset
    seen = (f"its exchanges through the proxy: {[f'{s.api} v{s.version}: {s.outcome}' for s in run.exchanges[:20]]}; "
            f"it reported {reported(run.errors)}; {run.incomplete or ''}")
    found = [(a, at) for a, at in zip(run.list_offsets, run.list_offsets_at, strict=False)
             if a.error == "NONE" and a.resets_to(reset)]
    _require_sent(run.exchanges, client, "ListOffsets", LIST_OFFSETS_WITH_EPOCH,
                  "the leader epoch ListOffsets returns (v4+, KIP-320)", len(found), seen)
    answer, answered_at = found[0]
    if answer.version < LIST_OFFSETS_WITH_EPOCH:
        raise ClientLacks(client, "the leader epoch ListOffsets returns (v4+, KIP-320)",
                          f"its reset asked ListOffsets v{answer.version}, answered epoch {answer.epoch}")
    if answer.epoch < 0:
        raise TargetRefused(f"ListOffsets v{answer.version} returned {client}'s reset offset {answer.offset} with "
                            f"LeaderEpoch {answer.epoch}: no epoch ahead of its Metadata, the scene's premise "
                            f"(partition epoch {run.epoch}); {seen}")
    held = [m for m in run.learned if m.source == METADATA and m.epoch >= 0]
    _require_sent(run.exchanges, client, METADATA, METADATA_WITH_EPOCH, "leader epochs in Metadata (v7+, KIP-320)",
                  run.held, seen)
    behind = [m for m in held if m.at <= answered_at]
    if not behind or behind[-1].epoch >= answer.epoch:
        raise SceneUnmet(
            f"{client}'s Metadata was not behind the epoch ListOffsets returned ({answer.epoch}, offset "
            f"{answer.offset}) when it reset: told {_told(run.learned, answered_at)}; the proxy held {run.held} "
            "Metadata answers")
    if run.released is None:
        raise SceneUnmet(f"the proxy never answered {client}'s Metadata honestly again after its reset; {seen}")
    # The proxy's rule shows the broker's epoch one lower, and -1 as 0: only the answers after the hold
    # show what the target gives. Where they give no epoch, "Metadata reaches the epoch" never comes,
    # and the consumer's Fetches have nothing but -1 to carry.
    own = [m for m in run.learned if m.source == METADATA and m.at > run.released]
    if own and not any(m.epoch >= 0 and m.error == "NONE" for m in own):
        raise TargetRefused(f"the target's own Metadata answers to {client} after the hold (from "
                            f"{run.released:.3f}s) gave no leader epoch: {metadata_answers(own)}; {seen}")
    fenced = [f for f in run.fetches if f.version >= FETCH_WITH_EPOCH and f.at > answered_at]
    require_fetch_fencing(run, [f.current for f in fenced], "Fetch partition entries after the reset (v9+)")
    wrong = [f for f in fenced if f.current not in known_epochs(run.learned, f.at, grace) | {answer.epoch}]
    where = (f"ListOffsets v{answer.version} ({reset}) returned offset {answer.offset} at epoch {answer.epoch} at "
             f"{answered_at:.3f}s, its Metadata then showing epoch {behind[-1].epoch} (held until {run.released:.3f}s)")
    assert not wrong, (
        f"{client} fenced {len(wrong)} Fetch entries after its reset with an epoch neither Metadata nor ListOffsets "
        f"gave it: " + "; ".join(f"{_fetch(f)} (told before it: {_told(run.learned, f.at)})" for f in wrong[:3])
        + f"; {where}")
    early = [v for v in run.validations if v.at > answered_at and v.leader_epoch > v.current >= 0]
    assert not early, (
        f"{client} checked for truncation at an epoch its Metadata had not reached: OffsetsForLeaderEpoch "
        + "; ".join(f"at {v.at:.3f}s LeaderEpoch {v.leader_epoch} with CurrentLeaderEpoch {v.current}"
                    for v in early[:3])
        + f"; {where}")
    assert not run.errors, f"{client} reported {reported(run.errors)} after its reset; {where}"
    want = [(w.offset, w.value) for w in run.written if w.offset >= answer.offset]
    got = [(r.offset, r.value) for r in run.reads]
    assert got == want, (
        f"{client} read {_reads(run.reads)} after its reset, expected offsets {want[0][0] if want else '-'}.."
        f"{want[-1][0] if want else '-'} once each, in order (every record from the reset offset on); {where}; "
        f"its ListOffsets answers: {[(a.offset, a.epoch, a.error) for a in run.list_offsets]}"
        f"{'; ' + run.incomplete if run.incomplete else ''}")
