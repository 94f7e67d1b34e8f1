"""When a consumer validates its position (KIP-320), seen on the wire: its driver reads a written
partition through the protocol proxy, which rewrites every OffsetsForLeaderEpoch answer.

- `undefined_epoch_answered`: three consumers of one stack, with auto.offset.reset earliest, latest
  and the stack's "no policy", each positioned at (SOUGHT, the partition's epoch) by seek with an
  epoch; every OffsetsForLeaderEpoch answer says UNDEFINED_EPOCH_OFFSET (leader epoch -1, end
  offset -1): the leader knows no offset for that epoch.
- `validation_error_answered`: one consumer of one stack, with auto.offset.reset earliest, positioned
  at (SOUGHT, the partition's epoch) by seek with an epoch; the first ERRORED OffsetsForLeaderEpoch
  answers carry a retriable partition error (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) and no
  offset (leader epoch -1, end offset -1), as a leader that refuses the request's current epoch
  answers; the later ones are the broker's.
- `seek_without_epoch`: two consumers of one stack with no reset policy at SOUGHT, one positioned
  by seek without an epoch, the other (the control) with the partition's epoch; every
  OffsetsForLeaderEpoch answer says the epoch ended at DIVERGED_AT, below SOUGHT, so a consumer that
  validates visibly moves (or reports the divergence), and the control shows that the proxy sees
  a validation when one is sent.

Recorded per consumer (harness.histories.kip320_clients.ConsumerRun): its Fetch, OffsetForLeaderEpoch
and ListOffsets requests about the partition and their answers, by client.id, in the order sent;
what it read and reported. The watch ends once each consumer read the last record, reported an
error (then watched AFTER_ERROR_S more for reading on), or whose first Fetch after a ruled answer
asked for the log end (nothing left to read), or after WATCH_S with the reason kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from harness import confluent
from harness.clients import raw as rr
from harness.clients.driver import stopped_on_exit
from harness.clients.produce_read import produce
from harness.clients.stacks import NO_RESET, RESETS, client_version, consumers_driver
from harness.cluster.base import Cluster
from harness.errors import NotSupported, PromiseUnkept, require_target
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
from harness.histories.observations import Body, ClientEvent, Read
from harness.process.events import Message
from harness.protocol import errors
from harness.protocol.sentinels import NO_EPOCH
from harness.proxy.rules import DivergedEpochEndOffset, ReplaceErrors, Rule, UndefinedEpochEndOffset
from harness.proxy.server import Proxy
from harness.waiting import Owed, wait_until

RECORDS = 30
SOUGHT = 15  # where every consumer is positioned
DIVERGED_AT = 5  # where the rewritten answers of `seek_without_epoch` say the epoch ended
ERRORED = 2  # how many OffsetsForLeaderEpoch answers `validation_error_answered` gives its error
AFTER_ERROR_S = 1.0  # how long a consumer that reported an error is watched for reading on
WATCH_S = 30.0
EARLIEST, LATEST = -2, -1  # ListOffsets timestamps
VALIDATION_VERSION = 2  # the first OffsetForLeaderEpoch version with CurrentLeaderEpoch (KIP-320)
METADATA_WITH_EPOCH = 7  # the first Metadata version whose answer carries LeaderEpoch (KIP-320)


def written_partition(cluster: Cluster, topic: str) -> WrittenPartition:
    """RECORDS records written to `topic`-0 (acks=all); its log start, end and epoch from its leader."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer:
        acked = produce(producer, topic, [f"v-{i}".encode() for i in range(RECORDS)]).acked
    require_target(len(acked) == RECORDS, f"the target acknowledged {len(acked)} of {RECORDS} records to {topic}")
    with rr.RawConnector(cluster) as raw:
        leader = raw(cluster.state.leader(topic))
        version = leader.max_version("ListOffsets")
        start, end = (rr.list_offsets(leader, version, topic, 0, ts) for ts in (EARLIEST, LATEST))
        metadata = leader.max_version("Metadata")
        epoch = rr.partition_metadata(leader, topic).get("LeaderEpoch", NO_EPOCH)
    require_target(not start["ErrorCode"] and not end["ErrorCode"],
                   f"the leader of {topic}-0 answered ListOffsets v{version} earliest "
                   f"{errors.describe(start['ErrorCode'])}, latest {errors.describe(end['ErrorCode'])}")
    # Every scene seeks with this epoch, and a consumer validates against the epoch its own Metadata
    # gives: a target that gives none leaves nothing to validate, which is no client's lack.
    if metadata < METADATA_WITH_EPOCH:
        raise NotSupported(f"leader epochs in Metadata (v{METADATA_WITH_EPOCH}+, KIP-320)",
                           f"{leader.host}:{leader.port} advertises Metadata up to v{metadata}")
    require_target(epoch >= 0, f"the leader of {topic}-0 answered Metadata v{metadata} with LeaderEpoch {epoch}: no "
                               f"epoch to seek with, and none for a consumer to validate its position against "
                               f"(KIP-320 \"Consumer Handling\": \"The consumer will obtain the current leader "
                               f"epoch using the Metadata API\")")
    return WrittenPartition(topic, tuple((w.offset, w.value.decode()) for w in acked), start["Offset"],
                            end["Offset"], epoch)


def undefined_epoch_answered(
    cluster: Cluster, partition: WrittenPartition, client: str
) -> dict[str, UndefinedEpochRun]:
    """Each reset policy of `client` (earliest, latest, its "no policy"): a consumer positioned at
    (SOUGHT, the partition's epoch), every OffsetsForLeaderEpoch answer UNDEFINED (see the module)."""
    names = {reset: f"undefined-{reset}" for reset in RESETS[client]}
    lines = [f"seekepoch {names[r]} {r} {SOUGHT} {partition.leader_epoch}" for r in RESETS[client]]
    watched = _watch(cluster, partition, client, [UndefinedEpochEndOffset()], lines, list(names.values()))
    return {reset: UndefinedEpochRun(client, reset, reset == NO_RESET[client], partition, SOUGHT,
                                     partition.leader_epoch, watched.consumers[name], watched.exchanges,
                                     watched.incomplete, watched.version)
            for reset, name in names.items()}


def seek_without_epoch(cluster: Cluster, partition: WrittenPartition, client: str) -> UnvalidatedSeekRun:
    """A consumer at SOUGHT by seek without an epoch, beside a control at (SOUGHT, the partition's
    epoch), both with no reset policy; every OffsetsForLeaderEpoch answer ends the epoch at DIVERGED_AT."""
    none = NO_RESET[client]
    lines = [f"assign plain {none} {SOUGHT}", f"seekepoch control {none} {SOUGHT} {partition.leader_epoch}"]
    watched = _watch(cluster, partition, client, [DivergedEpochEndOffset(end_offset=DIVERGED_AT)], lines,
                     ["plain", "control"])
    return UnvalidatedSeekRun(client, partition, SOUGHT, partition.leader_epoch, DIVERGED_AT,
                              watched.consumers["plain"], watched.consumers["control"], watched.exchanges,
                              watched.incomplete, watched.version)


def validation_error_answered(
    cluster: Cluster, partition: WrittenPartition, client: str, error: str
) -> ValidationErrorRun:
    """A consumer at (SOUGHT, the partition's epoch), auto.offset.reset earliest; the first ERRORED
    OffsetsForLeaderEpoch answers carry `error` and no offset (see the module). The two rules act on
    the same answers: the first blanks the broker's offset and epoch, the second sets the error."""
    name = "epoch-error"
    rules: list[Rule] = [UndefinedEpochEndOffset(count=ERRORED),
                         ReplaceErrors(VALIDATION, error=errors.error_code(error), count=ERRORED)]
    lines = [f"seekepoch {name} earliest {SOUGHT} {partition.leader_epoch}"]
    watched = _watch(cluster, partition, client, rules, lines, [name])
    return ValidationErrorRun(client, error, ERRORED, partition, SOUGHT, partition.leader_epoch,
                              watched.consumers[name], watched.exchanges, watched.incomplete, watched.version)


def require_validation_api(leader: rr.TargetClient) -> None:
    """KIP-320 "Consumer Handling": a consumer validates a position with OffsetsForLeaderEpoch v2+,
    the version that carries CurrentLeaderEpoch (Java's client only from v3, where it needs Describe
    on the topic). Against a leader that advertises no such version a client skips validation, and
    which of its requests happen to get through before it gives up depends on its connections. So
    the verdict is decided here, from the leader's ApiVersions, before any client runs: the same
    "not supported by this target", with the versions advertised as evidence, for every client."""
    top = leader.max_version("OffsetForLeaderEpoch")  # ApiNotOffered: not supported, the APIs offered as evidence
    if top < VALIDATION_VERSION:
        raise NotSupported(f"OffsetForLeaderEpoch v{VALIDATION_VERSION}+ (KIP-320 position validation)",
                           f"{leader.host}:{leader.port} advertises OffsetForLeaderEpoch up to v{top}")


@dataclass
class _Consumer:
    reads: list[Read] = field(default_factory=list)
    errors: list[ClientEvent] = field(default_factory=list)
    refused: list[ClientEvent] = field(default_factory=list)
    errored_at: float | None = None


@dataclass(frozen=True)
class _Watched:
    consumers: dict[str, ConsumerRun]
    exchanges: tuple[str, ...]
    incomplete: str | None
    version: str | None


def _watch(cluster: Cluster, partition: WrittenPartition, client: str, rules: list[Rule], lines: list[str],
           names: list[str]) -> _Watched:
    """`client`'s consumers driver, through a proxy applying `rules` (in order), runs `lines` (one consumer each,
    named by `names`) and is watched until every consumer settled (see the module)."""
    topic, last = partition.topic, partition.log_end - 1
    with rr.RawConnector(cluster) as raw:
        leader = raw(cluster.state.leader(topic))
        require_validation_api(leader)
        tid = rr.topic_id(leader, topic)
    seen: dict[str, _Consumer] = {n: _Consumer() for n in names}
    with Proxy.for_cluster(cluster) as proxy:
        for rule in rules:
            proxy.add(rule)

        def asks(name: str) -> list[PartitionAsk]:
            return [a for a in partition_asks(proxy, topic, tid) if a.client_id == name]

        def settled(name: str) -> bool:
            c = seen[name]
            if c.refused or (c.reads and c.reads[-1].offset >= last):
                return True
            if c.errored_at is not None:
                return time.monotonic() - c.errored_at >= AFTER_ERROR_S
            # Reset to the log end: its first Fetch after the rewritten answer asks past the last record.
            # (Only the first: a client prefetches, and asks for the end long before it hands over the
            # records it fetched before.)
            mine = asks(name)
            first = next((i for i, a in enumerate(mine) if a.ruled), None)
            fetched = [a for a in mine[first + 1:] if a.api == FETCH] if first is not None else []
            return bool(fetched) and fetched[0].asked > last

        driver = consumers_driver(client, cluster.java_clients, proxy.client_config(), topic)
        incomplete = None
        with driver, stopped_on_exit(driver):
            driver.wait_ready()
            for line in lines:
                driver.send_line(line)
            mark = [0]

            def everyone_settled() -> bool:
                for e in driver.events[mark[0]:]:
                    mark[0] += 1
                    _take(e, seen, topic)
                return all(settled(n) for n in names)

            try:
                wait_until(everyone_settled, WATCH_S, lambda: "; ".join(
                    f"{n}: {len(c.reads)} reads, errors {[str(x) for x in c.errors[:1]]}, asks "
                    f"{[str(a) for a in asks(n)][-4:]}" for n, c in seen.items() if not settled(n)),
                    interval=0.05, owed=Owed.PROMISE)
            except PromiseUnkept as exc:  # what each consumer did by then is what the checks judge
                incomplete = str(exc)
        every = partition_asks(proxy, topic, tid)
        exchanges = tuple(f"{e.client_id} {e.api} v{e.version}: {e.outcome}"
                          for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started))
    consumers = {n: ConsumerRun(n, tuple(a for a in every if a.client_id == n), tuple(c.reads), tuple(c.errors),
                                tuple(c.refused)) for n, c in seen.items()}
    return _Watched(consumers, exchanges, incomplete, client_version(driver))


def _take(event: Message, seen: dict[str, _Consumer], topic: str) -> None:
    """One driver event into the record of the consumer it names."""
    kind = event.get("event")
    if kind == "command_failed":
        words = str(event.get("command", "")).split()
        c = seen.get(words[1] if len(words) > 1 else "")
        if c is not None:
            c.refused.append(ClientEvent.of(event))
        return
    c = seen.get(str(event.get("consumer", "")))
    if c is None:
        return
    if kind == "record":
        value = event.get("value")
        c.reads.append(Read(topic, 0, int(event["offset"]), (value or "").encode(), event.get("epoch")))
    elif kind == "error":
        c.errors.append(ClientEvent.of(event))
        if c.errored_at is None:
            c.errored_at = time.monotonic()


def partition_asks(proxy: Proxy, topic: str, tid: Any, partition: int = 0) -> list[PartitionAsk]:
    """Every Fetch, OffsetForLeaderEpoch and ListOffsets request about `topic`-`partition` that went
    through `proxy`, with its answer, in the order sent."""
    found: list[PartitionAsk] = []
    for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started):
        if e.api not in (FETCH, VALIDATION, LIST_OFFSETS) or e.request is None:
            continue
        request, response = e.request, e.response
        for q, a in _pairs(e.api, request, response, topic, tid, partition):
            asked = {FETCH: "FetchOffset", VALIDATION: "LeaderEpoch", LIST_OFFSETS: "Timestamp"}[e.api]
            if a is None:
                # A Fetch of an incremental session answers only the partitions with news.
                error, offset, epoch = "no answer" if response is None else "absent", -1, NO_EPOCH
            else:
                error = errors.error_name(a.get("ErrorCode", 0))
                offset = a.get({FETCH: "HighWatermark", VALIDATION: "EndOffset", LIST_OFFSETS: "Offset"}[e.api], -1)
                epoch = a.get("LeaderEpoch", NO_EPOCH) if e.api != FETCH else NO_EPOCH
            found.append(PartitionAsk(e.api, e.version, e.client_id or "", q[asked],
                                      q.get("CurrentLeaderEpoch", NO_EPOCH), error, offset, epoch,
                                      bool(e.rules) and a is not None))
    return found


def _pairs(api: str, request: Body, response: Body | None, topic: str, tid: Any,
           partition: int) -> list[tuple[Body, Body | None]]:
    """(request partition, answer partition or None) of `topic`-`partition` in one exchange."""
    if api == FETCH:
        tkey, pkey, akey, rtopics = ("TopicId" if "TopicId" in _first(request.get("Topics")) else "Topic",
                                     "Partition", "PartitionIndex", "Responses")
    elif api == VALIDATION:
        tkey, pkey, akey, rtopics = "Topic", "Partition", "Partition", "Topics"
    else:
        tkey, pkey, akey, rtopics = "Name", "PartitionIndex", "PartitionIndex", "Topics"

    def ours(t: Body) -> bool:
        return t.get(tkey) in (topic, tid)

    answers = {a[akey]: a for t in (response or {}).get(rtopics) or () if ours(t) for a in t.get("Partitions") or ()}
    return [(q, answers.get(partition)) for t in request.get("Topics") or () if ours(t)
            for q in t.get("Partitions") or () if q.get(pkey) == partition]


def _first(items: Any) -> Body:
    return items[0] if items else {}

