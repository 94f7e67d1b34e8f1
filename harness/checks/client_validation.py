"""When a consumer validates its position, judged by what it asked on the wire and read
(harness.scenarios.client_validation).

- `assert_undefined_epoch_resets_by_policy`: KIP-320 "Consumer Handling" (the reset policy paragraph):
  "In some edge scenarios, it may not be possible to find this offset precisely and we still have
  to resort to the reset policy." A position validated against an OffsetsForLeaderEpoch answer of
  UNDEFINED_EPOCH_OFFSET (leader epoch -1, end offset -1) is reset by auto.offset.reset: earliest
  to the log start, latest to the log end, as the leader answered them before; with no policy the
  consumer reports an error and reads nothing.
- `assert_validation_error_retried`: KIP-320 "Protocol Changes / OffsetsForLeaderEpoch": "If the
  current leader epoch does not match that of the leader, then we will send either FENCED_REPLICA or
  UNKNOWN_LEADER_EPOCH as we do for the Fetch API", errors the KIP calls retriable (FencedLeaderEpoch-
  and UnknownLeaderEpochException extend RetriableException: "the consumer will internally retry
  when it receives this error"). A validation answered with one of them and no offset is sent again
  until it is answered: the consumer fetches nothing before an answer without error (it reads no
  unvalidated data), does not reset (no ListOffsets, no move to the log start although its policy
  is earliest), reports nothing, and once validated reads from the position sought, each record once.
- `assert_seek_without_epoch_skips_validation`: KIP-320 "Public Interfaces", seek(TopicPartition,
  OffsetAndMetadata): "If a leader epoch has been provided, then in the next call to poll(), the
  consumer will use the OffsetForLeaderEpoch API to check for truncation". A position set without
  one is not validated: no OffsetsForLeaderEpoch about the partition before the consumer fetches,
  and it reads from exactly that offset. A control positioned with an epoch beside it must have
  sent one, so that the check cannot pass on traffic the proxy missed.
"""

from __future__ import annotations

from harness.errors import ClientLacks, SceneUnmet, TargetRefused, require_scene
from harness.histories.kip320_clients import (
    FETCH,
    LIST_OFFSETS,
    VALIDATION,
    ConsumerRun,
    PartitionAsk,
    UndefinedEpochRun,
    UnvalidatedSeekRun,
    ValidationErrorRun,
    WrittenPartition,
)
from harness.histories.observations import Read

EARLIEST, LATEST = "earliest", "latest"


def _asks(asks: list[PartitionAsk] | tuple[PartitionAsk, ...], n: int = 8) -> str:
    if not asks:
        return "none"
    shown = "; ".join(str(a) for a in asks[:n])
    return shown + (f" (and {len(asks) - n} more)" if len(asks) > n else "")


def _reads(reads: tuple[Read, ...]) -> str:
    if not reads:
        return "nothing"
    return f"{len(reads)} records, offsets {reads[0].offset}..{reads[-1].offset}"


def _errors(consumer: ConsumerRun) -> str:
    return "; ".join(str(e) for e in consumer.errors[:2]) or "nothing"


def require_validated(client: str, version: str | None, consumer: ConsumerRun, exchanges: tuple[str, ...],
                      incomplete: str | None) -> None:
    """The premise of a scene whose proxy rewrites OffsetsForLeaderEpoch answers: the rule acted on at
    least one answer to `consumer`. Where it did not: a consumer its driver could not set up (an API
    the client version lacks: "not supported by this client"; else the harness's error); one that
    never asked the target about the partition (the target refused the premise, every exchange the
    evidence); one that fetched without ever validating its position with an epoch ("not supported
    by this client": the seek-with-epoch check judges that); one whose validations went unanswered
    (the target refused); else the harness's rule missed them (an error)."""
    if any(a.ruled for a in consumer.of(VALIDATION)):
        return
    who = version or client
    lacking = [r for r in consumer.refused if r.get("lacks")]
    if lacking:
        r = lacking[0]
        raise ClientLacks(who, f"the API behind `{r.get('command')}`", f"{r.get('exception')}: {r.get('message')}")
    if consumer.refused:
        raise SceneUnmet(f"{client}'s driver could not set {consumer.name} up: {[str(r) for r in consumer.refused]}")
    seen = (f"it reported {_errors(consumer)}; {incomplete or ''} its exchanges through the proxy: "
            f"{list(exchanges[:30]) or 'none: it never reached the proxy'}")
    if not consumer.asks:
        raise TargetRefused(f"{client} {consumer.name} never asked the target about the partition; {seen}")
    validations = consumer.of(VALIDATION)
    if not validations:
        raise ClientLacks(who, "OffsetsForLeaderEpoch validation of a position sought with a leader epoch",
                          f"{consumer.name} asked {_asks(consumer.asks)} and read {_reads(consumer.reads)}")
    if all(v.error == "no answer" for v in validations):
        raise TargetRefused(f"the target answered none of {client} {consumer.name}'s OffsetForLeaderEpoch "
                            f"requests: {_asks(validations)}; {seen}")
    raise SceneUnmet(f"the proxy's rule acted on none of {client} {consumer.name}'s OffsetForLeaderEpoch answers: "
                     f"{_asks(validations)}")


def _values(partition: WrittenPartition, start: int) -> list[tuple[int, str]]:
    return [(o, v) for o, v in partition.records if o >= start]


def _got(consumer: ConsumerRun) -> list[tuple[int, str]]:
    return [(r.offset, r.value.decode()) for r in consumer.reads]


def _reads_from_sought(consumer: ConsumerRun, partition: WrittenPartition, sought: int, expected: str, scene: str,
                       evidence: str) -> None:
    """How both checks of a position kept end: the consumer's first Fetch asked for `sought` (`expected`
    names it in the check's words), and it read every record from there, once each, reporting nothing."""
    fetches = consumer.of(FETCH)
    assert fetches and fetches[0].asked == sought, (
        f"{scene}: its first Fetch asked for {fetches[0].asked if fetches else 'nothing (it sent none)'}, expected "
        f"{expected}; {evidence}")
    want = _values(partition, sought)
    assert _got(consumer) == want and not consumer.errors, (
        f"{scene}: it must read offsets {want[0][0]}..{want[-1][0]} once each and report nothing; {evidence}")


def assert_undefined_epoch_resets_by_policy(run: UndefinedEpochRun) -> None:
    """See the module: earliest resumes at the log start and reads every record from there, latest
    fetches from the log end and reads nothing, no policy reports an error and reads nothing."""
    c, p = run.consumer, run.partition
    require_validated(run.client, run.version, c, run.exchanges, run.incomplete)
    require_scene(p.log_start < run.sought < p.log_end - 1,
                  f"the consumer was sought to {run.sought}, not strictly inside the log [{p.log_start}, {p.log_end})")
    ruled = next(a for a in c.asks if a.ruled)
    scene = (f"{run.client} ({run.version or 'version unknown'}), auto.offset.reset {run.reset}, sought "
             f"({run.sought}, epoch {run.sought_epoch}) in {p.topic}-0 [{p.log_start}, {p.log_end}); "
             f"its validation {ruled} (KIP-320 \"Consumer Handling\": the offset cannot be found, \"we still have "
             f"to resort to the reset policy\")")
    evidence = (f"it asked {_asks(c.asks)}; read {_reads(c.reads)}; reported {_errors(c)}"
                + (f"; {run.incomplete}" if run.incomplete else ""))
    if run.no_reset:
        assert c.errors and not c.reads, (
            f"{scene}: with no reset policy it must report an error and read nothing, not read on from "
            f"{run.sought}; {evidence}")
        return
    target = p.log_start if run.reset == EARLIEST else p.log_end
    where = "log start" if run.reset == EARLIEST else "log end"
    fetches = c.after_first_ruled(FETCH)
    assert fetches and fetches[0].asked == target, (
        f"{scene}: the first Fetch after that answer asked for "
        f"{fetches[0].asked if fetches else 'nothing (it sent none)'}, expected the {where} {target}; {evidence}")
    want = _values(p, target)
    assert _got(c) == want, (
        f"{scene}: reset to the {where} {target} it must read "
        f"{'nothing' if not want else f'offsets {want[0][0]}..{want[-1][0]} once each'}; {evidence}")


def assert_validation_error_retried(run: ValidationErrorRun) -> None:
    """See the module: after the answers carrying the error, a validation answered without error and
    before it no Fetch; no ListOffsets from the first error on; the first Fetch asks for the offset
    sought; the consumer reads from there, each record once, and reports nothing."""
    c, p = run.consumer, run.partition
    require_validated(run.client, run.version, c, run.exchanges, run.incomplete)
    require_scene(p.log_start < run.sought < p.log_end - 1,
                  f"the consumer was sought to {run.sought}, not strictly inside the log [{p.log_start}, {p.log_end})")
    ruled = [a for a in c.asks if a.ruled]
    require_scene(all(a.api == VALIDATION and a.error == run.error and a.offset == -1 for a in ruled),
                  f"the proxy's rules were to answer OffsetsForLeaderEpoch with {run.error} and no offset, and "
                  f"answered {_asks(ruled)}")
    first = next(i for i, a in enumerate(c.asks) if a.ruled)
    validated = next((i for i, a in enumerate(c.asks) if i > first and a.api == VALIDATION and a.error == "NONE"
                      and not a.ruled), None)
    scene = (f"{run.client} ({run.version or 'version unknown'}), auto.offset.reset earliest, sought "
             f"({run.sought}, epoch {run.sought_epoch}) in {p.topic}-0 [{p.log_start}, {p.log_end}); the first "
             f"{run.errored} OffsetsForLeaderEpoch answers {run.error} with no offset, the next ones the broker's "
             f"(KIP-320 \"Protocol Changes / OffsetsForLeaderEpoch\": an error the KIP calls retriable, \"the "
             f"consumer will internally retry when it receives this error\")")
    evidence = (f"it asked {_asks(c.asks, 12)}; read {_reads(c.reads)}; reported {_errors(c)}"
                + (f"; {run.incomplete}" if run.incomplete else ""))
    assert validated is not None, (
        f"{scene}: it did not validate the position again until an answer without error came "
        f"({len(ruled)} answered {run.error}); {evidence}")
    unvalidated = [a for a in c.asks[:validated] if a.api == FETCH]
    assert not unvalidated, (
        f"{scene}: it fetched before a validation was answered without error: {_asks(unvalidated)}; {evidence}")
    resets = [a for a in c.asks[first:] if a.api == LIST_OFFSETS]
    assert not resets, (
        f"{scene}: it reset the position (ListOffsets) instead of validating again: {_asks(resets)}; {evidence}")
    _reads_from_sought(c, p, run.sought, f"the offset sought {run.sought}", scene, evidence)


def assert_seek_without_epoch_skips_validation(run: UnvalidatedSeekRun) -> None:
    """See the module. The control (seek with an epoch) validated, so the proxy sees validations;
    the plain consumer sent no OffsetsForLeaderEpoch about the partition before its first Fetch, which
    asked for the offset sought, and it read every record from there, once each, reporting nothing."""
    require_validated(run.client, run.version, run.control, run.exchanges, run.incomplete)
    plain, p = run.plain, run.partition
    require_scene(p.log_start <= run.diverged_at < run.sought < p.log_end,
                  f"the rewritten answers end the epoch at {run.diverged_at}, which must be below the offset sought "
                  f"{run.sought}, inside the log [{p.log_start}, {p.log_end})")
    if plain.refused:
        raise SceneUnmet(f"{run.client}'s driver could not set the plain consumer up: "
                         f"{[str(r) for r in plain.refused]}")
    first_fetch = next((i for i, a in enumerate(plain.asks) if a.api == FETCH), len(plain.asks))
    early = [a for a in plain.asks[:first_fetch] if a.api == VALIDATION]
    control = next(a for a in run.control.asks if a.ruled)
    scene = (f"{run.client} ({run.version or 'version unknown'}): seek({run.sought}) without an epoch, beside a "
             f"control seek({run.sought}, epoch {run.sought_epoch}) that validated ({control}); every "
             f"OffsetsForLeaderEpoch answer ends the epoch at {run.diverged_at} (KIP-320 \"Public Interfaces\", "
             f"seek(TopicPartition, OffsetAndMetadata): only a position with a leader epoch is checked)")
    evidence = (f"the plain consumer asked {_asks(plain.asks)}; read {_reads(plain.reads)}; reported "
                f"{_errors(plain)}" + (f"; {run.incomplete}" if run.incomplete else ""))
    assert not early, f"{scene}: it validated the position without an epoch before fetching: {_asks(early)}; {evidence}"
    _reads_from_sought(plain, p, run.sought, f"exactly the offset sought, {run.sought}", scene, evidence)
