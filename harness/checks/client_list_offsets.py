"""KIP-320 "Consumer Handling", extension 1: a consumer fences its ListOffsets with its current leader epoch.

"When the consumer needs to reset offsets, it uses the ListOffsets API to query the leader. To avoid
querying stale leaders, we will add epoch fencing" (and "Protocol Changes / ListOffsets": "we add the
current leader epoch to the request schema in order to protect clients from querying stale
leaders"); "The consumer will use the current epoch when checking for truncation and when fencing."

The history is harness.scenarios.client_fetch_epochs `reset_ahead_of_metadata` (a `ResetAheadRun`):
a consumer of a fresh group resets while the proxy shows every Metadata answer for the partition one
epoch behind the leader's, so the epoch it was told and the partition's true epoch differ, and an
echo of either is told apart from a fence with what it knows. The proxy passes its ListOffsets on
unfenced (the recording keeps what the client sent). What the consumer "had been told" is read at the
proxy, as for Fetch (harness.checks.client_fetch_epochs.known_epochs): the recording has when each
ListOffsets answer was passed on, not when the request came, so an epoch told up to that answer
counts; in the scene every Metadata answer before the reset carries the same held epoch.
"""

from __future__ import annotations

from harness.checks.client_fetch_epochs import GRACE_S, known_epochs
from harness.checks.client_reactions import (
    LIST_OFFSETS_WITH_EPOCH,
    METADATA_WITH_EPOCH,
    metadata_answers,
    reported,
    require_answers_readable,
)
from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.client_reactions import METADATA, ListOffsetsAnswer, ResetAheadRun


def _sent(a: ListOffsetsAnswer, at: float) -> str:
    return (f"ListOffsets v{a.version} answered at {at:.3f}s: CurrentLeaderEpoch {a.current} -> {a.error}, offset "
            f"{a.offset} epoch {a.epoch}")


def assert_list_offsets_fenced_with_the_told_epoch(run: ResetAheadRun, grace: float = GRACE_S) -> None:
    """See the module: every ListOffsets partition entry (v4+) the consumer sent for its reset, once
    Metadata had given it an epoch, carries CurrentLeaderEpoch equal to an epoch it had been told
    (`known_epochs`: its newest Metadata's, or the highest it knew), never -1 and never one it was not
    told (the partition's true epoch, which the proxy held back). Premises: it sent ListOffsets v4+ at
    all (only older versions: "not supported by this client"; none: "target refused the premise"), the
    target's Metadata gave it an epoch (v7+, else "target refused the premise"), and the proxy's hold
    made that epoch differ from the partition's (else the harness's scene did not happen). -1 in every
    entry from a release older than its stack's first KIP-320 consumer (harness.clients.kip320_releases)
    is "not supported by this client"; from that release on it fails."""
    require_answers_readable(run.client, run.errors)
    client = run.client
    seen = (f"its exchanges through the proxy: {[f'{s.api} v{s.version}: {s.outcome}' for s in run.exchanges[:20]]}; "
            f"it reported {reported(run.errors)}; {run.incomplete or ''}")
    pairs = list(zip(run.list_offsets, run.list_offsets_at, strict=False))
    if not pairs:
        raise TargetRefused(f"{client} sent no ListOffsets for the partition that was answered, so it never reset "
                            f"by its policy ({run.reset}); {seen}")
    fenced = [(a, at) for a, at in pairs if a.version >= LIST_OFFSETS_WITH_EPOCH]
    if not fenced:
        raise ClientLacks(client, "CurrentLeaderEpoch in ListOffsets (v4+, KIP-320)",
                          f"it sent ListOffsets v{sorted({a.version for a, _ in pairs})}")
    told = [m for m in run.learned if m.source == METADATA and m.epoch >= 0 and m.error == "NONE"]
    asked = sorted({m.version for m in run.learned if m.source == METADATA})
    if not told and asked and max(asked) < METADATA_WITH_EPOCH:
        raise ClientLacks(client, "leader epochs in Metadata (v7+, KIP-320)", f"it asked Metadata v{asked}")
    judged = [(a, at, known_epochs(run.learned, at, grace)) for a, at in fenced]
    judged = [(a, at, known) for a, at, known in judged if known]
    if not judged:
        raise TargetRefused(f"the target gave {client} no leader epoch for the partition before its ListOffsets "
                            f"({metadata_answers(run.learned)}), so it had none to fence them with; "
                            + "; ".join(_sent(a, at) for a, at in fenced[:3]))
    if all(max(known) >= run.epoch for _, _, known in judged):
        raise SceneUnmet(f"{client}'s Metadata was not held behind the partition's epoch {run.epoch} when it sent "
                         f"ListOffsets: told {metadata_answers(run.learned)}; the proxy held {run.held} answers")
    currents = [a.current for a, _, _ in judged]
    if all(c < 0 for c in currents):
        release = run.release
        fences = None if release is None else release.fences()
        if release is None or fences is None:
            raise SceneUnmet(f"{client}'s release is unknown ({release.named if release else 'none recorded'}), so "
                             f"ListOffsets carrying only {sorted(set(currents))} cannot be judged against its stack's "
                             "first KIP-320 consumer")
        if not fences:
            since = release.fences_fetch
            raise ClientLacks(release.named or client, "CurrentLeaderEpoch in ListOffsets (KIP-320 fencing)",
                              f"{since.product} {release.release} predates {since.release}, its stack's first KIP-320 "
                              f"consumer ({since.evidence}); its ListOffsets carried {sorted(set(currents))}")
    wrong = [(a, at, known) for a, at, known in judged if a.current not in known]
    assert not wrong, (
        f"{client} ({run.reset}) fenced {len(wrong)} of its {len(judged)} ListOffsets entries for the partition with "
        "an epoch that was not its current one (KIP-320 \"Consumer Handling\": \"To avoid querying stale leaders, we "
        "will add epoch fencing\"; \"The consumer will use the current epoch when checking for truncation and when "
        "fencing\"): "
        + "; ".join(f"{_sent(a, at)}, its known epochs then {sorted(known)}" for a, at, known in wrong[:3])
        + f"; told {metadata_answers(run.learned)}; the partition's epoch was {run.epoch}, held back by the proxy")
