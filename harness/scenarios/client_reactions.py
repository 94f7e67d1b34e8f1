"""How clients react to the epoch errors: a consumer reads a partition through the protocol proxy,
which answers its first Fetches with FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH (every partition,
no records), as a leader whose epoch differs from the consumer's would; an idempotent producer
writes through a proxy that answers its first Produce requests so.

Recorded: what the consumer read and reported, how many answers the proxy refused, the APIs the
client sent from the first refused answer on (a Metadata request is its refresh), and every exchange
it had through the proxy (a client that never reached the target shows how far it got).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness import confluent
from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.clients.history import produce, read_partition
from harness.clients.stacks import NO_RESET, client_version, consumers_driver
from harness.cluster.base import Cluster
from harness.errors import require_target
from harness.nemesis.leadership import move_leader
from harness.protocol import errors
from harness.proxy.rules import RefusePartitions, StaleLeaderEpoch
from harness.proxy.server import Proxy
from harness.scenarios.truncation import Observed, stop_driver
from harness.waiting import WaitTimeout, wait_until

RECORDS = 30
REFUSED = 3  # Fetch answers the proxy refuses before it lets the consumer's fetches through


@dataclass(frozen=True)
class EpochErrorRun:
    client: str
    error: str
    written: list[dict[str, Any]]  # {offset, value}, acknowledged
    reads: list[dict[str, Any]]  # {offset, value}
    errors: list[dict[str, Any]]  # what the client reported
    refused: int  # Fetch answers the proxy refused
    after: list[str]  # APIs the client sent from the first refused answer on, in order (the first 20)
    incomplete: str | None = None
    sent_epochs: list[int] = field(default_factory=list)  # CurrentLeaderEpoch of each partition (Fetch: refused)
    version: str | None = None  # the client and version its driver named
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # every one through the proxy: see `_exchanges`


def consumer_through_epoch_errors(cluster: Cluster, topic: str, client: str, error: str) -> EpochErrorRun:
    """Write RECORDS to `topic`-0, then read them from offset 0 with `client` (a client stack, no
    reset policy: a reset would be reported) through a proxy that refuses its first REFUSED
    Fetch answers (v9+, the versions with CurrentLeaderEpoch) with `error`."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer:
        written = [{"offset": w.offset, "value": w.value.decode()}
                   for w in produce(producer, topic, [f"r-{i}".encode() for i in range(RECORDS)]).acked]
    with Proxy.for_cluster(cluster) as proxy:
        rule = proxy.add(RefusePartitions("Fetch", versions=(9, 99), error=errors.error_code(error), count=REFUSED))
        # librdkafka's default metadata age: only the error may make it refresh.
        got, incomplete, version = _read_through(cluster, proxy, topic, client, written[-1]["offset"],
                                                 "assign {name} {none} 0",
                                                 {"topic.metadata.refresh.interval.ms": 300000})
        after, refused = _after_first_ruled(proxy), rule.fired
        fenced_at = [p.get("CurrentLeaderEpoch", -1) for e in proxy.recording.exchanges("Fetch") if e.rules
                     for t in (e.request or {}).get("Topics", []) for p in t.get("Partitions", [])]
        exchanges = _exchanges(proxy)
    return EpochErrorRun(client, error, written, got.reads, got.errors, refused, after, incomplete, fenced_at, version,
                         exchanges)


def _exchanges(proxy: Proxy) -> list[dict[str, Any]]:
    """Every exchange through `proxy`, in order: {api, version, outcome (answered, connection-lost, ...)};
    then one {api: "connect", outcome} per client connection the proxy could not take to a broker."""
    seen = [{"api": e.api, "version": e.version, "outcome": e.outcome}
            for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started)]
    return seen + [{"api": "connect", "version": -1, "outcome": why} for why in proxy.unreachable]


def _after_first_ruled(proxy: Proxy, n: int = 20) -> list[str]:
    """The APIs the client sent from the first exchange a proxy rule acted on, in order (the first `n`)."""
    exchanges = sorted(proxy.recording.exchanges(), key=lambda e: e.started)
    first = next((i for i, e in enumerate(exchanges) if e.rules), len(exchanges))
    return [e.api for e in exchanges[first:first + n]]


def _read_through(
    cluster: Cluster, proxy: Proxy, topic: str, client: str, last: int, command: str,
    librdkafka: dict[str, object] | None = None, until: Callable[[], bool] | None = None,
) -> tuple[Observed, str | None, str | None]:
    """`client`'s consumer driver (harness.clients.stacks), through `proxy`, reads `topic`-0 after
    `command` (a driver command, its `{name}` the consumer's and `{none}` the stack's no-reset
    policy) until it returned the record at `last` (or `until()` holds) or reported an error.
    `librdkafka`: settings of the librdkafka consumer beside the proxy's. What it read and reported,
    and why it did not get there (None when it did)."""
    got = Observed()
    line = command.format(name=client, none=NO_RESET[client])

    def settled() -> bool:
        if until is not None:
            return bool(got.errors) or until()
        return bool(got.errors) or (bool(got.reads) and got.reads[-1]["offset"] >= last)

    def describe() -> str:
        return f"{client} read {len(got.reads)} records through {last}; errors {got.errors[:2]}"

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
                        got.reads.append({"offset": e["offset"], "epoch": e["epoch"], "value": e["value"]})
                    elif e.get("event") in ("error", "command_failed"):
                        got.errors.append({k: v for k, v in e.items() if k != "event"})
                return settled()

            try:
                wait_until(driver_settled, 45, describe, interval=0.02)
            finally:
                stop_driver(driver)
    except WaitTimeout as exc:
        return got, str(exc), client_version(driver)
    return got, None, client_version(driver)


@dataclass(frozen=True)
class ResetFetch:
    """A consumer of a fresh group resetting `topic`-0 by its policy, through the proxy: the ListOffsets
    answers for the partition ({version, current, offset, epoch, error}), then its Fetches of it
    ({version, offset, current}), in the order sent, and the partition's epoch (Metadata)."""

    client: str
    reset: str
    epoch: int
    list_offsets: list[dict[str, Any]]
    fetches: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    incomplete: str | None = None
    sent: list[str] = field(default_factory=list)  # every exchange through the proxy: "JoinGroup v9: NONE", in order
    version: str | None = None  # the client and version its driver named


def reset_then_fetch(cluster: Cluster, topic: str, client: str, reset: str, group: str) -> ResetFetch:
    """On `topic` (3 replicas): 20 records, a leader move (so that the log's first record and its end
    are at different epochs), 10 more; then `client` joins `group`, which has no commit, with
    auto.offset.reset `reset`, through a proxy, until it has sent a Fetch of the partition after a
    ListOffsets answer for it."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, \
            confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        produce(producer, topic, [f"before-{i}".encode() for i in range(20)])
        moved = move_leader(cluster, raw(cluster.running_brokers()[0]), admin, topic)
        produce(producer, topic, [f"after-{i}".encode() for i in range(10)])
        tid = str(rr.topic_id(raw(moved.leader), topic))
    with Proxy.for_cluster(cluster) as proxy:

        def seen() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            answers, fetches = [], []
            for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started):
                if e.api == "ListOffsets" and e.response is not None:
                    answers += [{"version": e.version, "current": q.get("CurrentLeaderEpoch", -1),
                                 "offset": a.get("Offset", -1), "epoch": a.get("LeaderEpoch", -1),
                                 "error": errors.error_name(a["ErrorCode"]), "fetches_before": len(fetches)}
                                for q, a in _partition_pairs(e.request, e.response, topic, tid)]
                elif e.api == "Fetch" and e.request is not None:
                    fetches += [{"version": e.version, "offset": q["FetchOffset"],
                                 "current": q.get("CurrentLeaderEpoch", -1)}
                                for t in e.request.get("Topics", []) if _names(t, topic, tid)
                                for q in t.get("Partitions", []) if q.get("Partition") == 0]
            return answers, fetches

        def fetched_after_reset() -> bool:
            answers, fetches = seen()
            ok = [a for a in answers if a["error"] == "NONE"]
            return bool(ok) and len(fetches) > ok[0]["fetches_before"]

        got, incomplete, version = _read_through(cluster, proxy, topic, client, -1,
                                                 f"subscribe {{name}} {reset} {group}",
                                                 {"topic.metadata.refresh.interval.ms": 300000},
                                                 until=fetched_after_reset)
        answers, fetches = seen()
        sent = [f"{e.api} v{e.version}: {e.outcome} {sorted({errors.error_name(c) for c in e.error_codes})}"
                for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started)]
    return ResetFetch(client, reset, moved.leader_epoch, answers, fetches, got.errors, incomplete, sent, version)


def _names(t: dict[str, Any], topic: str, tid: str) -> bool:
    return t.get("Topic", t.get("Name")) == topic or str(t.get("TopicId")) == tid


def _partition_pairs(
    request: dict[str, Any] | None, response: dict[str, Any], topic: str, tid: str
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request partition, answer partition) of `topic`-0 in one exchange."""
    asked = {0: {}} if request is None else {
        q["PartitionIndex"]: q for t in request.get("Topics", []) if _names(t, topic, tid) for q in t["Partitions"]}
    return [(asked.get(0, {}), a) for t in response.get("Topics", []) if _names(t, topic, tid)
            for a in t["Partitions"] if a["PartitionIndex"] == 0]


def producer_through_epoch_errors(cluster: Cluster, topic: str, error: str) -> EpochErrorRun:
    """librdkafka, idempotent and acks=all, writes RECORDS to `topic`-0 through a proxy that answers
    its first REFUSED Produce requests with `error` (the broker had appended them: only the idempotent
    retry keeps them from being written twice); then the partition is read back. `written` are the
    values sent, `reads` the partition's records, `errors` the failed delivery reports."""
    values = [f"p-{i}" for i in range(RECORDS)]
    with Proxy.for_cluster(cluster) as proxy:
        rule = proxy.add(RefusePartitions("Produce", error=errors.error_code(error), count=REFUSED))
        with confluent.producer({**proxy.client_config(), "acks": "all", "enable.idempotence": True,
                             "message.timeout.ms": 60000, "linger.ms": 20}) as producer:
            history = produce(producer, topic, [v.encode() for v in values])
        reported = [{"value": w.value.decode(), "error": w.error} for w in history.failed]
        sent_epochs = [p.get("CurrentLeaderEpoch", -1) for e in proxy.recording.exchanges("Produce")
                       for t in (e.request or {}).get("TopicData", []) for p in t.get("PartitionData", [])]
        after, refused = _after_first_ruled(proxy), rule.fired
        exchanges = _exchanges(proxy)
    with confluent.consumer({**cluster.client_config(), "group.id": f"{topic}-reader", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"}) as consumer:
        got = read_partition(consumer, topic, 0, 0, _end(cluster, topic))
    reads = [{"offset": r.offset, "value": r.value.decode()} for r in got]
    written = [{"offset": i, "value": v} for i, v in enumerate(values)]
    return EpochErrorRun("librdkafka producer", error, written, reads, reported, refused, after, None, sent_epochs,
                         exchanges=exchanges)


def _end(cluster: Cluster, topic: str) -> int:
    return cluster.log_end_offset(topic, 0, cluster.leader(topic))


@dataclass(frozen=True)
class CommittedAhead:
    """A group member starting from a commit whose epoch its first metadata has not reached yet.

    `committed` the group's (offset, epoch); `stale` the Metadata answers shown behind; `validations`
    the OffsetsForLeaderEpoch the client sent ({current, leader_epoch}); `reads` and `errors` what it
    read and reported; `written` the records from the committed offset on."""

    client: str
    committed: dict[str, int]
    stale: int
    validations: list[dict[str, int]]
    written: list[dict[str, Any]]
    reads: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    incomplete: str | None = None
    metadata_versions: list[int] = field(default_factory=list)  # of every Metadata request the client sent
    version: str | None = None  # the client and version its driver named
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # every one through the proxy: see `_exchanges`


def committed_epoch_ahead_of_metadata(cluster: Cluster, topic: str, client: str, group: str) -> CommittedAhead:
    """On `topic` (3 replicas): 20 records, a leader move, 10 more; the group commits (25, the new
    epoch) outside any generation; then `client` joins the group through a proxy whose first three
    Metadata answers show the partition one epoch behind, with no reset policy."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, \
            confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        produce(producer, topic, [f"before-{i}".encode() for i in range(20)])
        moved = move_leader(cluster, raw(cluster.running_brokers()[0]), admin, topic)
        after = produce(producer, topic, [f"after-{i}".encode() for i in range(10)]).acked
        any_broker = raw(cluster.running_brokers()[0])
        tid = rr.topic_id(any_broker, topic)
        gcoord = raw(tx.coordinator_id(any_broker, group, 0))
        committed = {"offset": 25, "epoch": moved.leader_epoch}
        version = gcoord.max_version("OffsetCommit")
        code = rr.offset_commit(gcoord, version, group, topic, tid, 0, 25, moved.leader_epoch)
        require_target(code == 0, f"the group's commit of {committed} (OffsetCommit v{version}, sent by the harness "
                                  f"to coordinator {gcoord.host}:{gcoord.port}) was refused: {errors.describe(code)}")
    written = [{"offset": w.offset, "value": w.value.decode()} for w in after if w.offset >= 25]
    with Proxy.for_cluster(cluster) as proxy:
        rule = proxy.add(StaleLeaderEpoch(topic=topic, behind=1, count=3))
        got, incomplete, version = _read_through(cluster, proxy, topic, client, written[-1]["offset"],
                                                 f"subscribe {{name}} {{none}} {group}")
        validations = [{"current": p["CurrentLeaderEpoch"], "leader_epoch": p["LeaderEpoch"],
                        "answer": _answer(e.response, p.get("Partition"))}
                       for e in proxy.recording.exchanges("OffsetForLeaderEpoch")
                       for t in (e.request or {}).get("Topics", []) for p in t.get("Partitions", [])]
        stale = rule.fired
        metadata = sorted({e.version for e in proxy.recording.exchanges("Metadata")})
        exchanges = _exchanges(proxy)
    return CommittedAhead(client, committed, stale, validations, written, got.reads, got.errors, incomplete, metadata,
                          version, exchanges)


def _answer(response: dict[str, Any] | None, partition: int | None) -> str:
    """The error an OffsetForLeaderEpoch answer gave `partition` (and its end offset), by name."""
    for t in (response or {}).get("Topics", []):
        for a in t.get("Partitions", []):
            if a.get("Partition") == partition:
                return f"{errors.error_name(a['ErrorCode'])} end {a.get('EndOffset')}"
    return "no answer"
