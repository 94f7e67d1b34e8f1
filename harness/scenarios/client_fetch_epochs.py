"""Which leader epoch a consumer fences its Fetches with, seen through the protocol proxy.

Two scenes, every client stack (harness.clients.stacks), on `topic`-0 with three replicas:
- `fetch_epochs_through_leader_move`: a consumer positioned by assign() at 0 (no reset policy) reads
  20 records; the harness then moves the partition's leader (a higher epoch) and writes 20 more,
  which the consumer reads too. Every Metadata answer naming the partition that the consumer got,
  and every Fetch entry of the partition it sent, are recorded with when the proxy passed them.
- `reset_ahead_of_metadata`: the leader is moved before anything is written, so every record sits at
  the new epoch; a consumer of a group with no commit resets by its policy while the proxy shows
  each Metadata answer for the partition one epoch behind (the KIP-232 stale-metadata situation).
  Its ListOffsets reaches the broker unfenced (`UnfencedListOffsets`: CurrentLeaderEpoch -1; a
  consumer fences it with its stale epoch, which the leader would refuse, so no reset could happen)
  and is answered honestly: the offset and the new epoch. The proxy holds Metadata back until the
  consumer has acted on the reset (two Fetches of the partition or two held Metadata answers after
  it, at most HOLD_S), then answers honestly and the harness writes 10 more records.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from harness import confluent
from harness.clients import raw as rr
from harness.clients.kip320_releases import client_release
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster
from harness.histories.client_reactions import (
    LEADER_HINT,
    METADATA,
    ClientRecord,
    EpochLearned,
    FetchEpochRun,
    FetchSent,
    LeaderMove,
    ListOffsetsAnswer,
    ResetAheadRun,
    Validated,
)
from harness.histories.observations import Body
from harness.nemesis.leadership import move_leader
from harness.protocol import errors
from harness.protocol.spec import ApiSpec
from harness.proxy.rules import LIST_OFFSETS, Rule, StaleLeaderEpoch
from harness.proxy.server import Proxy
from harness.scenarios.client_reactions import (
    Consumed,
    fetch_entries,
    metadata_told,
    names,
    partition_pairs,
    read_through,
    sent_through,
)
from harness.scenarios.client_reactions import at as _at

RECORDS = 20  # written before the leader move (the first scene), or before the reset (the second)
LATER = 10  # written once the proxy answers Metadata honestly again (the second scene)
HOLD_S = 5.0  # the longest the proxy holds Metadata behind after the reset answer
ACTED = 2  # Fetches of the partition, or held Metadata answers, after the reset answer that end the hold


@dataclass(eq=False)
class UnfencedListOffsets(Rule):
    """The client's ListOffsets (v4+) partitions of `topic` reach the broker with CurrentLeaderEpoch -1
    (the recording keeps what the client sent), so that a consumer whose Metadata lags is answered
    the offset and its epoch instead of FENCED_LEADER_EPOCH."""

    topic: str = ""

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == LIST_OFFSETS and version >= 4

    def edit_request(self, api: ApiSpec, version: int, body: Body) -> bool:
        parts = [p for t in body.get("Topics") or () if t.get("Name") == self.topic for p in t.get("Partitions") or ()]
        fenced = [p for p in parts if p.get("CurrentLeaderEpoch", -1) != -1]
        for p in fenced:
            p["CurrentLeaderEpoch"] = -1
        return bool(fenced) and self.take()

    def describe(self) -> str:
        return f"UnfencedListOffsets(ListOffsets v4+ of {self.topic} sent on at epoch -1, {self.fired} edited)"


def epochs_learned(proxy: Proxy, topic: str, tid: str, t0: float) -> tuple[EpochLearned, ...]:
    """Every leader epoch of `topic`-0 the client was told, by when the proxy passed the answer on:
    each Metadata answer naming the partition, and each KIP-951 CurrentLeader of a Fetch answer."""
    seen = list(metadata_told(proxy, topic, t0))
    for e in proxy.recording.exchanges("Fetch"):
        if e.response is None or e.latency is None:
            continue
        for t in e.response.get("Responses") or ():
            if not names(t, topic, tid):
                continue
            for p in t.get("Partitions") or ():
                hint = p.get("CurrentLeader") or {}
                if p.get("PartitionIndex") == 0 and hint.get("LeaderEpoch", -1) >= 0:
                    seen.append(EpochLearned(_at(e.started + e.latency, t0), LEADER_HINT, e.version,
                                             hint.get("LeaderId", -1), hint["LeaderEpoch"],
                                             errors.error_name(p.get("ErrorCode", 0))))
    return tuple(sorted(seen, key=lambda m: m.at))


def fetches_sent(proxy: Proxy, topic: str, tid: str, t0: float) -> tuple[FetchSent, ...]:
    """Every Fetch entry of `topic`-0 the client sent, by when it reached the proxy, with the answer."""
    sent = []
    for e in sorted(proxy.recording.exchanges("Fetch"), key=lambda e: e.started):
        if e.request is None:
            continue
        for q in fetch_entries(e.request, topic, tid):
            answers = [] if e.response is None else [
                errors.error_name(a.get("ErrorCode", 0)) for t in e.response.get("Responses") or ()
                if names(t, topic, tid) for a in t.get("Partitions") or () if a.get("PartitionIndex") == 0]
            sent.append(FetchSent(_at(e.started, t0), e.upstream, e.version, q["FetchOffset"],
                                  q.get("CurrentLeaderEpoch", -1), answers[0] if answers else None))
    return tuple(sent)


def fetch_epochs_through_leader_move(cluster: Cluster, topic: str, client: str) -> FetchEpochRun:
    """`client` reads `topic`-0 from 0 through the proxy while the harness moves its leader (see the
    module docstring); returns what it got, sent, read and reported."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, \
            confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        written = [ClientRecord(w.offset, w.value.decode())
                   for w in produce(producer, topic, [f"before-{i}".encode() for i in range(RECORDS)]).acked]
        tid = str(rr.topic_id(raw(cluster.state.running_brokers()[0]), topic))
        before = cluster.state.partition_state(topic, 0)
        with Proxy.for_cluster(cluster) as proxy:
            t0 = time.monotonic()
            moves: list[LeaderMove] = []
            failed: list[BaseException] = []

            def during(got: Consumed) -> bool:
                if failed:
                    return True
                if moves or not got.reads or got.reads[-1].offset < written[-1].offset:
                    return False
                try:
                    after = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
                    moves.append(LeaderMove(before.leader, before.leader_epoch, after.leader, after.leader_epoch,
                                            _at(time.monotonic(), t0)))
                    written.extend(ClientRecord(w.offset, w.value.decode()) for w in produce(
                        producer, topic, [f"after-{i}".encode() for i in range(RECORDS)]).acked)
                except Exception as exc:  # noqa: BLE001 - raised once the driver is stopped
                    failed.append(exc)
                return bool(failed)

            got, incomplete, version = read_through(
                cluster, proxy, topic, client, 2 * RECORDS - 1, "assign {name} {none} 0", during=during, timeout=60)
            if failed:
                raise failed[0]
            run = FetchEpochRun(client, moves[0] if moves else None, epochs_learned(proxy, topic, tid, t0),
                                fetches_sent(proxy, topic, tid, t0), tuple(written), tuple(got.reads),
                                tuple(got.errors), incomplete, sent_through(proxy),
                                client_release(client, version, cluster.java_clients))
    return run


@dataclass
class _Hold:
    """The proxy's hold of Metadata in the second scene: when it ended, and what the harness wrote then."""

    released: float | None = None
    later: list[ClientRecord] = field(default_factory=list)


def reset_ahead_of_metadata(cluster: Cluster, topic: str, client: str, reset: str, group: str) -> ResetAheadRun:
    """`client`, a member of `group` (no commit) with auto.offset.reset `reset`, resets `topic`-0 while
    its Metadata shows the partition one epoch behind the one ListOffsets returns (see the module
    docstring); returns what it got, sent, read and reported."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, \
            confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        moved = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        written = [ClientRecord(w.offset, w.value.decode())
                   for w in produce(producer, topic, [f"r-{i}".encode() for i in range(RECORDS)]).acked]
        tid = str(rr.topic_id(raw(moved.leader), topic))
        with Proxy.for_cluster(cluster) as proxy:
            t0 = time.monotonic()
            rule = proxy.add(StaleLeaderEpoch(topic=topic, behind=1, count=None))
            proxy.add(UnfencedListOffsets(topic=topic))
            hold = _Hold()
            failed: list[BaseException] = []

            def answered() -> tuple[list[ListOffsetsAnswer], list[float]]:
                answers: list[ListOffsetsAnswer] = []
                at: list[float] = []
                for e in sorted(proxy.recording.exchanges(), key=lambda e: e.started):
                    if e.api == "ListOffsets" and e.response is not None and e.latency is not None:
                        for q, a in partition_pairs(e.request, e.response, topic, tid):
                            answers.append(ListOffsetsAnswer(
                                e.version, q.get("CurrentLeaderEpoch", -1), a.get("Offset", -1),
                                a.get("LeaderEpoch", -1), errors.error_name(a["ErrorCode"]), 0,
                                q.get("Timestamp")))
                            at.append(_at(e.started + e.latency, t0))
                return answers, at

            def during(got: Consumed) -> bool:
                if hold.released is not None or failed:
                    return bool(failed)
                answers, at = answered()
                ok = [t for a, t in zip(answers, at, strict=True) if a.error == "NONE"]
                if not ok:
                    return False
                since = ok[0]
                now = _at(time.monotonic(), t0)
                fetched = [f for f in fetches_sent(proxy, topic, tid, t0) if f.at > since]
                held = [m for m in epochs_learned(proxy, topic, tid, t0) if m.at > since and m.source == METADATA]
                if len(fetched) < ACTED and len(held) < ACTED and now - since < HOLD_S:
                    return False
                try:
                    proxy.remove(rule)
                    hold.released = now
                    hold.later.extend(ClientRecord(w.offset, w.value.decode()) for w in produce(
                        producer, topic, [f"later-{i}".encode() for i in range(LATER)]).acked)
                except Exception as exc:  # noqa: BLE001 - raised once the driver is stopped
                    failed.append(exc)
                return bool(failed)

            got, incomplete, version = read_through(
                cluster, proxy, topic, client, RECORDS + LATER - 1, f"subscribe {{name}} {reset} {group}",
                during=during, timeout=60)
            if failed:
                raise failed[0]
            answers, at = answered()
            fetches = fetches_sent(proxy, topic, tid, t0)
            answers = [ListOffsetsAnswer(a.version, a.current, a.offset, a.epoch, a.error,
                                         len([f for f in fetches if f.at < t]), a.timestamp)
                       for a, t in zip(answers, at, strict=True)]
            validations = tuple(
                Validated(_at(e.started, t0), p.get("CurrentLeaderEpoch", -1), p.get("LeaderEpoch", -1))
                for e in sorted(proxy.recording.exchanges("OffsetForLeaderEpoch"), key=lambda e: e.started)
                for t in (e.request or {}).get("Topics", []) if t.get("Topic") == topic
                for p in t.get("Partitions", []) if p.get("Partition") == 0)
            run = ResetAheadRun(
                client, reset, moved.leader_epoch, rule.fired, hold.released, tuple(answers),
                epochs_learned(proxy, topic, tid, t0), fetches, validations, tuple(written + hold.later),
                tuple(got.reads), tuple(got.errors), tuple(at), incomplete, sent_through(proxy),
                client_release(client, version, cluster.java_clients))
    return run
