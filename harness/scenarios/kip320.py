"""KIP-320 situations: partitions with an epoch lineage, the probes that ask about it, and committed epochs.

Two lineages feed the KIP-320 broker checks. `leader_moves` changes leaders by reassignment and
preferred election only (no fault, so it runs on any target that applies reassignments).
`nemesis_lineage` changes them the hard ways: a clean stop, a crash, a failback, and a forced
unclean election that truncates the old leader. Every write is acknowledged by all replicas and
lands in one known epoch: the partition's epoch is read before and after it, and a write whose
epoch moved under it is an error.

The probes read a lineage back: epoch-validation probes send one request per (version,
CurrentLeaderEpoch) to the leader and to an in-sync follower; `end_offsets` and
`list_offsets_epochs` ask the leader about each past epoch; `replica_logs` reads the log from
every in-sync replica. `committed_epochs` commits (offset, epoch) pairs with every OffsetCommit
and TxnOffsetCommit version and reads each back with every OffsetFetch version.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Producer

from harness import confluent
from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster, NodeState
from harness.cluster.state import require_leader_epoch
from harness.errors import ClusterError, NotSupported, PromiseUnkept, TargetRefused, require_target
from harness.histories.authorization import OffsetsForEpochAsUser, OffsetsForEpochAuthorization
from harness.histories.epoch_validation import EpochProbe
from harness.histories.epochs import Append, EpochLineage, Step
from harness.histories.leader_answers import EndOffsetAnswers, ListOffsetsAnswers, ListOffsetsAtTime
from harness.histories.metadata import MetadataAnswer
from harness.histories.observations import Body
from harness.histories.offset_commits import CommitRead, CommitRoundTrip, SentCommit
from harness.histories.version_needs import (
    CURRENT_LEADER_EPOCH,
    FETCH_FROM_FOLLOWER,
    LIST_OFFSETS_LEADER_EPOCH,
    Offered,
    require_offered,
)
from harness.nemesis.faults import Crash, LeaderFailover
from harness.nemesis.leadership import elect_preferred, move_leader
from harness.nemesis.unclean import UncleanElection, force_unclean_election
from harness.protocol.client import RawClient
from harness.protocol.records import RecordBatch
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from harness.scenarios.advertised import offered
from harness.waiting import Owed, wait_until

RECORDS_PER_EPOCH = 5
# Every case the KIP names: no epoch (-1), the current one, an older one, a newer one.
CASES = ("unset", "current", "older", "newer")
FIRST_WITH_EPOCH = {"OffsetCommit": 6, "TxnOffsetCommit": 2, "OffsetFetch": 5}
TV2_TXN_OFFSET_COMMIT = 5  # KIP-890: from v5 the group coordinator adds itself to the transaction


# -- lineages --------------------------------------------------------------------------------


class _LineageWriter:
    """Writes and observes one partition's lineage through a raw connection to every broker."""

    def __init__(self, cluster: Cluster, raw: rr.RawConnector, producer: Producer, topic: str) -> None:
        self.cluster = cluster
        self.raw = raw
        self.producer = producer
        self.topic = topic
        self.appends: list[Append] = []
        self.steps: list[Step] = []
        self._clients: dict[int, RawClient] = {}

    def _client(self, broker: int) -> RawClient:
        if broker not in self._clients or self._clients[broker].closed:
            self._clients[broker] = self.raw(broker)
        return self._clients[broker]

    def write(self, tag: str, n: int = RECORDS_PER_EPOCH) -> None:
        topic = self.topic
        # Every check of a lineage judges the epochs it records: a leader at no epoch refuses them all
        # (test_every_metadata_version_gives_the_current_leader_epoch judges the epoch itself).
        before = require_leader_epoch(self.cluster.state.partition_state(topic))
        written = produce(self.producer, topic, [f"{tag}-{i}".encode() for i in range(n)])
        after = self.cluster.state.partition_state(topic)
        if written.failed or after.leader_epoch != before.leader_epoch:
            raise ClusterError(
                f"write '{tag}' to {topic} did not land in one epoch: epoch {before.leader_epoch} -> "
                f"{after.leader_epoch}, failed {written.failed[:3]}"
            )
        offsets = [w.offset for w in written.acked]
        self.appends.append(Append(min(offsets), max(offsets), before.leader_epoch, before.leader))

    def observe(self, step: str) -> None:
        """Record each running broker's own Metadata epoch, once they all agree (or as they stand after 15 s)."""
        topic = self.topic
        seen: dict[int, int] = {}
        leader = [-1]

        def agreed() -> bool:
            seen.clear()
            for b in self.cluster.state.running_brokers():
                p = rr.partition_metadata(self._client(b), topic)
                seen[b] = p["LeaderEpoch"]
                leader[0] = p["LeaderId"]
            return len(set(seen.values())) == 1

        try:
            wait_until(agreed, 15, lambda: f"{topic}: brokers' epochs {seen}", owed=Owed.PROMISE,
                       promise="kip320.metadata.leader-epoch")
        except PromiseUnkept:
            pass  # the disagreement itself is recorded below; the Metadata check judges it
        self.steps.append(Step(step, leader[0], dict(seen)))

    def lineage(
        self, name: str, topic_id: uuid.UUID, unclean: UncleanElection | None = None, refused: str | None = None,
        unsupported: bool = False,
    ) -> EpochLineage:
        return EpochLineage(name, self.topic, topic_id, tuple(self.appends), tuple(self.steps), unclean, refused,
                            unsupported)


def leader_moves(cluster: Cluster, topic: str, moves: int = 3) -> EpochLineage:
    """Write in the first epoch, then `moves` times: move the leader to the next in-sync replica, write.

    `topic`: 3 replicas. A target that will not move the leader (one broker, reassignment not
    applied) gives a lineage of one epoch, with its refusal in `refused`: what needs no move is
    still judged on it.
    """
    raw = rr.RawConnector(cluster)
    try:
        with (confluent.producer({**cluster.client_config(), "acks": "all"}) as producer,
              confluent.admin(cluster.client_config()) as admin):
            mover = raw(cluster.broker_ids[0])
            tid = rr.topic_id(mover, topic)
            w = _LineageWriter(cluster, raw, producer, topic)
            w.write("created")
            w.observe("created")
            for i in range(moves):
                try:
                    state = move_leader(cluster, mover, admin, topic)
                except NotSupported as exc:
                    return w.lineage("leader-moves", tid, refused=exc.evidence, unsupported=True)
                except TargetRefused as exc:
                    if i:
                        raise  # the target moved a leader before: refusing the next one is no premise
                    return w.lineage("leader-moves", tid, refused=str(exc))
                w.observe(f"leader move to {state.leader}")
                w.write(f"move{i}")
            return w.lineage("leader-moves", tid)
    finally:
        raw.close()


def unmoved_lineage(cluster: Cluster, topic: str, refused: str) -> EpochLineage:
    """A new partition's lineage of no move, for a check that judges what needs none where the
    leader-moves scene was refused (`refused` says why): its Metadata is still asked at every version."""
    with rr.RawConnector(cluster) as raw:
        tid = rr.topic_id(raw(), topic)
    return EpochLineage("created", topic, tid, (), (), refused=refused)


def nemesis_lineage(cluster: Cluster, topic: str) -> EpochLineage:
    """Elections by clean stop, failback, crash and forced unclean election, with writes in each epoch.

    The topic has two replicas, min.insync.replicas=1 and unclean election enabled, as the
    unclean-election recipe needs. Every node runs again when this returns.
    """
    config = cluster.client_config()
    raw = rr.RawConnector(cluster)
    try:
        with (confluent.producer({**config, "acks": "all"}) as producer,
              confluent.producer({**config, "acks": "1", "enable.idempotence": False}) as divergent,
              confluent.admin(config) as admin):
            tid = rr.topic_id(raw(cluster.broker_ids[0]), topic)
            w = _LineageWriter(cluster, raw, producer, topic)
            replicas = set(cluster.state.partition_state(topic).replicas)
            w.write("created")
            w.observe("created")

            old, _, _, _ = LeaderFailover(cluster, topic).run()
            w.observe(f"clean stop of leader {old}")
            w.write("after-clean-stop")
            cluster.start_node(old)
            cluster.state.wait_for_isr(topic, 0, replicas)

            state = elect_preferred(cluster, admin, topic)
            w.observe(f"failback to preferred leader {state.leader}")
            w.write("after-failback")

            crash = Crash(cluster, "leader", topic)
            crashed = crash.inject()
            before = w.steps[-1]
            cluster.state.wait_for_partition(
                topic, 0,
                lambda s: s.leader not in (-1, crashed) and s.leader_epoch > max(before.epochs.values()),
                f"a leader other than the crashed {crashed}",
            )
            w.observe(f"crash of leader {crashed}")
            w.write("after-crash")
            crash.heal()
            cluster.state.wait_for_isr(topic, 0, replicas)

            unclean = force_unclean_election(
                cluster, topic,
                write_divergent=lambda: produce(divergent, topic, [b"divergent"] * RECORDS_PER_EPOCH),
            )
            w.observe(f"unclean election of {unclean.new_leader}")
            w.write("after-unclean")
            return w.lineage("nemesis", tid, unclean)
    finally:
        raw.close()
        for b in cluster.broker_ids:
            if cluster.node_state(b) is not NodeState.RUNNING:
                cluster.start_node(b)


# -- reading a lineage back ------------------------------------------------------------------


def _seen_by(raw: rr.RawConnector, broker: int, topic: str) -> Body:
    """The partition as `broker`'s own Metadata answer gives it (LeaderId, LeaderEpoch, IsrNodes)."""
    return rr.partition_metadata(raw(broker), topic)


def _blob(batches: list[RecordBatch]) -> bytes:
    return b"".join(b.encode() for b in batches)


def _leader_and_follower(raw: rr.RawConnector, topic: str, need_follower: bool = True) -> tuple[int, int, int]:
    """(leader, an in-sync follower, epoch), where leader and follower agree on the epoch. Without
    an in-sync follower (a one-broker target): `TargetRefused` if `need_follower`, else follower -1."""
    p = _seen_by(raw, raw.cluster.state.running_brokers()[0], topic)
    p = _seen_by(raw, p["LeaderId"], topic)
    follower = next((b for b in p["IsrNodes"] if b != p["LeaderId"]), None)
    if follower is None:
        if need_follower:
            raise TargetRefused(f"{topic} has no in-sync follower to ask (ISR {p['IsrNodes']}, "
                                f"{len(raw.cluster.broker_ids)} broker(s))")
        return p["LeaderId"], -1, p["LeaderEpoch"]
    theirs = _seen_by(raw, follower, topic)["LeaderEpoch"]
    require_target(theirs == p["LeaderEpoch"], f"{topic} has no in-sync follower that agrees with leader "
                                               f"{p['LeaderId']} on its epoch {p['LeaderEpoch']}: follower {follower} "
                                               f"says {theirs}")
    return p["LeaderId"], follower, p["LeaderEpoch"]


def end_offsets(cluster: Cluster, lineage: EpochLineage) -> EndOffsetAnswers:
    """OffsetsForLeaderEpoch (at every version from v2, with the current epoch) from the leader for
    every epoch in its log, the current one, the next one and one far above every known epoch."""
    raw = rr.RawConnector(cluster)
    try:
        leader, _, epoch = _leader_and_follower(raw, lineage.topic, need_follower=False)
        client = raw(leader)
        batches, log_end = rr.read_log(client, lineage.topic, lineage.topic_id)
        asked = sorted({b.partition_leader_epoch for b in batches} | {epoch, epoch + 1, epoch + 7})
        by_version = {
            v: {e: rr.offsets_for_leader_epoch(client, v, lineage.topic, 0, e, current_epoch=epoch) for e in asked}
            for v in rr.versions(client, "OffsetForLeaderEpoch", 2)
        }
        return EndOffsetAnswers(lineage.name, leader, epoch, 0, log_end, _blob(batches), by_version)
    finally:
        raw.close()


def metadata_versions(cluster: Cluster, lineage: EpochLineage) -> list[MetadataAnswer]:
    """The partition's leader and epoch as every running broker's Metadata gives them, at every version
    from v7 (the first with LeaderEpoch) each speaks."""
    raw = rr.RawConnector(cluster)
    try:
        out: list[MetadataAnswer] = []
        advertised = {}
        for b in cluster.state.running_brokers():
            client = raw(b)
            advertised[b] = client.broker_versions[client.specs.api("Metadata").key]
            for v in rr.versions(client, "Metadata", 7):
                t = rr.metadata(client, lineage.topic, v)
                p = next(p for p in t["Partitions"] if p["PartitionIndex"] == 0)
                out.append(MetadataAnswer(b, v, p["LeaderId"], p["LeaderEpoch"], p["ErrorCode"],
                                          tuple(p["ReplicaNodes"])))
        if advertised and not out:
            raise NotSupported("the leader epoch in Metadata (v7 and later, KIP-320)",
                               "Metadata versions advertised: " + ", ".join(
                                   f"broker {b} v{lo}-v{hi}" for b, (lo, hi) in sorted(advertised.items())))
        return out
    finally:
        raw.close()


def list_offsets_epochs(cluster: Cluster, lineage: EpochLineage) -> ListOffsetsAnswers:
    """ListOffsets from the leader, with the current epoch, at every version from v4 (the first with
    LeaderEpoch) the leader speaks: EARLIEST, LATEST, and the base timestamp of every data batch."""
    raw = rr.RawConnector(cluster)
    try:
        leader, _, epoch = _leader_and_follower(raw, lineage.topic, need_follower=False)
        client = raw(leader)
        # A leader that advertises no ListOffsets v4+ returns no epoch: "not supported", its range the evidence.
        require_offered(LIST_OFFSETS_LEADER_EPOCH, offered(client, leader, "ListOffsets"))
        batches, log_end = rr.read_log(client, lineage.topic, lineage.topic_id)
        times = [b.base_timestamp for b in batches if not b.is_control]
        answers = [
            ListOffsetsAtTime(version, ts, rr.list_offsets(client, version, lineage.topic, 0, ts, current_epoch=epoch))
            for version in rr.versions(client, "ListOffsets", LIST_OFFSETS_LEADER_EPOCH.first)
            for ts in [EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, *times]
        ]
        return ListOffsetsAnswers(leader, epoch, log_end, _blob(batches), answers)
    finally:
        raw.close()


@dataclass(frozen=True)
class ReplicaLogs:
    """The partition's log as each in-sync replica serves it, the leader first; `followers_offered`:
    each in-sync follower's Fetch range (one without KIP-392's v11 serves no consumer: left unread)."""

    lineage: str
    leader: int
    log_end: int
    logs: dict[int, list[RecordBatch]]
    followers_offered: tuple[Offered, ...] = ()

    def role(self, broker: int) -> str:
        return "leader" if broker == self.leader else "follower"

    @staticmethod
    def blob(batches: list[RecordBatch]) -> bytes:
        """The batches re-encoded, as the recorded answers keep them."""
        return _blob(batches)


def replica_logs(cluster: Cluster, lineage: EpochLineage) -> ReplicaLogs:
    """Read the log (Fetch at the top version) from the leader and from every in-sync follower, each
    once its high watermark has reached the leader's."""
    raw = rr.RawConnector(cluster)
    try:
        leader = _seen_by(raw, cluster.state.running_brokers()[0], lineage.topic)["LeaderId"]
        followers = [b for b in _seen_by(raw, leader, lineage.topic)["IsrNodes"] if b != leader]
        if cluster.capabilities.replication is False:
            followers = []  # one log per partition, served by its leader: there is no other to read
        leader_log, log_end = rr.read_log(raw(leader), lineage.topic, lineage.topic_id)
        logs = {leader: leader_log}
        # KIP-392: a follower serves a consumer's Fetch from v11 only (NOT_LEADER_OR_FOLLOWER below): one that
        # advertises none is not read, its range kept for the check's "not supported".
        followers_offered = tuple(o for f in followers for o in offered(raw(f), f, "Fetch"))
        followers = [o.broker for o in followers_offered if FETCH_FROM_FOLLOWER.met_by(o)]

        def caught_up(reader: RawClient) -> list[RecordBatch] | None:
            batches, high_watermark = rr.read_log(reader, lineage.topic, lineage.topic_id)
            return batches if high_watermark >= log_end else None

        for follower in followers:
            # A follower learns the high watermark on its next fetch; read it once it has caught up, on
            # one connection made again after an attempt that timed out (rather than one per attempt).
            reader = raw(follower, reconnect=True)
            logs[follower] = wait_until(
                lambda r=reader: caught_up(r), 15,
                lambda f=follower: f"follower {f}'s high watermark reaching the leader's {log_end}",
                owed=Owed.PREMISE,
            )
        return ReplicaLogs(lineage.name, leader, log_end, logs, followers_offered)
    finally:
        raw.close()


# -- epoch validation ------------------------------------------------------------------------


def requested_epochs(current: int, cases: tuple[str, ...] = CASES) -> list[int]:
    """The CurrentLeaderEpoch of each case in `cases` (of `CASES`)."""
    epochs = {"unset": rr.NO_EPOCH, "current": current, "older": current - 1, "newer": current + 1}
    return [epochs[c] for c in cases]


def _probe(
    client: RawClient, broker: int, role: str, api: str, lowest: int, current: int,
    send: Callable[[int, int], Body], epoch_field_from: int, cases: tuple[str, ...],
) -> list[EpochProbe]:
    """Send `send(version, epoch)` for each version from `lowest` and each requested epoch; versions
    before `epoch_field_from` carry no CurrentLeaderEpoch and are sent once, without one."""
    answers = []
    for version in rr.versions(client, api, lowest):
        epochs = requested_epochs(current, cases) if version >= epoch_field_from else [rr.NO_EPOCH]
        for epoch in epochs:
            answers.append(EpochProbe(api, version, broker, role, epoch, current, send(version, epoch)))
    return answers


def _probe_api(client: RawClient, broker: int, role: str, api: str, h: EpochLineage, current: int,
               lowest: int | None, cases: tuple[str, ...]) -> list[EpochProbe]:
    if api == "Fetch":
        return _probe(
            client, broker, role, api, 0 if lowest is None else lowest, current,
            lambda v, e: rr.fetch(client, v, h.topic, h.topic_id, 0, 0, current_epoch=e), epoch_field_from=9,
            cases=cases,
        )
    if api == "OffsetForLeaderEpoch":
        return _probe(
            client, broker, role, api, 2 if lowest is None else lowest, current,
            lambda v, e: rr.offsets_for_leader_epoch(client, v, h.topic, 0, current, current_epoch=e),
            epoch_field_from=2, cases=cases,
        )
    if api == "ListOffsets":
        return _probe(
            client, broker, role, api, 4 if lowest is None else lowest, current,
            lambda v, e: rr.list_offsets(client, v, h.topic, 0, -1, current_epoch=e), epoch_field_from=4,
            cases=cases,
        )
    raise ValueError(f"no epoch-validation probe for {api}")


def _wait_for_follower_high_watermark(
    raw: rr.RawConnector, h: EpochLineage, leader: int, follower: int, epoch: int
) -> None:
    """A follower serves up to its own high watermark, which trails the leader's by a fetch round:
    the probes start once it has caught up, so that "served" means records came back."""

    # One connection each, made again after an attempt that timed out (rather than one per attempt).
    readers = [raw(b, reconnect=True) for b in (leader, follower)]

    def high_watermarks() -> tuple[int, int]:
        return tuple(  # type: ignore[return-value]
            rr.fetch(c, 11, h.topic, h.topic_id, 0, 0, current_epoch=epoch)["HighWatermark"] for c in readers
        )

    wait_until(lambda: len(set(high_watermarks())) == 1 and high_watermarks()[0] > 0, 30,
               lambda: f"leader {leader} and follower {follower} high watermarks {high_watermarks()}",
               owed=Owed.PREMISE)


@dataclass(frozen=True)
class ValidationProbes:
    """Epoch-validation answers from a leader and an in-sync follower that agree on the partition's epoch."""

    topic: str
    leader: int
    follower: int
    epoch: int
    answers: list[EpochProbe]


def epoch_validation(
    cluster: Cluster, lineage: EpochLineage, api: str, roles: tuple[str, ...] = ("leader", "follower"),
    lowest: int | None = None, cases: tuple[str, ...] = CASES,
) -> ValidationProbes:
    """Probe `api` (Fetch, OffsetForLeaderEpoch or ListOffsets) on the leader and/or an in-sync
    follower of `lineage`'s partition: one request per version (from `lowest`, default the first
    version the probe knows) and requested epoch (`cases`). A follower is probed with Fetch only
    once its high watermark has caught up with the leader's. Where there is no follower (one
    broker) only the leader is probed; a probe of followers alone raises `TargetRefused`. The
    older case needs a past epoch: `lineage.require_moves` raises `TargetRefused` without one."""
    if "older" in cases:
        lineage.require_moves(f"asking {api} with an older CurrentLeaderEpoch")
    caps = cluster.capabilities
    if caps.replication is False:  # no follower holds a replica of its own to answer from
        if "leader" not in roles:
            raise NotSupported(f"{api} to a follower replica", caps.no_replication)
        roles = ("leader",)
    raw = rr.RawConnector(cluster)
    try:
        leader, follower, epoch = _leader_and_follower(raw, lineage.topic, need_follower="leader" not in roles)
        roles = tuple(r for r in roles if r == "leader" or follower >= 0)
        if set(cases) - {"unset"}:  # every case but -1 needs the field: "not supported" where a broker asked lacks it
            asked = [leader if r == "leader" else follower for r in roles]
            require_offered(CURRENT_LEADER_EPOCH[api], [o for b in asked for o in offered(raw(b), b, api)])
        if api == "Fetch" and "follower" in roles:
            _wait_for_follower_high_watermark(raw, lineage, leader, follower, epoch)
        answers: list[EpochProbe] = []
        for role in roles:
            broker = leader if role == "leader" else follower
            answers += _probe_api(raw(broker), broker, role, api, lineage, epoch, lowest, cases)
        return ValidationProbes(lineage.topic, leader, follower, epoch, answers)
    finally:
        raw.close()


# -- committed epochs ------------------------------------------------------------------------


@dataclass(frozen=True)
class CommittedEpochs:
    """Each commit read back by each OffsetFetch version."""

    topic: str
    group: str
    rounds: list[CommitRoundTrip]


def _txn_commit(
    raw: rr.RawConnector, version: int, txn_id: str, group: str, gcoord: RawClient,
    topic: str, tid: uuid.UUID, offset: int, epoch: int, metadata: str | None = None,
) -> int:
    """Commit (offset, epoch, metadata) in a transaction with TxnOffsetCommit `version`, then commit
    the transaction; the TxnOffsetCommit partition error code."""
    txn = tx.begin(raw, txn_id, reconnect=True)  # its steps are setup: sent again after a timeout
    # Before KIP-890's v5 the producer adds the group to its transaction itself, and ends it at v4.
    legacy = version < TV2_TXN_OFFSET_COMMIT
    if legacy:
        txn.add_group(group)
    key = {"TopicId": tid} if version >= 6 else {"Name": topic}
    part = {"PartitionIndex": 0, "CommittedOffset": offset, "CommittedLeaderEpoch": epoch,
            "CommittedMetadata": metadata}
    # The topic and its partition exist: a coordinator whose metadata cache has not caught up may
    # answer UNKNOWN_TOPIC_ID (KIP-1319) or UNKNOWN_TOPIC_OR_PARTITION, which a client sends again.
    ex, _ = tx.txn_offset_commit_settled(gcoord, version, txn, group, [{**key, "Partitions": [part]}],
                                         lambda _topic, _partition, code: code in tx.TOPIC_RETRIABLE)
    code = ex.response["Topics"][0]["Partitions"][0]["ErrorCode"]
    txn.end(code == 0, min(4, txn.coordinator.max_version("EndTxn")) if legacy else None)
    return code


def committed_epochs(
    cluster: Cluster, topic: str, group: str, transactional_id: Callable[[str], str], api: str = "OffsetCommit",
) -> CommittedEpochs:
    """Commit its own (offset, epoch, metadata) to `group` with each version of `api`: OffsetCommit (v6+), or
    TxnOffsetCommit (v2+) in a committed transaction (`transactional_id(hint)` names each one);
    after each commit, read it back with every OffsetFetch version (v5+). A target without
    transactions raises `NotSupported` for TxnOffsetCommit. A commit the coordinator refuses is a round
    whose answer is that refusal."""
    raw = rr.RawConnector(cluster)
    try:
        # Reconnecting: the coordinator lookup (FindCoordinator) is asked again after a timeout.
        any_broker = raw(cluster.state.running_brokers()[0], reconnect=True)
        tid = rr.topic_id(any_broker, topic)
        gcoord = raw(tx.coordinator_id(any_broker, group, 0))
        # Newest first: RequireStable (v7+) waits out a transaction's markers, which land after EndTxn
        # returns; the versions without it then read the settled commit.
        reads = sorted(rr.versions(gcoord, "OffsetFetch", FIRST_WITH_EPOCH["OffsetFetch"]), reverse=True)
        rounds: list[CommitRoundTrip] = []

        def read_back(commit: str, code: int, offset: int, epoch: int, metadata: str) -> None:
            sent = SentCommit(offset, epoch, metadata)
            if code != 0:
                # A commit refused keeps nothing: judged by the checks as this round's answer, not a
                # broken scene (librdkafka's mock refuses an epoch other than the current one).
                refused = CommitRead(None, None, code, None)
                rounds.append(CommitRoundTrip(commit, f"{commit}'s own answer", sent, refused))
                return
            for fv in reads:
                rounds.append(CommitRoundTrip(commit, f"OffsetFetch v{fv}", sent,
                                              CommitRead(**rr.offset_fetch(gcoord, fv, group, topic, tid, 0))))

        if api == "OffsetCommit":
            for v in rr.versions(gcoord, "OffsetCommit", FIRST_WITH_EPOCH["OffsetCommit"]):
                offset, epoch, metadata = 100 + v, 10 + v, f"kcts OffsetCommit v{v}"
                code = rr.offset_commit(gcoord, v, group, topic, tid, 0, offset, epoch, metadata)
                read_back(f"OffsetCommit v{v}", code, offset, epoch, metadata)
            return CommittedEpochs(topic, group, rounds)
        tx.require_transactions(any_broker)
        for v in rr.versions(gcoord, "TxnOffsetCommit", FIRST_WITH_EPOCH["TxnOffsetCommit"]):
            offset, epoch, metadata = 200 + v, 30 + v, f"kcts TxnOffsetCommit v{v}"
            txn_id = transactional_id(f"kip320-committed-epoch-{v}")
            code = _txn_commit(raw, v, txn_id, group, gcoord, topic, tid, offset, epoch, metadata)
            read_back(f"TxnOffsetCommit v{v}", code, offset, epoch, metadata)
        return CommittedEpochs(topic, group, rounds)
    finally:
        raw.close()


# -- who may ask OffsetsForLeaderEpoch -------------------------------------------------------


def offsets_for_epoch_authorization(cluster: Cluster, acls: Any) -> OffsetsForEpochAuthorization:
    """On a SASL cluster with `acls` (harness.scenarios.kip1319.AclSetup): write 5 records to partition 0
    of each topic as the admin, then ask the leader, as the user, at the top version (ReplicaId is v3+)."""
    with confluent.producer(cluster.client_config()) as producer:
        for topic in (acls.allowed, acls.denied):
            produce(producer, topic, [b"x"] * 5)
    answers = []
    # With the consumer's ReplicaId (-1), the debug id (-2) and a broker's id.
    with rr.RawConnector(cluster) as admin, rr.RawConnector(cluster, user=acls.user) as raw:
        for topic, allowed in ((acls.allowed, True), (acls.denied, False)):
            p = rr.partition_metadata(admin(), topic)
            leader, epoch = p["LeaderId"], p["LeaderEpoch"]
            log_end = cluster.state.log_end_offset(topic, 0, leader)
            client = raw(leader)
            version = client.max_version("OffsetForLeaderEpoch")
            for replica_id in (-1, -2, leader):
                body = {"ReplicaId": replica_id, "Topics": [{"Topic": topic, "Partitions": [
                    {"Partition": 0, "CurrentLeaderEpoch": -1, "LeaderEpoch": epoch}]}]}
                part = client.send("OffsetForLeaderEpoch", version, body)["Topics"][0]["Partitions"][0]
                answers.append(OffsetsForEpochAsUser(replica_id, topic, allowed, version, log_end, epoch, part))
    return OffsetsForEpochAuthorization(acls.user, answers)
