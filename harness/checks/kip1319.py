"""KIP-1319: TxnOffsetCommit v6 by topic ID, its errors, the topic ID it persists, and the client's version choice.

The rules (KIP-1319, "TxnOffsetCommit v6"; Apache Kafka 4.4.0 is the first release with it):
- "Public Interfaces": TxnOffsetCommit validVersions 0-6. A v6 request names each topic by TopicId
  only (Name is in versions 0-5), and "the response mirrors the request": keyed by TopicId.
- "Proposed Changes > Broker-Side > Topic ID resolution": the per-partition error, in this order:
  a TopicId the broker cannot resolve gets UNKNOWN_TOPIC_ID for every partition of that topic;
  else a topic the client may not read gets TOPIC_AUTHORIZATION_FAILED for every partition (a
  missing one included); else a partition that does not exist gets UNKNOWN_TOPIC_OR_PARTITION, for
  that partition only. Each topic is answered on its own.
- "... > Error mapping": v6 returns GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH directly; v0-5 keep
  mapping both to ILLEGAL_GENERATION.
- "... > Persisting topic IDs" and "Compatibility > Rolling upgrades": the OffsetCommitValue v4
  topicId tagged field holds the real topic ID on a KIP-1319 broker, ZERO_UUID on older brokers.
- "Compatibility > Version negotiation": v0-4 need no Transaction V2, v5 and v6 need it; a broker
  without v6 negotiates a lower version.
- "Proposed Changes > Producer-Side": the producer uses v6 when the broker allows it and every
  topic of the offset map has a topic ID, else v5 for the whole request ("Fallback");
  UNKNOWN_TOPIC_ID is retriable (the partition stays pending, the request is sent again);
  GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH are abortable (the application aborts).

What is judged are the histories of harness.histories.kip1319 (`Advertised`, `Features`,
`TxnCommit`, `GroupErrorAnswers`, `StaleEpochAnswers`, `PersistedCommit`, `ClientRun`), live or as
recorded in tests/checks/data. Every function raises `AssertionError` whose message carries the
evidence (error names with codes, the exchanges).
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence

from harness.errors import require_scene
from harness.histories.kip1319 import (
    Advertised,
    ClientRun,
    Features,
    GroupErrorAnswers,
    PersistedCommit,
    PersistedOffset,
    StaleEpochAnswers,
    TopicFact,
    TxnCommit,
)
from harness.histories.observations import Body, ClientEvent, ObservedExchange
from harness.protocol.errors import describe, error_code, error_name
from harness.protocol.types import ZERO_UUID

V6 = 6  # TxnOffsetCommit v6 is KIP-1319
PRE_KIP_MAX = 5  # before KIP-1319 brokers top out at v5 (KIP-890's Transaction V2)
# Answers a client retries on its own: a transaction still completing, a coordinator loading or moving,
# and (KIP-1319, "Proposed Changes > Producer-Side") "UNKNOWN_TOPIC_ID is treated as a retriable error
# consistent with UNKNOWN_TOPIC_OR_PARTITION": a coordinator whose metadata cache lags a new topic.
TRANSIENT = frozenset(error_code(n) for n in (
    "NONE", "CONCURRENT_TRANSACTIONS", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR",
    "UNKNOWN_TOPIC_ID", "UNKNOWN_TOPIC_OR_PARTITION",
))

Key = tuple[uuid.UUID | str | None, int]  # (TopicId, or Name below v6; partition)


class OlderVersionSent(AssertionError):
    """A client sent TxnOffsetCommit below v6 to a broker that advertises v6: the one assertion a
    known client gap may cover (any other failure of the same check is a failure)."""


# -- reading exchanges ------------------------------------------------------------------------

def _topic_key(t: Body) -> uuid.UUID | str | None:
    return t["TopicId"] if "TopicId" in t else t.get("Name")


def _topics(ex: ObservedExchange | None, side: str) -> list[Body]:
    body = None if ex is None else ex.request if side == "request" else ex.response
    return list((body or {}).get("Topics") or [])


def requested(ex: ObservedExchange) -> list[Key]:
    """(topic key, partition) of every partition the request names, in request order."""
    return [(_topic_key(t), p["PartitionIndex"]) for t in _topics(ex, "request") for p in t["Partitions"]]


def answered(ex: ObservedExchange) -> list[tuple[Key, int]]:
    """((topic key, partition), error code) of every partition the response answers."""
    return [((_topic_key(t), p["PartitionIndex"]), p["ErrorCode"]) for t in _topics(ex, "response")
            for p in t["Partitions"]]


def _name_key(t: Body) -> str:
    keys = [f"{k} {t[k]}" for k in ("Name", "TopicId") if k in t]
    return ", ".join(keys) or "no topic key"


def _pk(key: Key) -> str:
    return f"{key[0]} partition {key[1]}"


def dump_commit(commit: TxnCommit) -> str:
    """The commit's judged (last) exchange, after the retriable answers it replaced, if any."""
    before = [f"answer #{i}, retried as a client does:\n{dump_exchange(r)}" for i, r in enumerate(commit.retried)]
    return "\n".join([*before, ("the answer judged:\n" if before else "") + dump_exchange(commit.exchange)])


def dump_exchange(ex: ObservedExchange) -> str:
    """One exchange in readable form: the request's group and offsets, the response's errors."""
    req = ex.request or {}
    head = f"{ex.api} v{ex.version}"
    if "GroupId" in req:
        generation = req.get("GenerationIdOrMemberEpoch", req.get("GenerationId"))
        head += f" group {req['GroupId']!r} generation/epoch {generation} member {req.get('MemberId')!r}"
    if ex.outcome:
        head += f": {ex.outcome}"
    if ex.rules:
        head += f" (proxy rules: {', '.join(ex.rules)})"
    lines = [head]
    for t in _topics(ex, "request"):
        parts = ", ".join(f"p{p['PartitionIndex']} offset {p.get('CommittedOffset')} epoch "
                          f"{p.get('CommittedLeaderEpoch')}" for p in t["Partitions"])
        lines.append(f"  -> {_name_key(t)}: {parts}")
    if ex.response is None:
        lines.append("  <- no response")
    for t in _topics(ex, "response"):
        parts = ", ".join(f"p{p['PartitionIndex']} {describe(p['ErrorCode'])}" for p in t["Partitions"])
        lines.append(f"  <- {_name_key(t)}: {parts}")
    return "\n".join(lines)


def _dump_all(exchanges: Sequence[ObservedExchange], limit: int = 10) -> str:
    shown = [dump_exchange(e) for e in exchanges[-limit:]]
    more = f"(last {limit} of {len(exchanges)})\n" if len(exchanges) > limit else ""
    return more + "\n".join(shown) if shown else "no TxnOffsetCommit exchanges"


def partition_problems(ex: ObservedExchange, expected: Mapping[Key, tuple[str, str]]) -> list[str]:
    """What differs between the answer and `expected` ({key: (error name, why)}): wrong codes,
    partitions answered twice, answered without being asked, asked and not answered."""
    got = answered(ex)
    counts = Counter(k for k, _ in got)
    # Each line names the API that answered, so that one wrong answer is one defect across checks.
    api = f"{ex.api} v{ex.version} "
    wrong = []
    for key, code in got:
        if key not in expected:
            wrong.append(f"{api}{_pk(key)} answered {describe(code)} but was not in the request")
        elif counts[key] > 1:
            wrong.append(f"{api}{_pk(key)} answered {counts[key]} times")
        else:
            want, why = expected[key]
            if error_name(code) != want:
                wrong.append(f"{api}{_pk(key)}: {describe(code)}, expected {describe(error_code(want))} ({why})")
    wrong += [f"{api}{_pk(key)} was in the request but not answered" for key in expected if key not in counts]
    return list(dict.fromkeys(wrong))


def fail_if(wrong: list[str], what: str, evidence: str) -> None:
    """Raise with every problem found, one a line, then the evidence."""
    if wrong:
        raise AssertionError(f"{what}:\n  " + "\n  ".join(wrong) + f"\n{evidence}")


# -- the broker: versions, keys, errors --------------------------------------------------------

def assert_advertises_v6(advertised: Advertised) -> None:
    """"Public Interfaces": the broker's ApiVersions range for TxnOffsetCommit includes v6."""
    assert advertised.supports(V6), (
        f"{advertised.describe()}: KIP-1319 makes TxnOffsetCommit validVersions 0-{V6}"
    )


def assert_tops_out_at_v5(advertised: Advertised, release: str) -> None:
    """A release before KIP-1319 advertises TxnOffsetCommit up to v5 (Transaction V2) and not v6."""
    found = advertised.versions
    assert found is not None and found[1] == PRE_KIP_MAX, (
        f"Kafka {release}: {advertised.describe()}; a release before KIP-1319 tops out at v{PRE_KIP_MAX}"
    )


def assert_keyed_by_topic_id(commit: TxnCommit) -> None:
    """A v6 request names its topics by TopicId only, and its response answers keyed by those
    TopicIds, with no Name on the wire ("Public Interfaces", request and response v6)."""
    ex = commit.exchange
    wrong = []
    if ex.version != V6:
        wrong.append(f"the exchange is v{ex.version}, not v{V6}")
    sent = [t for t in _topics(ex, "request")]
    if not sent or any("TopicId" not in t or "Name" in t for t in sent):
        wrong.append(f"the request names its topics as {[_name_key(t) for t in sent]}, not by TopicId only")
    got = _topics(ex, "response")
    for t in got:
        if set(t) != {"TopicId", "Partitions"}:
            wrong.append(f"a response topic has fields {sorted(t)}, not TopicId and Partitions only")
    sent_ids = sorted(str(t.get("TopicId")) for t in sent)
    got_ids = sorted(str(t.get("TopicId")) for t in got)
    if got_ids != sent_ids:
        wrong.append(f"the response answers TopicIds {got_ids}, the request named {sent_ids}")
    fail_if(wrong, "the v6 response is not keyed by the request's TopicId", dump_commit(commit))


def assert_commit_accepted(commit: TxnCommit) -> None:
    """Every partition of the commit is answered once, with NONE (0)."""
    ex = commit.exchange
    expected = {k: ("NONE", "the commit must succeed") for k in requested(ex)}
    fail_if(partition_problems(ex, expected), f"the commit of group {commit.group!r} was not accepted",
            dump_commit(commit))


def expected_precedence(topics: Sequence[TopicFact], key: Key) -> tuple[str, str]:
    """The error KIP-1319's order gives one requested partition, and which rule gives it."""
    fact = next((f for f in topics if f.topic_id == key[0]), None)
    if fact is None or not fact.exists:
        return "UNKNOWN_TOPIC_ID", "first rule: the TopicId cannot be resolved, so every partition of that topic"
    if not fact.authorized:
        return "TOPIC_AUTHORIZATION_FAILED", (
            f"second rule: {fact.name} is not authorized, so every partition, even one that does not exist")
    if key[1] >= fact.partitions:
        return "UNKNOWN_TOPIC_OR_PARTITION", f"third rule: {fact.name} has {fact.partitions} partitions"
    return "NONE", f"{fact.name} is known and authorized and has this partition"


def assert_error_precedence(commit: TxnCommit) -> None:
    """Each partition of a v6 commit gets the error of the first rule that applies to its topic
    (unknown TopicId, then authorization, then a missing partition), and no topic's error reaches
    another topic ("Proposed Changes > Broker-Side > Topic ID resolution")."""
    ex = commit.exchange
    assert ex.version == V6, f"the precedence rules are v{V6}'s; the exchange is v{ex.version}"
    expected = {k: expected_precedence(commit.topics, k) for k in requested(ex)}
    context = f"\n{commit.context}" if commit.context else ""
    fail_if(partition_problems(ex, expected), "partition errors break KIP-1319's error precedence",
            dump_commit(commit) + context)


def generation(ex: ObservedExchange) -> int | None:
    """The generation (classic group) or member epoch (consumer group) a membership commit carries."""
    req = ex.request or {}
    found = req.get("GenerationIdOrMemberEpoch", req.get("GenerationId"))
    return None if found is None else int(found)


def mapping_problems(answers: GroupErrorAnswers, error: str) -> list[str]:
    """What breaks "v6 returns `error`, v0-5 ILLEGAL_GENERATION" in the answers to one commit."""
    v6, v5 = answers.v6, answers.v5
    wrong = []
    if (v6.version, v5.version) != (V6, 5):
        wrong.append(f"the exchanges are v{v6.version} and v{v5.version}, not v{V6} and v5")
    same = [(k, v6.request.get(k), v5.request.get(k)) for k in ("GroupId", "MemberId")]
    same.append(("generation/epoch", generation(v6), generation(v5)))
    wrong += [f"the v6 and v5 requests differ in {k}: {a!r} and {b!r}" for k, a, b in same if a != b]
    wrong += [f"v6 {w}" for w in partition_problems(
        v6, {k: (error, "v6 returns it directly") for k in requested(v6)})]
    for name, ex in answers.all()[1:]:
        wrong += [f"{name} {w}" for w in partition_problems(
            ex, {k: ("ILLEGAL_GENERATION", "v0-5 keep mapping it to ILLEGAL_GENERATION") for k in requested(ex)})]
    return wrong


def assert_group_error_mapping(answers: GroupErrorAnswers, error: str) -> None:
    """The same commit answers `error` (GROUP_ID_NOT_FOUND or STALE_MEMBER_EPOCH) for every
    partition at v6 and ILLEGAL_GENERATION at v5 ("Proposed Changes > Broker-Side > Error mapping")."""
    fail_if(mapping_problems(answers, error), f"v6 must return {error}, v0-5 ILLEGAL_GENERATION",
            "\n".join(dump_exchange(ex) for _, ex in answers.all()))


def stale_and_current_problems(
    stale: GroupErrorAnswers, current: GroupErrorAnswers, at: int, unit: str, stale_error: str
) -> list[str]:
    """What is wrong with one group's commits at the `unit` (epoch or generation) before `at` and
    at `at`: the stale ones must carry `at` - 1 and answer `stale_error` at v6, ILLEGAL_GENERATION
    at v5; the current ones must carry `at` and commit at both."""
    wrong = []
    for name, rec, want in (("stale", stale, at - 1), ("current", current, at)):
        sent = {generation(rec.v6), generation(rec.v5)}
        if sent != {want}:
            wrong.append(f"the {name} commits carry {unit}(s) {sorted(sent, key=str)}, not {want}")
    wrong += [f"stale {w}" for w in mapping_problems(stale, stale_error)]
    for v, ex in current.all():
        wrong += [f"current {v} {w}" for w in partition_problems(
            ex, {k: ("NONE", f"the member's current {unit} commits") for k in requested(ex)})]
    return wrong


def assert_stale_epoch_mapping(answers: StaleEpochAnswers) -> None:
    """In a consumer-protocol group, the member's previous epoch gets STALE_MEMBER_EPOCH at v6 and
    ILLEGAL_GENERATION at v5, and its current epoch commits at both: the epoch alone decides."""
    epoch, stale, current = answers.member_epoch, answers.stale, answers.current
    wrong = []
    if epoch < 2:
        wrong.append(f"member {answers.member_id} did not move past its first epoch: {epoch}")
    wrong += stale_and_current_problems(stale, current, epoch, "epoch", "STALE_MEMBER_EPOCH")
    evidence = "\n".join(dump_exchange(ex) for r in (stale, current) for _, ex in r.all())
    fail_if(wrong, f"member epoch {epoch}: only the stale epoch may fail, as STALE_MEMBER_EPOCH on v6", evidence)


# -- what the broker persisted ------------------------------------------------------------------

def _persisted_problems(persisted: PersistedCommit) -> tuple[list[str], list[PersistedOffset]]:
    """Each committed partition's OffsetCommitValue, its offset and leader epoch as committed."""
    ex = persisted.commit.exchange
    by_partition = {e.partition: e for e in persisted.persisted}
    wrong, found = [], []
    for t in _topics(ex, "request"):
        for p in t["Partitions"]:
            entry = by_partition.get(p["PartitionIndex"])
            where = f"{persisted.commit.group}/{persisted.topic}-{p['PartitionIndex']}"
            if entry is None or entry.value is None:
                wrong.append(f"no OffsetCommit record for {where} in __consumer_offsets: {entry}")
                continue
            value = entry.value
            if (value.offset, value.leader_epoch) != (p["CommittedOffset"], p["CommittedLeaderEpoch"]):
                wrong.append(f"{where}: OffsetCommitValue v{entry.value_version} holds offset {value.offset} "
                             f"epoch {value.leader_epoch}, committed {p['CommittedOffset']} epoch "
                             f"{p['CommittedLeaderEpoch']}")
            found.append(entry)
    return wrong, found


def assert_persisted_topic_id(persisted: PersistedCommit) -> None:
    """After a committed v6 commit, the OffsetCommitValue (schema v4+) holds the topic's real ID in
    topicId, with the committed offset and leader epoch ("Persisting topic IDs")."""
    wrong, found = _persisted_problems(persisted)
    topic_id = persisted.topic_id
    if topic_id == ZERO_UUID:
        wrong.append(f"the topic's own ID is the zero UUID: nothing to tell apart from {ZERO_UUID}")
    for e in found:
        held = e.value.topic_id if e.value else None
        if e.value_version is None or e.value_version < 4:
            wrong.append(f"OffsetCommitValue v{e.value_version} at __consumer_offsets offset {e.offset_record}: "
                         "topicId is a field of v4+")
        elif held != topic_id:
            wrong.append(f"OffsetCommitValue v{e.value_version} at __consumer_offsets offset {e.offset_record} "
                         f"has topicId {held}, expected {topic_id} (zero would be {ZERO_UUID})")
    fail_if(wrong, "the persisted offset commit does not carry the real topic ID",
            f"{list(persisted.persisted)}\ncommit:\n{dump_commit(persisted.commit)}")


def assert_persisted_zero_topic_id(persisted: PersistedCommit, release: str) -> None:
    """On a broker without KIP-1319, the OffsetCommitValue's topicId is the zero UUID (or absent),
    with the committed offset and leader epoch ("Compatibility > Rolling upgrades")."""
    wrong, found = _persisted_problems(persisted)
    for e in found:
        held = e.value.topic_id if e.value else None
        if (held or ZERO_UUID) != ZERO_UUID:
            wrong.append(f"OffsetCommitValue v{e.value_version} written by Kafka {release} has topicId "
                         f"{held}, expected {ZERO_UUID}")
    fail_if(wrong, f"Kafka {release} must persist the zero topic ID",
            f"{list(persisted.persisted)}\ncommit:\n{dump_commit(persisted.commit)}")


def assert_offsets_fetched_back(rec: TxnCommit | ClientRun) -> None:
    """OffsetFetch returns each offset the commit carried (`asked`), with its leader epoch where
    one was given, and error NONE; nothing else."""
    assert rec.asked, "nothing was committed"
    fetched = {(f.topic, f.partition): f for f in rec.fetched}
    wrong = []
    for a in rec.asked:
        f = fetched.pop((a.topic, a.partition), None)
        epoch_ok = f is not None and (a.leader_epoch is None or f.leader_epoch == a.leader_epoch)
        if f is None or f.error != 0 or f.offset != a.offset or not epoch_ok:
            got = "nothing" if f is None else f"{describe(f.error)} offset {f.offset} epoch {f.leader_epoch}"
            wrong.append(f"{a.topic}-{a.partition}: committed offset {a.offset} epoch {a.leader_epoch}, "
                         f"OffsetFetch returned {got}")
    wrong += [f"{k[0]}-{k[1]}: OffsetFetch returned {f} for a partition not committed" for k, f in fetched.items()]
    evidence = dump_commit(rec) if isinstance(rec, TxnCommit) else _dump_all(rec.commits)
    if isinstance(rec, ClientRun) and rec.unsettled:
        evidence += f"\nthe group's offsets never settled: {rec.unsettled}"
    fail_if(wrong, f"the committed offsets of group {rec.group!r} do not read back", evidence)


# -- the client ---------------------------------------------------------------------------------

def _codes(ex: ObservedExchange) -> set[int]:
    return set(ex.codes())


def assert_transaction_outcome(run: ClientRun, outcome: str) -> None:
    """The driver exited 0 and reported `outcome` (committed, aborted, copied) as its end."""
    got = run.outcome()
    assert run.exit_code == 0 and got == outcome, (
        f"{run.client} ended {got!r} (exit {run.exit_code}), expected {outcome!r}: {run.driver}\n"
        f"{_dump_all(run.commits)}"
    )


def assert_injected(run: ClientRun, exactly: int | None = None, at_least: int = 1) -> None:
    """The proxy's fault acted as often as the situation needs (its premise held): `exactly` times,
    or as often as the rule was limited to, or else at least `at_least` times."""
    injected = run.injected
    fired = injected.fired if injected else 0
    exactly = exactly if exactly is not None else injected.limit if injected else None
    ok = fired == exactly if exactly is not None else fired >= at_least
    want = exactly if exactly is not None else f"at least {at_least}"
    assert ok, (f"the proxy's fault {injected.rule if injected else None} acted {fired} time(s), expected {want}: "
                f"{run.proxy}")


def assert_client_sends(run: ClientRun, version: int) -> None:
    """Every TxnOffsetCommit the client sent is at `version` and names the topics of its offsets:
    by TopicId at v6, by Name below ("Compatibility > Version negotiation", "Producer-Side")."""
    commits = run.commits
    by_id = version >= V6
    field = "TopicId" if by_id else "Name"
    want = sorted({str(a.topic_id if by_id else a.topic) for a in run.asked})
    assert commits, f"{run.client} sent no TxnOffsetCommit; {run.proxy}"
    wrong = []
    for i, c in enumerate(commits):
        topics = _topics(c, "request")
        keys = sorted(str(t.get(field)) for t in topics)
        if c.version != version:
            wrong.append(f"#{i} is v{c.version}")
        if keys != want or any(("TopicId" in t) != by_id or ("Name" in t) == by_id for t in topics):
            wrong.append(f"#{i} names {[_name_key(t) for t in topics]}")
    fail_if(wrong, f"{run.client} must send every TxnOffsetCommit at v{version} naming {want} by {field} "
            f"({run.broker.describe()})", _dump_all(commits))


def assert_only_transient_retries(run: ClientRun) -> None:
    """The last TxnOffsetCommit is accepted, and every earlier answer was one the client retries on
    its own (a transaction completing, a coordinator moving)."""
    codes = [_codes(c) for c in run.commits]
    wrong = []
    if not codes or codes[-1] != {0}:
        wrong.append(f"the last answer is {sorted(map(describe, codes[-1])) if codes else 'missing'}, not NONE(0)")
    wrong += [f"#{i} answered {sorted(map(describe, c - TRANSIENT))}" for i, c in enumerate(codes) if c - TRANSIENT]
    fail_if(wrong, f"{run.client}'s commits end accepted after transient answers only", _dump_all(run.commits))


def _fault(run: ClientRun) -> tuple[int, int]:
    """(the error the proxy's fault writes, how often it acted); the situation has one."""
    injected = run.injected
    require_scene(injected is not None and injected.error is not None,
                  f"the harness's proxy should answer {run.client}'s commits with an error; it had no such fault")
    assert injected is not None and injected.error is not None  # for the type checker: require_scene raised
    return injected.error, injected.fired


def assert_retried_unchanged(run: ClientRun, later_transactions: bool = False) -> None:
    """UNKNOWN_TOPIC_ID is retriable: after the injected answers the client sends the same v6
    request again until it is accepted; the retries change nothing in the request. With
    `later_transactions` (a copier), the commits after the first accepted one are later
    transactions' and only the ones up to it are judged; none of the driver's transactions may have
    aborted (a client that gives up and redoes the transaction did not retry)."""
    commits = list(run.commits)
    error, fired = _fault(run)
    if later_transactions:
        accepted = next((i for i, c in enumerate(commits) if _codes(c) == {0}), len(commits) - 1)
        commits = commits[:accepted + 1]
        aborted = [e.detail | {"event": e.event} for e in run.named("transaction_aborted")]
        fail_if([f"{len(aborted)} transaction(s) aborted: {aborted[:3]}"] if aborted else [],
                f"{run.client} must retry {describe(error)} within the transaction", _dump_all(run.commits))
    answers = [(c.version, _codes(c)) for c in commits]
    wrong = []
    if len(answers) <= fired:
        wrong.append(f"{len(answers)} TxnOffsetCommit(s) for {fired} injected answers: no retry was accepted")
    for i, (v, codes) in enumerate(answers):
        if i < fired and (v, codes) != (V6, {error}):
            wrong.append(f"#{i} (injected) is v{v} answered {sorted(map(describe, codes))}, not v6 {describe(error)}")
        elif i >= fired and (v != V6 or codes - TRANSIENT):
            wrong.append(f"#{i} (a retry) is v{v} answered {sorted(map(describe, codes))}")
    if answers and answers[-1] != (V6, {0}):
        wrong.append(f"the last answer is v{answers[-1][0]} {sorted(map(describe, answers[-1][1]))}, not v6 NONE(0)")
    first = commits[0].request if commits else None
    wrong += [f"#{i} differs from the first request (the retries changed the request)"
              for i, c in enumerate(commits) if c.request != first]
    fail_if(wrong, f"{run.client} must retry {describe(error)} with the same v6 request", _dump_all(commits))


def assert_mixed_answer_retried(run: ClientRun, failed_topic_id: uuid.UUID) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Response mapping" and "Error handling": with one
    topic answered UNKNOWN_TOPIC_ID and the other committed in the same v6 answer, the client
    correlates the answers with their topics by TopicId, keeps the failed topic's partition pending
    and re-enqueues the request (v6) until it is accepted. The KIP re-enqueues "the request": a retry
    may carry the committed topic again, but only with the offsets and epochs first asked."""
    commits = run.commits
    error, fired = _fault(run)
    wrong = []
    if not commits or len(commits) <= fired:
        wrong.append(f"{len(commits)} TxnOffsetCommit(s) for {fired} injected answers: no retry was accepted")
    else:
        def offsets(c: ObservedExchange) -> dict[tuple[uuid.UUID, int], tuple[int, int]]:
            return {(t["TopicId"], p["PartitionIndex"]): (p["CommittedOffset"], p["CommittedLeaderEpoch"])
                    for t in c.request["Topics"] for p in t["Partitions"]}

        first = offsets(commits[0])
        require_scene(len({k[0] for k in first}) >= 2 and any(k[0] == failed_topic_id for k in first),
                      f"the harness's transaction commits offsets of two topics, one of them {failed_topic_id}; "
                      f"{run.client}'s first TxnOffsetCommit names {sorted(map(str, {k[0] for k in first}))}")
        for i, c in enumerate(commits[1:], 1):
            mine = offsets(c)
            if c.version != V6 or not any(k[0] == failed_topic_id for k in mine):
                wrong.append(f"#{i} (a retry) is v{c.version} without the failed topic {failed_topic_id}")
            changed = {k: v for k, v in mine.items() if first.get(k) != v}
            if changed:
                wrong.append(f"#{i} (a retry) changed or added offsets: {changed}")
        if _codes(commits[-1]) != {0}:
            wrong.append(f"the last answer carries {sorted(map(describe, _codes(commits[-1])))}")
    fail_if(wrong, f"{run.client} must retry the partition answered {describe(error)} until it is accepted",
            _dump_all(commits))


def assert_aborted_without_retry(run: ClientRun) -> None:
    """GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH are abortable: one v6 TxnOffsetCommit (answered
    with the error, not retried), sendOffsetsToTransaction fails, the application aborts the
    transaction it had written to."""
    error, _ = _fault(run)
    commits = run.commits
    wrong = []
    answers = [(c.version, _codes(c)) for c in commits]
    if answers != [(V6, {error})]:
        wrong.append(f"TxnOffsetCommits {[(v, sorted(map(describe, c))) for v, c in answers]}, expected one v6 "
                     f"answered {describe(error)}: an abortable error must not be retried")
    if run.outcome() != "aborted" or run.exit_code != 0:
        wrong.append(f"the driver ended {run.outcome()!r} (exit {run.exit_code}), not 'aborted'")
    failures = run.named("transaction_failed")
    if len(failures) != 1:
        wrong.append(f"{len(failures)} transaction_failed events, expected 1: {_shown(failures)}")
    produced = run.named("produced")
    if not produced or not produced[0].get("offsets"):
        wrong.append(f"the transaction wrote nothing before the commit failed: {_shown(produced)}")
    fail_if(wrong, f"{run.client} must abort on {describe(error)}", f"{run.driver}\n{_dump_all(commits)}")


def _shown(events: Sequence[ClientEvent]) -> list[str]:
    return [str(e) for e in events]


def assert_nothing_visible(run: ClientRun) -> None:
    """After the abort nothing of the transaction is visible: read_committed sees none of its
    records and the group has no committed offset for the partitions it named."""
    failure = _shown(run.named("transaction_failed"))
    wrong = []
    if run.visible:
        wrong.append(f"aborted records visible to read_committed: {list(run.visible)}")
    wrong += [f"aborted offset commit visible: {f}" for f in run.fetched if f.offset != -1]
    fail_if(wrong, f"{run.client} aborted, yet its transaction shows", f"client said {failure}")


def _transaction_ends(run: ClientRun) -> list[ClientEvent]:
    """A copier's transaction_committed and transaction_aborted events, in order."""
    return run.named("transaction_committed", "transaction_aborted")


def assert_copier_aborted_without_retry(run: ClientRun) -> None:
    """A copier (one TxnOffsetCommit per transaction it ends) whose first commit got an abortable
    error: that transaction aborted, and the client sent no other TxnOffsetCommit in it, so there
    are as many commits as transactions ended ("Error handling": the application must abort)."""
    commits, error = run.commits, run.injected.error if run.injected else None
    ends = _transaction_ends(run)
    wrong = []
    require_scene(bool(commits) and _codes(commits[0]) == {error},
                  f"the proxy's fault should answer {run.client}'s first TxnOffsetCommit {describe(error)}; "
                  f"it answered {sorted(map(describe, _codes(commits[0]))) if commits else 'none'}")
    if not ends or ends[0].event != "transaction_aborted":
        wrong.append(f"the transaction whose commit got {describe(error)} ended {_shown(ends[:1])}, not aborted")
    if len(commits) != len(ends):
        wrong.append(f"{len(commits)} TxnOffsetCommit(s) for {len(ends)} transaction(s) ended: a retry within one")
    fail_if(wrong, f"{run.client} must abort on {describe(error)} without retrying", _dump_all(commits))


def assert_group_error_aborted(run: ClientRun) -> None:
    """"Error handling": GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH are abortable, so the transaction
    whose commit got one aborts without another TxnOffsetCommit in it and nothing of it shows. One
    transaction: sendOffsetsToTransaction fails, the application aborts, read_committed sees none of
    its records and the group no offset. A copier: it then redoes the transaction, so the copy ends
    "copied" and read_committed sees each value once."""
    if run.copier:
        assert_copier_aborted_without_retry(run)
        assert_transaction_outcome(run, "copied")
        assert_visible_to_read_committed(run)
    else:
        assert_aborted_without_retry(run)
        assert_nothing_visible(run)


def assert_failed_topic_named(run: ClientRun, failed_topic: str, committed_topic: str) -> None:
    """KIP-1319 "Producer-Side > Response mapping": a v6 answer names topics by TopicId only, and the
    client maps each answer back to its topic. One transaction committed offsets of both topics, the
    answer failed `failed_topic` alone: the error the client reports for that transaction names
    `failed_topic` and not `committed_topic`; the copy completes, read_committed seeing each value
    once (in any order: the copier interleaves its topics)."""
    commits, error = run.commits, run.injected.error if run.injected else None
    wrong = []
    first = commits[0] if commits else None
    named = sorted({str(t.get("TopicId")) for t in _topics(first, "request")}) if first else []
    require_scene(len(named) >= 2, f"the harness's copier fills each transaction from two topics; {run.client}'s "
                                   f"first TxnOffsetCommit names {named}")
    ends = _transaction_ends(run)
    reported = next((str(e.get("error", "")) for e in ends if e.event == "transaction_aborted"), None)
    if reported is None:
        wrong.append(f"no transaction reported the {describe(error)} answer: {_shown(ends[:3])}")
    elif not _names(reported, failed_topic) or _names(reported, committed_topic):
        wrong.append(f"the failed transaction reports {reported!r}: not {failed_topic} alone")
    if sorted(run.visible) != sorted(run.written):
        wrong.append(f"read_committed sees {len(run.visible)} value(s), the copy wrote {len(run.written)}")
    fail_if(wrong, f"{run.client} must map the {describe(error)} of {failed_topic} to that topic",
            _dump_all(commits))


def assert_mixed_answer_mapped(run: ClientRun) -> None:
    """"Response mapping": one v6 answer failed one topic of two (the proxy's fault names it) and
    committed the other; the client correlates each answer with its topic by TopicId. One
    transaction: it keeps the failed partition pending and retries it until accepted
    (`assert_mixed_answer_retried`). A copier: it reports the failure for the failed topic, by name,
    and not the other (`assert_failed_topic_named`)."""
    failed_id = run.injected.topic_id if run.injected else None
    require_scene(failed_id is not None and any(a.topic_id == failed_id for a in run.asked),
                  f"the proxy's fault should answer one topic of {run.client}'s offsets; it names {failed_id}")
    if not run.copier:
        assert failed_id is not None  # for the type checker: require_scene raised
        assert_mixed_answer_retried(run, failed_id)
        return
    failed = next(a.topic for a in run.asked if a.topic_id == failed_id)
    committed = next(a.topic for a in run.asked if a.topic_id != failed_id)
    assert_failed_topic_named(run, failed, committed)


def _names(text: str, topic: str) -> bool:
    """`text` names `topic` as a whole word (topic-1 is not in topic-10)."""
    return re.search(rf"(?<![\w-]){re.escape(topic)}(?![\w-])", text) is not None


def assert_visible_to_read_committed(run: ClientRun) -> None:
    """A read_committed consumer sees exactly what the committed transactions wrote, in order."""
    assert run.visible == run.written, (
        f"read_committed sees {len(run.visible)} value(s) {list(run.visible[:20])}, the committed transactions "
        f"wrote {len(run.written)}: {list(run.written[:20])}"
    )


def assert_topic_ids_assigned(run: ClientRun) -> None:
    """Every topic of the offsets has a real topic ID on the broker (KRaft assigns them), so that a
    topic without one is the proxy's doing."""
    zero = sorted({a.topic for a in run.asked if a.topic_id == ZERO_UUID})
    assert not zero, f"topics without a topic ID on the broker itself: {zero}; asked {list(run.asked)}"


def assert_transaction_version_finalized(features: Features, level: int) -> None:
    """The cluster reports transaction.version finalized at `level` (min and max) while its software
    supports a higher level (KIP-890 features, which "Version negotiation" rests on)."""
    finalized = next((f for f in features.finalized if f.name == "transaction.version"), None)
    supported = features.max_supported("transaction.version")
    evidence = f"{features.broker}: finalized {list(features.finalized)}; supported {list(features.supported)}"
    assert finalized is not None and (finalized.min_level, finalized.max_level) == (level, level), (
        f"transaction.version is not finalized at {level}: {evidence}")
    assert supported is not None and supported > level, (
        f"the broker software supports no transaction.version above {level}: {evidence}")


def assert_client_sends_v6(run: ClientRun) -> None:
    """A client calling sendOffsetsToTransaction against a broker that advertises v6 sends
    TxnOffsetCommit v6 (the version check of the client matrix). Sending none at all is a plain
    failure; sending an older version raises `OlderVersionSent`."""
    commits = run.commits
    assert commits, f"{run.client} sent no TxnOffsetCommit; {run.proxy}"
    versions = sorted({c.version for c in commits})
    if versions != [V6]:
        used = " ".join(f"{api}:v{v}" for api, v in run.api_versions)
        raise OlderVersionSent(f"{run.client} sent TxnOffsetCommit {versions}, not v6 ({run.broker.describe()}); "
                               f"used {used}\n{dump_exchange(commits[-1])}")


# What a bounded wait is given over max.block.ms: the producer checks its deadline between waits and
# returns after it, and a JVM on a loaded 2-core machine may pause; a second wait would take seconds.
BLOCK_MARGIN_MS = 1000
# The error a Java producer call ends with when max.block.ms runs out.
MAX_BLOCK_ERROR = "org.apache.kafka.common.errors.TimeoutException"


def assert_metadata_wait_bounded(run: ClientRun, margin_ms: int = BLOCK_MARGIN_MS) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Topic ID resolution" (the producer "waits for a
    refresh (bounded by max.block.ms) before building the request") and "Fallback": with the topic ID
    of the offset map's topic withheld, sendOffsetsToTransaction, timed by the driver's own clock, ends
    within max.block.ms (the driver's own setting) + `margin_ms`; having returned, the client sends the
    commit at v5 for the whole request (no v6 without the ID); having failed, it failed with the
    TimeoutException of max.block.ms."""
    init = run.named("initialized")
    timed = [e for e in run.named("offsets_sent", "transaction_failed") if e.get("send_offsets_ms") is not None]
    require_scene(bool(init and init[0].get("max_block_ms") is not None and timed),
                  f"the harness's {run.client} driver did not reach sendOffsetsToTransaction, or did not time it: "
                  f"{run.driver}")
    max_block, ended = init[0].get("max_block_ms"), timed[0]
    took = ended.get("send_offsets_ms")
    require_scene(isinstance(max_block, int) and isinstance(took, int),
                  f"the harness's driver reported times that are not integers: {init[0]}, {ended}")
    assert isinstance(max_block, int) and isinstance(took, int)  # for the type checker: required above
    assert took <= max_block + margin_ms, (
        f"{run.client}: sendOffsetsToTransaction took {took} ms while the topic ID was withheld, more than "
        f"max.block.ms {max_block} + {margin_ms} ms; it ended {ended}; {run.proxy}\n{_dump_all(run.commits)}")
    if ended.event == "transaction_failed":
        assert ended.get("error") == MAX_BLOCK_ERROR, (
            f"{run.client}: sendOffsetsToTransaction failed within the bound ({took} ms) with {ended.get('error')}: "
            f"{ended.get('message')}; neither the {MAX_BLOCK_ERROR} of max.block.ms nor a fallback to v5")
        return
    sent = [c.version for c in run.commits]
    assert sent and max(sent) < V6, (
        f"{run.client}: after waiting {took} ms for a topic ID that never came it sent TxnOffsetCommit {sent}, "
        f"not v5 for the whole request (\"Fallback\"); {run.proxy}\n{_dump_all(run.commits)}")
