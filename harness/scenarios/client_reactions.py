"""How clients react to the epoch errors: a consumer reads a partition through the protocol proxy,
which answers its first Fetches with FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH (every partition,
no records), as a leader whose epoch differs from the consumer's would; an idempotent producer
writes through a proxy that answers its first Produce requests so.

Recorded: what the consumer read and reported, how many answers the proxy refused, the APIs the
client sent from the first refused answer on (a Metadata request is its refresh), every exchange
it had through the proxy (a client that never reached the target shows how far it got), and every
Metadata answer naming the partition that it got, with when its first refused request came: the
leader epoch the target gave it before, without which a client fences nothing (the checks' premise).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from harness import confluent
from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.clients.driver import stopped_on_exit
from harness.clients.kip320_releases import client_release
from harness.clients.produce_read import produce, read_partition
from harness.clients.stacks import NO_RESET, client_version, consumers_driver
from harness.cluster.base import Cluster
from harness.errors import PromiseUnkept, require_target
from harness.histories.client_reactions import (
    CONNECT,
    METADATA,
    ClientRecord,
    Committed,
    CommittedAhead,
    EpochErrorRun,
    EpochLearned,
    FetchAsk,
    ListOffsetsAnswer,
    ProxiedRequest,
    ResetFetch,
    Validation,
)
from harness.histories.observations import Body, ClientEvent
from harness.nemesis.leadership import move_leader
from harness.protocol import errors
from harness.proxy.rules import RefusePartitions, StaleLeaderEpoch
from harness.proxy.server import Proxy
from harness.waiting import Owed, wait_until

RECORDS = 30
# The group's coordinator errors: retriable (protocol guide, Error Codes), of its OffsetCommit and
# OffsetFetch, never of a partition's Fetch; a client asks again after them.
COORDINATOR_ERRORS = frozenset(errors.error_name(c) for c in (
    errors.COORDINATOR_LOAD_IN_PROGRESS, errors.COORDINATOR_NOT_AVAILABLE, errors.NOT_COORDINATOR))
REFUSED = 3  # Fetch answers the proxy refuses before it lets the consumer's fetches through
__all__ = ["CommittedAhead", "EpochErrorRun", "ResetFetch"]  # the suites' names for the histories


@dataclass
class Consumed:
    """What a consumer driver returned while a scene ran: its records and what it reported, in order."""

    reads: list[ClientRecord] = field(default_factory=list)
    errors: list[ClientEvent] = field(default_factory=list)


def consumer_through_epoch_errors(cluster: Cluster, topic: str, client: str, error: str) -> EpochErrorRun:
    """Write RECORDS to `topic`-0, then read them from offset 0 with `client` (a client stack, no
    reset policy: a reset would be reported) through a proxy that refuses its first REFUSED
    Fetch answers (v9+, the versions with CurrentLeaderEpoch) with `error`."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer:
        written = tuple(ClientRecord(w.offset, w.value.decode())
                        for w in produce(producer, topic, [f"r-{i}".encode() for i in range(RECORDS)]).acked)
    with Proxy.for_cluster(cluster) as proxy:
        t0 = time.monotonic()
        rule = proxy.add(RefusePartitions("Fetch", versions=(9, 99), error=errors.error_code(error), count=REFUSED))
        # librdkafka's default metadata age: only the error may make it refresh.
        got, incomplete, version = read_through(cluster, proxy, topic, client, written[-1].offset,
                                                "assign {name} {none} 0",
                                                {"topic.metadata.refresh.interval.ms": 300000})
        after, refused = _after_first_ruled(proxy), rule.fired
        fenced_at = tuple(p.get("CurrentLeaderEpoch", -1) for e in proxy.recording.exchanges("Fetch") if e.rules
                          for t in (e.request or {}).get("Topics", []) for p in t.get("Partitions", []))
        exchanges = sent_through(proxy)
        learned, first_refused = metadata_told(proxy, topic, t0), _first_ruled_at(proxy, t0)
    return EpochErrorRun(client, error, written, tuple(got.reads), tuple(got.errors), refused, after, incomplete,
                         fenced_at, version, exchanges, client_release(client, version, cluster.java_clients),
                         learned, first_refused)


def at(moment: float, t0: float) -> float:
    """`moment` (time.monotonic, as the proxy's recording keeps it) in seconds from `t0`, rounded."""
    return round(moment - t0, 4)


def metadata_told(proxy: Proxy, topic: str, t0: float, partition: int = 0) -> tuple[EpochLearned, ...]:
    """Every Metadata answer naming `topic`-`partition` that a client got through `proxy` (after its
    rules), by when the proxy passed it on (seconds from `t0`): its version, the leader, LeaderEpoch
    (-1: none given, as in every version before 7, which has no such field) and the partition's error."""
    told = [EpochLearned(at(e.started + e.latency, t0), METADATA, e.version, p.get("LeaderId", -1),
                         p.get("LeaderEpoch", -1), errors.error_name(p.get("ErrorCode", 0)))
            for e in proxy.recording.exchanges(METADATA) if e.response is not None and e.latency is not None
            for t in e.response.get("Topics") or () if t.get("Name") == topic
            for p in t.get("Partitions") or () if p.get("PartitionIndex") == partition]
    return tuple(sorted(told, key=lambda m: m.at))


def _first_ruled_at(proxy: Proxy, t0: float) -> float | None:
    """When the first request whose answer a rule of `proxy` acted on reached it (seconds from `t0`)."""
    ruled = [e.started for e in proxy.recording.exchanges() if e.rules]
    return at(min(ruled), t0) if ruled else None


def sent_through(proxy: Proxy) -> tuple[ProxiedRequest, ...]:
    """Every exchange through `proxy`, in order; then one `CONNECT` per client connection the proxy
    could not take to a broker."""
    exchanges = sorted(proxy.recording.exchanges(), key=lambda e: e.started)
    seen = [ProxiedRequest(e.api, e.version, e.outcome) for e in exchanges]
    return tuple(seen + [ProxiedRequest(CONNECT, -1, why) for why in proxy.unreachable])


def _after_first_ruled(proxy: Proxy, n: int = 20) -> tuple[str, ...]:
    """The APIs the client sent from the first exchange a proxy rule acted on, in order (the first `n`)."""
    exchanges = sorted(proxy.recording.exchanges(), key=lambda e: e.started)
    first = next((i for i, e in enumerate(exchanges) if e.rules), len(exchanges))
    return tuple(e.api for e in exchanges[first:first + n])


def read_through(
    cluster: Cluster, proxy: Proxy, topic: str, client: str, last: int, command: str,
    librdkafka: dict[str, object] | None = None, until: Callable[[], bool] | None = None,
    during: Callable[[Consumed], bool] | None = None, timeout: float = 45,
) -> tuple[Consumed, str | None, str | None]:
    """`client`'s consumer driver (harness.clients.stacks), through `proxy`, reads `topic`-0 after
    `command` (a driver command, its `{name}` the consumer's and `{none}` the stack's no-reset
    policy) until it returned the record at `last` (or `until()` holds) or reported an error other
    than the group's coordinator errors (retriable: it is watched on after those).
    `librdkafka`: settings of the librdkafka consumer beside the proxy's; `during(consumed)`: called
    whenever the driver is looked at, for a scene that acts on what was read so far (True ends the
    wait at once: the scene could not go on). What it read and
    reported, why it did not get there (None when it did), and the client and version its driver
    named."""
    got = Consumed()
    line = command.format(name=client, none=NO_RESET[client])

    def settled() -> bool:
        if during is not None and during(got):
            return True
        # The group's coordinator errors are retriable: a client asks again and reads on, so what it
        # does after one is what the checks judge, not the report.
        ended = any(e.get("code") not in COORDINATOR_ERRORS for e in got.errors)
        if until is not None:
            return ended or until()
        return ended or (bool(got.reads) and got.reads[-1].offset >= last)

    def describe() -> str:
        return f"{client} read {len(got.reads)} records through {last}; errors {[str(e) for e in got.errors[:2]]}"

    driver = consumers_driver(client, cluster.java_clients, {**proxy.client_config(), **(librdkafka or {})}, topic)
    try:
        with driver:
            driver.wait_ready()
            driver.send_line(line)
            seen = [0]

            def driver_settled() -> bool:
                for e in driver.events[seen[0]:]:
                    seen[0] += 1
                    if e.get("event") == "record":
                        got.reads.append(ClientRecord(e["offset"], e["value"], e.get("epoch")))
                    elif e.get("event") in ("error", "command_failed"):
                        got.errors.append(ClientEvent.of(e))
                return settled()

            with stopped_on_exit(driver):
                # What the client did by the deadline is what the checks judge; the timeout is their evidence.
                wait_until(driver_settled, timeout, describe, interval=0.02, owed=Owed.PROMISE)
    except PromiseUnkept as exc:
        return got, str(exc), client_version(driver)
    return got, None, client_version(driver)


def reset_then_fetch(cluster: Cluster, topic: str, client: str, reset: str, group: str) -> ResetFetch:
    """On `topic` (3 replicas): 20 records, a leader move (so that the log's first record and its end
    are at different epochs), 10 more; then `client` joins `group`, which has no commit, with
    auto.offset.reset `reset`, through a proxy, until it has sent a Fetch of the partition after a
    ListOffsets answer for it."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, \
            confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        produce(producer, topic, [f"before-{i}".encode() for i in range(20)])
        moved = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        produce(producer, topic, [f"after-{i}".encode() for i in range(10)])
        tid = str(rr.topic_id(raw(moved.leader), topic))
    with Proxy.for_cluster(cluster) as proxy:

        def seen() -> tuple[list[ListOffsetsAnswer], list[FetchAsk]]:
            answers: list[ListOffsetsAnswer] = []
            fetches: list[FetchAsk] = []
            for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started):
                if e.api == "ListOffsets" and e.response is not None:
                    answers += [ListOffsetsAnswer(e.version, q.get("CurrentLeaderEpoch", -1), a.get("Offset", -1),
                                                  a.get("LeaderEpoch", -1), errors.error_name(a["ErrorCode"]),
                                                  len(fetches), q.get("Timestamp"))
                                for q, a in partition_pairs(e.request, e.response, topic, tid)]
                elif e.api == "Fetch" and e.request is not None:
                    fetches += [FetchAsk(e.version, q["FetchOffset"], q.get("CurrentLeaderEpoch", -1))
                                for q in fetch_entries(e.request, topic, tid)]
            return answers, fetches

        def fetched_after_reset() -> bool:
            answers, fetches = seen()
            ok = [a for a in answers if a.error == "NONE"]
            return bool(ok) and len(fetches) > ok[0].fetches_before

        got, incomplete, version = read_through(cluster, proxy, topic, client, -1,
                                                f"subscribe {{name}} {reset} {group}",
                                                {"topic.metadata.refresh.interval.ms": 300000},
                                                until=fetched_after_reset)
        answers, fetches = seen()
        sent = tuple(f"{e.api} v{e.version}: {e.outcome} {sorted({errors.error_name(c) for c in e.error_codes})}"
                     for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started))
    return ResetFetch(client, reset, moved.leader_epoch, tuple(answers), tuple(fetches), tuple(got.errors),
                      incomplete, sent, version)


def names(t: Body, topic: str, tid: str) -> bool:
    """Whether a request's or answer's topic entry is `topic` (by name, or by TopicId `tid`)."""
    return t.get("Topic", t.get("Name")) == topic or str(t.get("TopicId")) == tid


def fetch_entries(request: Body, topic: str, tid: str, partition: int = 0) -> list[Body]:
    """The partition entries of `topic`-`partition` in a Fetch request (by name, or TopicId from v13)."""
    return [q for t in request.get("Topics", []) if names(t, topic, tid)
            for q in t.get("Partitions", []) if q.get("Partition") == partition]


def partition_pairs(request: Body | None, response: Body, topic: str, tid: str) -> list[tuple[Body, Body]]:
    """(request partition, answer partition) of `topic`-0 in one ListOffsets exchange."""
    asked: dict[int, Body] = {0: {}} if request is None else {
        q["PartitionIndex"]: q for t in request.get("Topics", []) if names(t, topic, tid) for q in t["Partitions"]}
    return [(asked.get(0, {}), a) for t in response.get("Topics", []) if names(t, topic, tid)
            for a in t["Partitions"] if a["PartitionIndex"] == 0]


def producer_through_epoch_errors(cluster: Cluster, topic: str, error: str) -> EpochErrorRun:
    """librdkafka, idempotent and acks=all, writes RECORDS to `topic`-0 through a proxy that answers
    its first REFUSED Produce requests with `error` (the broker had appended them: only the idempotent
    retry keeps them from being written twice); then the partition is read back. `written` are the
    values sent, `reads` the partition's records, `errors` the failed delivery reports."""
    values = [f"p-{i}" for i in range(RECORDS)]
    with Proxy.for_cluster(cluster) as proxy:
        t0 = time.monotonic()
        rule = proxy.add(RefusePartitions("Produce", error=errors.error_code(error), count=REFUSED))
        with confluent.producer({**proxy.client_config(), "acks": "all", "enable.idempotence": True,
                             "message.timeout.ms": 60000, "linger.ms": 20}) as producer:
            history = produce(producer, topic, [v.encode() for v in values])
        reported = tuple(ClientEvent("delivery_failed", {"value": w.value.decode(), "error": w.error})
                         for w in history.failed)
        sent_epochs = tuple(p.get("CurrentLeaderEpoch", -1) for e in proxy.recording.exchanges("Produce")
                            for t in (e.request or {}).get("TopicData", []) for p in t.get("PartitionData", []))
        after, refused = _after_first_ruled(proxy), rule.fired
        exchanges = sent_through(proxy)
        learned, first_refused = metadata_told(proxy, topic, t0), _first_ruled_at(proxy, t0)
    with confluent.consumer({**cluster.client_config(), "group.id": f"{topic}-reader", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"}) as consumer:
        got = read_partition(consumer, topic, 0, 0, _end(cluster, topic))
    reads = tuple(ClientRecord(r.offset, r.value.decode()) for r in got)
    written = tuple(ClientRecord(i, v) for i, v in enumerate(values))
    return EpochErrorRun("librdkafka producer", error, written, reads, reported, refused, after, None, sent_epochs,
                         exchanges=exchanges, learned=learned, first_refused_at=first_refused)


def _end(cluster: Cluster, topic: str) -> int:
    return cluster.state.log_end_offset(topic, 0, cluster.state.leader(topic))


COMMITTED_AHEAD = 25  # the offset the group commits, 5 records into the epoch after the move


def commit_ahead_of_a_move(cluster: Cluster, topic: str, group: str) -> tuple[Committed, tuple[ClientRecord, ...],
                                                                              uuid.UUID]:
    """On `topic` (3 replicas): 20 records, a leader move, 10 more; then the harness commits
    (`COMMITTED_AHEAD`, the new epoch) for `group` outside any generation. (The commit, the records from
    it on, the topic's id.)"""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, \
            confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        produce(producer, topic, [f"before-{i}".encode() for i in range(20)])
        moved = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        after = produce(producer, topic, [f"after-{i}".encode() for i in range(10)]).acked
        # Reconnecting: the coordinator lookup (FindCoordinator) is asked again after a timeout.
        any_broker = raw(cluster.state.running_brokers()[0], reconnect=True)
        tid = rr.topic_id(any_broker, topic)
        gcoord = raw(tx.coordinator_id(any_broker, group, 0), reconnect=True)
        committed = Committed(COMMITTED_AHEAD, moved.leader_epoch)
        version = gcoord.max_version("OffsetCommit")
        code = rr.offset_commit(gcoord, version, group, topic, tid, 0, COMMITTED_AHEAD, moved.leader_epoch,
                                resend=True)
        require_target(code == 0, f"the group's commit of {committed} (OffsetCommit v{version}, sent by the harness "
                                  f"to coordinator {gcoord.host}:{gcoord.port}) was refused: {errors.describe(code)}")
    written = tuple(ClientRecord(w.offset, w.value.decode()) for w in after if w.offset >= COMMITTED_AHEAD)
    return committed, written, tid


def committed_epoch_ahead_of_metadata(cluster: Cluster, topic: str, client: str, group: str) -> CommittedAhead:
    """On `topic` (3 replicas): 20 records, a leader move, 10 more; the group commits (25, the new
    epoch) outside any generation; then `client` joins the group through a proxy whose first three
    Metadata answers show the partition one epoch behind, with no reset policy."""
    committed, written, _ = commit_ahead_of_a_move(cluster, topic, group)
    with Proxy.for_cluster(cluster) as proxy:
        t0 = time.monotonic()
        rule = proxy.add(StaleLeaderEpoch(topic=topic, behind=1, count=3))
        got, incomplete, version = read_through(cluster, proxy, topic, client, written[-1].offset,
                                                f"subscribe {{name}} {{none}} {group}")
        validations = tuple(Validation(p["CurrentLeaderEpoch"], p["LeaderEpoch"],
                                       _answer(e.response, p.get("Partition")))
                            for e in proxy.recording.exchanges("OffsetForLeaderEpoch")
                            for t in (e.request or {}).get("Topics", []) for p in t.get("Partitions", []))
        stale = rule.fired
        metadata = tuple(sorted({e.version for e in proxy.recording.exchanges("Metadata")}))
        exchanges = sent_through(proxy)
        learned = metadata_told(proxy, topic, t0)
    return CommittedAhead(client, committed, stale, validations, written, tuple(got.reads), tuple(got.errors),
                          incomplete, metadata, version, exchanges, learned)


def _answer(response: Body | None, partition: int | None) -> str:
    """The error an OffsetForLeaderEpoch answer gave `partition` (and its end offset), by name."""
    for t in (response or {}).get("Topics", []):
        for a in t.get("Partitions", []):
            if a.get("Partition") == partition:
                return f"{errors.error_name(a['ErrorCode'])} end {a.get('EndOffset')}"
    return "no answer"
