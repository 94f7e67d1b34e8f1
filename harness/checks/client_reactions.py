"""Judgements of how a client met the epoch errors (harness.scenarios.client_reactions)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.client_reactions import (
    METADATA,
    ClientRecord,
    CommittedAhead,
    EpochErrorRun,
    EpochLearned,
    FetchEpochRun,
    ProxiedRequest,
    ResetAheadRun,
    ResetFetch,
)
from harness.histories.observations import ClientEvent
from harness.protocol.errors import COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, error_name

FETCH_WITH_EPOCH = 9  # the first Fetch version with CurrentLeaderEpoch (KIP-320)
METADATA_WITH_EPOCH = 7  # the first Metadata version whose answer carries the leader epoch (KIP-320)
LIST_OFFSETS_WITH_EPOCH = 4  # the first ListOffsets version whose answer carries LeaderEpoch (KIP-320)


# -- a group's coordinator errors, which these checks do not judge ----------------------------------

# The group's coordinator errors: retriable (protocol guide, Error Codes), answered to the group's
# OffsetCommit and OffsetFetch, never to a partition's Fetch; a consumer queries the coordinator again
# and asks again. They say nothing of the leader epochs these checks judge, so one a client reports and
# then recovers from breaks none of their promises; what it read after is still judged.
COORDINATOR_ERRORS = frozenset(error_name(c) for c in (
    COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR))
# librdkafka's report of the OffsetFetch of its assignment answered with an error for the whole group (no
# partition named): rd_kafka_assignment_handle_OffsetFetch, src/rdkafka_assignment.c l.318-326 (v2.15.0).
_GROUP_REFUSED_OFFSET_FETCH = "Failed to fetch committed offsets for 0 partition(s)"
# Of those, the two it does not retry: rd_kafka_err_action gives them REFRESH and no RETRY
# (src/rdkafka_request.c l.123-129, v2.15.0), unlike COORDINATOR_LOAD_IN_PROGRESS (l.168-169).
_NOT_RETRIED = frozenset(error_name(c) for c in (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR))


class CommittedOffsetsNeverFetched(AssertionError):
    """A consumer whose OffsetFetch for its assignment was answered a retriable coordinator error for the
    whole group, and which read nothing after it within the scene's bound (it never asked again, so
    it never started fetching): a failure a known client gap may excuse (harness/client_gaps.toml,
    librdkafka-offset-fetch-coordinator-error-stalls). `client` is what its driver named."""

    GAPS = {"librdkafka": "librdkafka-offset-fetch-coordinator-error-stalls"}  # by stack: the gap it may be

    def __init__(self, message: str, client: str | None) -> None:
        super().__init__(message)
        self.client = client


def coordinator_error(e: ClientEvent) -> bool:
    """Whether a client's reported event is one of the group's coordinator errors."""
    return e.event == "error" and e.get("code") in COORDINATOR_ERRORS


def judged_errors(errors: Sequence[ClientEvent]) -> list[ClientEvent]:
    """What a client reported, less the group's coordinator errors (`COORDINATOR_ERRORS`)."""
    return [e for e in errors if not coordinator_error(e)]


def require_committed_offsets_fetched(client: str | None, events: Sequence[ClientEvent], read: int,
                                      seen: str) -> None:
    """Raise `CommittedOffsetsNeverFetched` where a consumer reported (`events`) its assignment's
    OffsetFetch refused for the whole group with NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE (as
    librdkafka words it) and then read nothing (`read` records) by the scene's bound; `seen` is the
    evidence of the wait. Any other stall is left to its caller."""
    refused = next((e for e in events if coordinator_error(e) and e.get("code") in _NOT_RETRIED
                    and str(e.get("message", "")).startswith(_GROUP_REFUSED_OFFSET_FETCH)), None)
    if refused is None or read:
        return
    raise CommittedOffsetsNeverFetched(
        f"{client or 'the client'} reported {refused} and read nothing after it: the OffsetFetch of its assignment "
        f"was answered {refused.get('code')} for the whole group, a retriable error (protocol guide, Error Codes), "
        f"and it never asked again, so it never fetched; {seen}", client)


class AssignmentNeverCompleted(AssertionError):
    """A group member whose driver reported the group's assignments (`assigned` events), the last of
    them without any partition, and which read nothing within the scene's bound: the group never
    gave it the partition it subscribed to, so it never fetched. A failure a known client gap may
    excuse (harness/client_gaps.toml, kafka-python-sync-group-result-dropped). `client` is what its
    driver named."""

    GAPS = {"kafka-python": "kafka-python-sync-group-result-dropped"}  # by stack: the gap it may be

    def __init__(self, message: str, client: str | None) -> None:
        super().__init__(message)
        self.client = client


def require_assignment_completed(client: str | None, events: Sequence[ClientEvent], read: int, seen: str) -> None:
    """Raise `AssignmentNeverCompleted` where a consumer's events show it assigned nothing by the group
    (its last `assigned` event holds no partition) and it read nothing (`read` records) by the scene's
    bound; `seen` is the evidence of the wait. A driver that reports no assignments is left to its caller."""
    assigned = [e for e in events if e.event == "assigned"]
    if not assigned or assigned[-1].get("partitions") or read:
        return
    raise AssignmentNeverCompleted(
        f"{client or 'the client'} was assigned {len(assigned)} time(s), the last with no partition "
        f"({assigned[-1]}), and read nothing: the group's assignment of the partition it subscribed to never "
        f"reached it; {seen}", client)


def _reads(reads: Sequence[ClientRecord]) -> str:
    if not reads:
        return "nothing"
    return f"{len(reads)} records, offsets {reads[0].offset}..{reads[-1].offset}"


def reported(errors: Sequence[ClientEvent], n: int = 2) -> str:
    """What a client reported, the first `n` events ("nothing" when it reported none)."""
    return "; ".join(str(e) for e in errors[:n]) or "nothing"


def require_not_lacking(client: str, errors: Sequence[ClientEvent]) -> None:
    """A consumer its driver refused as an API the client has not (`lacks`: KafkaJS has no "none"
    reset policy, no seek with an epoch) is "not supported by this client", the driver's answer the
    evidence, rather than a target that was never reached."""
    lacking = [e for e in errors if e.get("lacks")]
    if lacking:
        raise ClientLacks(client, f"the API behind `{lacking[0].get('command')}`", str(lacking[0].get("message")))


# A client's own words for an answer it could not read because the answer carries what its version
# does not define: kafka-clients' generated readers raise this for a tagged field of another version
# (Tansu 0.6.0 puts Fetch's NodeEndpoints, tag 0 from v16, into its v12 answers).
_UNREADABLE_ANSWER = re.compile(r"Tag \d+ is not valid for version \d+")


def require_answers_readable(client: str, errors: Sequence[ClientEvent]) -> None:
    """A client check judges what a client did with the target's answers, so it presumes answers the
    client can read. A client that reported an answer whose version does not define what it carries
    (`_UNREADABLE_ANSWER`) stopped on the target's answer, not by its own choice: "target refused the
    premise", the client's words the evidence, never the client's FAIL."""
    for e in errors:
        message = str(e.get("message") or "")
        if _UNREADABLE_ANSWER.search(message):
            raise TargetRefused(
                f"{client} could not read the target's answer: {message} ({e.get('exception') or 'its error'}); "
                "the answer carries a field its version does not define, so what the client did after it "
                "judges nothing of the client")


def _exchanges(sent: Sequence[ProxiedRequest], n: int = 12) -> str:
    if not sent:
        return "none: it never reached the proxy"
    shown = ", ".join(f"{s.api}" + (f" v{s.version}" if s.version >= 0 else "") + f": {s.outcome}"
                      for s in sent[:n])
    return shown + (f" (and {len(sent) - n} more)" if len(sent) > n else "")


RuledRun = EpochErrorRun | CommittedAhead | FetchEpochRun | ResetAheadRun


def require_ruled(run: RuledRun, api: str, acted: int, lowest: int = 0, field: str = "") -> None:
    """The premise of a proxy scene: its rule acted on at least one `api` answer (of version `lowest`
    or later, the versions with `field`) to the client. Where it did not: a client that never sent
    `api` through the proxy, or sent it and was never answered, did not reach the target ("target
    refused the premise", with every exchange it had as the evidence: the Java client on a broker that
    closes the connection on its ApiVersions); one that sent only older versions never sends `field`
    ("not supported by this client"); one answered at those versions whose answers the rule did not
    act on is the harness's scene not happening (an ERROR)."""
    require_answers_readable(_named(run), run.errors)
    if acted >= 1:
        return
    client, sent = run.client, run.exchanges
    seen = f"its exchanges through the proxy: {_exchanges(sent)}; it reported {reported(run.errors)}"
    mine = [s for s in sent if s.api == api]
    if not mine:
        require_not_lacking(_named(run), run.errors)
        raise TargetRefused(f"{client} never sent {api} to the target, so no {api} answer of it could be refused; "
                            f"{seen}")
    if max(s.version for s in mine) < lowest:
        raise ClientLacks(_named(run), field,
                          f"it sent {api} v{sorted({s.version for s in mine})}, none from v{lowest}")
    answered = [s for s in mine if s.version >= lowest and s.outcome == "answered"]
    if not answered:
        raise TargetRefused(f"the target answered none of {client}'s {api} requests from v{lowest}; {seen}")
    raise SceneUnmet(f"the proxy's rule acted on none of the {len(answered)} {api} answers (v{lowest}+) to "
                     f"{client}; {seen}")


def _named(run: RuledRun) -> str:
    """The client and version its driver named, else its stack."""
    release = getattr(run, "release", None)
    return (release.named if release is not None else None) or getattr(run, "version", None) or run.client


def metadata_answers(learned: Sequence[EpochLearned], n: int = 4) -> str:
    """What Metadata told a client about the partition: the first `n` answers, then how many more."""
    told = [m for m in learned if m.source == METADATA]
    if not told:
        return "no Metadata answer naming the partition"
    shown = ", ".join(f"Metadata v{m.version} at {m.at:.3f}s: leader {m.leader} LeaderEpoch {m.epoch}"
                      + ("" if m.error == "NONE" else f" ({m.error})") for m in told[:n])
    return shown + (f" (and {len(told) - n} more, LeaderEpoch {sorted({m.epoch for m in told[n:]})})"
                    if len(told) > n else "")


def require_epoch_told(run: EpochErrorRun, api: str, what: str) -> None:
    """The premise of judging the leader epoch a client sent (KIP-320 "Consumer Handling": "The
    consumer will obtain the current leader epoch using the Metadata API"; KIP-359 adds the same field
    to Produce): when every `api` partition entry judged (`run.sent_epochs`, `what` says which)
    carried CurrentLeaderEpoch -1, the target must have told the client a leader epoch for the
    partition (a Metadata answer without error, LeaderEpoch >= 0) before its first refused request.
    A client told none has no epoch to send but -1 (the field's "no epoch"), which breaks no promise
    of its own, and an epoch error in answer to an unfenced request is not a situation KIP-320 makes
    (a leader validates only an epoch it is sent): "target refused the premise", with what Metadata
    answered as the evidence. A client that asked only Metadata versions without the field (before
    v7) is "not supported by this client". Nothing happens when an entry carried an epoch, or when
    there were none."""
    epochs = run.sent_epochs
    if not epochs or any(e >= 0 for e in epochs):
        return
    first = run.first_refused_at
    told = [m for m in run.learned if m.source == METADATA and m.epoch >= 0 and m.error == "NONE"
            and (first is None or m.at <= first)]
    if told:
        return
    asked = sorted({m.version for m in run.learned if m.source == METADATA})
    if asked and max(asked) < METADATA_WITH_EPOCH:
        raise ClientLacks(_named(run), "leader epochs in Metadata (v7+, KIP-320)",
                          f"it asked Metadata v{asked}, and its {len(epochs)} {what} carried CurrentLeaderEpoch -1")
    when = f"before its first refused {api} at {first:.3f}s" if first is not None else "at all"
    raise TargetRefused(
        f"the target gave {_named(run)} no leader epoch for the partition {when} ({metadata_answers(run.learned)}), "
        f"so its {len(epochs)} {what} carried CurrentLeaderEpoch -1, no epoch, as a client "
        f"that knows none sends (KIP-320 \"Consumer Handling\": \"The consumer will obtain the current leader epoch "
        f"using the Metadata API\"); an epoch error in answer to them judges nothing of the client")


def assert_read_on_through_epoch_errors(run: EpochErrorRun) -> None:
    """KIP-320 "Consumer Handling": a consumer that gets FENCED_LEADER_EPOCH refreshes its metadata
    ("leader changes are detected either through a metadata refresh or in response to a
    FENCED_LEADER_EPOCH error") and fetches again; on UNKNOWN_LEADER_EPOCH "it will simply retry the
    fetch". Either way it neither resets its position nor fails: it reads every record once, in order,
    and reports nothing. Its refused Fetches carry the epoch Metadata gave it (`require_epoch_told`,
    then `require_fetch_fencing`: -1 in every one from a release that fences Fetch fails)."""
    client, error = run.client, run.error
    require_ruled(run, "Fetch", run.refused, FETCH_WITH_EPOCH, "CurrentLeaderEpoch in Fetch (KIP-320 fencing)")
    require_epoch_told(run, "Fetch", "refused Fetch partition entries")
    require_fetch_fencing(run, run.sent_epochs, "refused Fetch partition entries")
    assert not run.errors, (
        f"{client} reported {reported(run.errors)} after {run.refused} Fetch answers of {error}, instead of retrying")
    got = [(r.offset, r.value) for r in run.reads]
    want = [(w.offset, w.value) for w in run.written]
    assert got == want, (
        f"{client} read {_reads(run.reads)} after {error}, expected the {len(want)} records written, once each, "
        f"in order{'; ' + run.incomplete if run.incomplete else ''}"
    )
    after = run.after
    if error == "FENCED_LEADER_EPOCH":
        assert "Metadata" in after, f"{client} did not refresh its metadata after {error}: it sent {after}"
    assert "Fetch" in after[1:], f"{client} did not fetch again after {error}: it sent {after}"


def assert_written_once_through_epoch_errors(run: EpochErrorRun) -> None:
    """KIP-359 "Proposed Changes": a producer that sees FENCED_LEADER_EPOCH "will refresh metadata and
    retry"; on UNKNOWN_LEADER_EPOCH it "will simply backoff and retry". An idempotent producer so
    refused delivers every record, reports no failure, and the partition holds each once, in order."""
    client, error = run.client, run.error
    require_ruled(run, "Produce", run.refused)
    assert not run.errors, f"{client} failed {len(run.errors)} deliveries after {error}: {reported(run.errors, 3)}"
    got = [r.value for r in run.reads]
    want = [w.value for w in run.written]
    assert got == want, (
        f"after {error}, the partition holds {len(got)} records ({got[:3]}...{got[-2:]}), expected the {len(want)} "
        f"written once each, in order")
    if error == "FENCED_LEADER_EPOCH":
        assert "Metadata" in run.after, (
            f"{client} did not refresh its metadata after {error}: it sent {list(run.after)}")


def assert_validated_only_once_metadata_caught_up(run: CommittedAhead) -> None:
    """KIP-320 "Consumer Handling", extension 2: "it is possible for the leader epoch included in the
    committed offset to be ahead of the metadata that is known to the consumer. Consumers are
    expected to wait until the metadata has at least reached the epoch of the committed offset
    before checking for truncation." No OffsetsForLeaderEpoch the client sent asks about an epoch
    newer than its current one; it reads on from the committed offset, once each, reporting nothing
    but the group's coordinator errors (`COORDINATOR_ERRORS`: retriable, of its OffsetFetch, not of the
    epochs). One that never read after its OffsetFetch was refused so is `CommittedOffsetsNeverFetched`.

    Premise: the target's own Metadata (the answers after the `stale` ones the proxy edited) reaches the
    committed epoch. A consumer is to wait for that, so where the target answered it again and never
    with that epoch (a broker without leader epochs: LeaderEpoch -1), what it read or did not read
    judges nothing of it: "target refused the premise", those answers the evidence."""
    client = run.client
    require_ruled(run, "Metadata", run.stale, METADATA_WITH_EPOCH, "leader epochs in Metadata (v7+, KIP-320)")
    own = [m for m in run.learned if m.source == METADATA][run.stale:]
    if own and not any(m.epoch >= run.committed.epoch and m.error == "NONE" for m in own):
        raise TargetRefused(
            f"the target's own Metadata answers to {client} (after the {run.stale} shown behind) never reached the "
            f"committed epoch {run.committed.epoch}: {metadata_answers(own)}; a consumer waits for its metadata to "
            f"reach that epoch (KIP-320 \"Consumer Handling\", extension 2), so it cannot be judged on reading on")
    early = [v for v in run.validations if v.leader_epoch > v.current >= 0]
    committed = f"({run.committed.offset}, epoch {run.committed.epoch})"
    assert not early, (
        f"{client} validated the committed epoch {run.committed.epoch} before its metadata reached it: "
        f"OffsetsForLeaderEpoch {early[:3]} (the answers show what the broker made of it); it then read "
        f"{_reads(run.reads)} and reported {reported(run.errors)}")
    # A coordinator error of the group's OffsetFetch is not this promise's; never asking again after one is
    # a client's stall, told apart before what it read is judged.
    require_committed_offsets_fetched(_named(run), run.errors, len(run.reads), run.incomplete or "")
    judged = judged_errors(run.errors)
    assert not judged, f"{client} reported {reported(judged)} starting from the commit {committed}"
    got = [(r.offset, r.value) for r in run.reads]
    want = [(w.offset, w.value) for w in run.written]
    assert got == want, (
        f"{client} read {_reads(run.reads)} from the commit {committed}, expected offsets "
        f"{want[0][0]}..{want[-1][0]}{'; ' + run.incomplete if run.incomplete else ''}")


def assert_first_fetch_uses_the_reset_epoch(run: ResetFetch) -> None:
    """KIP-320 "Consumer Handling", extension 1 and "Proposed Changes": ListOffsets returns the epoch of
    the offset it finds, and "the consumer will use this in its first fetch request after resetting
    offsets", so that a stale leader answers UNKNOWN_LEADER_EPOCH instead of serving it. The first
    Fetch after the reset asks for the offset ListOffsets returned, fenced at an epoch no older than
    the one it returned (never -1, which turns fencing off). Premise: the target returned an epoch with
    the offset (else "target refused the premise"; a ListOffsets version without the field is "not
    supported by this client")."""
    require_answers_readable(run.client, run.errors)
    client, reset = run.client, run.reset
    found = [a for a in run.list_offsets if a.error == "NONE" and a.resets_to(reset)]
    if not found:
        raise TargetRefused(
            f"{client} ({reset}) got no ListOffsets answer without an error for the partition at its policy's "
            f"timestamp, so it never reset by it: {list(run.list_offsets[:3])}; it reported {reported(run.errors)}; "
            f"{run.incomplete or ''}; its exchanges through the proxy: {list(run.sent[-40:]) or 'none'}")
    answer = found[0]
    # The epoch the first Fetch is held to is the target's to give: without one, the client's Fetch
    # has nothing to carry but what Metadata told it, and that is another check's promise.
    if answer.epoch < 0 and answer.version < LIST_OFFSETS_WITH_EPOCH:
        raise ClientLacks(run.version or client, "the leader epoch ListOffsets returns (v4+, KIP-320)",
                          f"its reset asked ListOffsets v{answer.version}, which has no LeaderEpoch")
    if answer.epoch < 0:
        raise TargetRefused(
            f"{client} ({reset}): ListOffsets v{answer.version} returned offset {answer.offset} with LeaderEpoch "
            f"{answer.epoch}, no epoch for the first Fetch after the reset to carry (KIP-320 \"Consumer Handling\", "
            f"extension 1: ListOffsets returns the epoch of the offset); partition epoch {run.epoch}")
    after = run.fetches[answer.fetches_before:]
    assert after, (f"{client} ({reset}) sent no Fetch after the reset to {answer}; errors {reported(run.errors)}; "
                   f"{run.incomplete or ''}")
    first = after[0]
    assert first.offset == answer.offset and first.current >= answer.epoch, (
        f"{client} ({reset}): ListOffsets v{answer.version} returned offset {answer.offset} at epoch "
        f"{answer.epoch} (partition epoch {run.epoch}); the first Fetch after it asked for offset "
        f"{first.offset} with CurrentLeaderEpoch {first.current} (v{first.version})")


def require_fetch_fencing(run: EpochErrorRun | FetchEpochRun | ResetAheadRun, epochs: Sequence[int], what: str) -> None:
    """KIP-320 "Consumer Handling": "The consumer will obtain the current leader epoch using the Metadata
    API" and fences its Fetches with it. A consumer whose Fetch partition entries (`epochs`, `what` says
    which) all carried CurrentLeaderEpoch -1 fenced none of them. A release of its stack from the first
    one that fences Fetch on (harness.clients.kip320_releases, recorded as `run.release`) breaks the
    promise: a FAIL naming that release and its evidence. Only an older release is "not supported by
    this client", with its release and the same evidence. Nothing happens when any entry carried an
    epoch, or when there were none."""
    if not epochs or any(e >= 0 for e in epochs):
        return
    field = "CurrentLeaderEpoch in Fetch (KIP-320 fencing)"
    carried = f"its {len(epochs)} {what} carried {sorted(set(epochs))}"
    release = run.release
    fences = None if release is None else release.fences()
    if release is None or fences is None:
        raise SceneUnmet(f"{run.client}'s release is unknown ({release.named if release else 'no release recorded'}), "
                         f"so {carried} cannot be judged against the first release that fences Fetch")
    since = release.fences_fetch
    if fences:
        raise AssertionError(
            f"KIP-320 \"Consumer Handling\": {release.named} ({since.product} {release.release}) fenced none of its "
            f"Fetches: {carried}, though {since.product} sends the leader epoch from Metadata in Fetch since "
            f"{since.release} ({since.evidence})")
    raise ClientLacks(release.named or run.client, field,
                      f"{since.product} {release.release} predates {since.release}, the first release that sends it "
                      f"({since.evidence}); {carried}")
