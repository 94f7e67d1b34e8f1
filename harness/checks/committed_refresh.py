"""The KIP-1094 guide, "Committing Leader Epoch", phase 3: the committed leader epoch makes a consumer with
stale metadata refresh it before it fetches.

"If, during Phase 1 and particularly Phase 2, Consumer A had committed the leader epoch along with the
next offset, then when partition Pi was assigned to Consumer B, it would have been forced to refresh its
metadata. This is because the leader epoch of the committed offset Xj would be greater than the zombie
leader's epoch ... This metadata refresh would ensure that Broker 2 is recognized as the current leader,
and Consumer B would send the fetch request to the correct broker, avoiding the OFFSET_OUT_OF_RANGE
error." (KIP-320 "Consumer Handling", extension 2, is the mechanism: "Consumers are expected to wait
until the metadata has at least reached the epoch of the committed offset".)

The history is harness.scenarios.committed_refresh's: the proxy shows the partition one epoch behind
the committed epoch until the consumer has been answered its group's commit. A Fetch fenced at the stale
epoch (or at none) is what a zombie leader at that epoch would serve, so any such Fetch breaks the
promise, as does a first Fetch not preceded by a Metadata request after the commit was read.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.client_fetch_epochs import known_epochs
from harness.checks.client_reactions import (
    FETCH_WITH_EPOCH,
    judged_errors,
    metadata_answers,
    reported,
    require_answers_readable,
    require_committed_offsets_fetched,
    require_fetch_fencing,
    require_not_lacking,
)
from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.client_reactions import ClientRecord, FetchSent
from harness.histories.committed_refresh import CommittedRefreshRun

OFFSET_FETCH_WITH_EPOCH = 5


class FetchedOnStaleMetadata(AssertionError):
    """The consumer fetched the partition on the metadata the committed epoch showed stale (no refresh
    first, or a Fetch at an epoch below the committed one): a failure a known client gap may excuse."""


def _fetch(f: FetchSent) -> str:
    return (f"Fetch v{f.version} at {f.at:.3f}s to {f.broker}: offset {f.offset} CurrentLeaderEpoch {f.current}"
            f" -> {f.answer or 'no answer'}")


def _reads(reads: Sequence[ClientRecord]) -> str:
    return "nothing" if not reads else f"{len(reads)} records, offsets {reads[0].offset}..{reads[-1].offset}"


def assert_committed_epoch_forces_a_refresh(run: CommittedRefreshRun) -> None:
    """See the module: once the consumer has read the group's commit (offset, epoch E) while its metadata
    showed an older epoch, it asks Metadata again before its first Fetch of the partition, fences every
    Fetch of it at an epoch of at least E (never the stale one, never -1: a zombie at the stale epoch
    would serve those), and then reads every record from the committed offset once, reporting nothing
    but the group's coordinator errors (retriable, of its OffsetFetch: not this promise's).
    Premises: the target returned the committed epoch with the offset (else "target refused the
    premise", or `CommittedOffsetsNeverFetched` where the client never asked again after the group's
    OffsetFetch was answered a retriable coordinator error; a client asking OffsetFetch below v5,
    which has no epoch, is "not supported by this client"), and the proxy's stale Metadata was what
    the consumer knew when it read the commit (else the harness's scene did not happen)."""
    require_answers_readable(run.client, run.errors)
    client, committed = run.client, run.committed
    seen = (f"its exchanges: {[f'{s.api} v{s.version}' for s in run.exchanges[:24]]}; it reported "
            f"{reported(run.errors)}; {run.incomplete or ''}")
    found = [r for r in run.commit_reads if r.error == "NONE" and r.offset == committed.offset]
    if not found:
        # The target answered its OffsetFetch with a retriable coordinator error it never asked again after.
        named = run.release.named if run.release is not None else None
        require_not_lacking(named or client, run.errors)
        require_committed_offsets_fetched(named or client, run.errors, len(run.reads), seen)
        raise TargetRefused(f"{client} got no OffsetFetch answer with the group's commit {committed}: "
                            f"{list(run.commit_reads) or 'none'}; {seen}")
    read = found[0]
    if read.epoch < 0 and read.version < OFFSET_FETCH_WITH_EPOCH:
        raise ClientLacks(client, "the committed leader epoch (OffsetFetch v5+, KIP-320)",
                          f"it read the commit with OffsetFetch v{read.version}")
    if read.epoch != committed.epoch:
        raise TargetRefused(f"the target answered {client}'s OffsetFetch v{read.version} with offset {read.offset} "
                            f"epoch {read.epoch}, not the committed epoch {committed.epoch} "
                            "(kip320.offset-commit.epoch-kept judges the broker)")
    known = known_epochs(run.learned, read.at)
    if not known or max(known) >= committed.epoch:
        raise SceneUnmet(f"{client}'s metadata was not behind the committed epoch {committed.epoch} when it read the "
                         f"commit at {read.at:.3f}s: known epochs {sorted(known)}; told "
                         f"{metadata_answers(run.learned)}; the proxy showed {run.stale} answers stale")
    after = [f for f in run.fetches if f.at > read.at]
    where = (f"{client} read the commit {committed.offset} at epoch {committed.epoch} at {read.at:.3f}s, its metadata "
             f"then at epoch {max(known)} (told {metadata_answers(run.learned)})")
    if not after:
        raise AssertionError(f"{where}, and sent no Fetch of the partition after it: it read {_reads(run.reads)}; "
                             f"{seen}")
    fenced = [f for f in after if f.version >= FETCH_WITH_EPOCH]
    if not fenced:
        raise ClientLacks(client, "CurrentLeaderEpoch in Fetch (v9+, KIP-320)",
                          f"it fetched at Fetch v{sorted({f.version for f in after})}")
    # Only the release and the client are read of the run: every KIP-320 consumer fences its Fetches.
    require_fetch_fencing(run, [f.current for f in fenced],  # type: ignore[arg-type]
                          "Fetch partition entries after the commit was read")
    first = after[0]
    refreshed = [t for t in run.metadata_asked if read.at < t < first.at]
    stale = [f for f in fenced if f.current < committed.epoch]
    if not refreshed or stale:
        raise FetchedOnStaleMetadata(
            f"{where}: "
            + ("it asked no Metadata before its first Fetch of the partition after it, " if not refreshed else "")
            + (f"{len(stale)} Fetches were fenced below the committed epoch (a zombie leader at the stale epoch "
               f"serves them): " + "; ".join(map(_fetch, stale[:3])) if stale else f"first: {_fetch(first)}")
            + f"; Metadata requests at {[round(t, 3) for t in run.metadata_asked]} (KIP-1094 \"Committing Leader "
            "Epoch\", phase 3: the committed epoch forces a metadata refresh before the fetch)")
    want = [(w.offset, w.value) for w in run.written]
    got = [(r.offset, r.value) for r in run.reads]
    judged = judged_errors(run.errors)  # the group's coordinator errors are not this promise's
    assert not judged and got == want, (
        f"{where}: it reported {reported(judged)} and read {_reads(run.reads)}, expected offsets "
        f"{want[0][0]}..{want[-1][0]} once each{'; ' + run.incomplete if run.incomplete else ''}")
