"""Situations made by cutting links between nodes while clients still reach every node.

- `zombie_leader`: the KIP-320 situation itself. A leader alone in its ISR is cut off from the
  controller and the other brokers; the controller elects its former follower uncleanly; the cut-off
  leader, a zombie, goes on serving clients at its old epoch: it takes acks=1 writes and answers
  fetches. The consumers of the KIP-320 truncation scenario watch it all; raw probes ask the zombie
  for its log at the new epoch; after the heal both replicas' logs are read.
- `minority_leader`: an acks=all producer writes on while the leader of a 3-replica partition is cut
  off from every other node, through the election on the majority side and the heal.
- `controller_cut_off`: the controller cut off from every broker while clients produce (acks=all)
  and consume, then the heal.

Each returns a record of what happened (writes and their acknowledgements, reads, answers, both
replicas' logs, the timeline); the checks in `harness.checks.network_splits` judge it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, Message, TopicPartition

from harness import confluent, progress
from harness.clients import raw as rr
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster
from harness.cluster.state import PartitionState
from harness.errors import TargetRefused, require_target
from harness.histories.client_reactions import ClientRecord
from harness.histories.network_splits import IsrSample, ZombieFetch, ZombieFetchFrom, ZombieWrite
from harness.histories.observations import Body, TimelineEvent
from harness.histories.text_records import DeliveryReport, LogRecord
from harness.histories.truncation import ConsumerSeen
from harness.nemesis.network_splits import NetworkPartition, unclean_election_by_partition
from harness.nemesis.unclean import UncleanElection
from harness.protocol import errors
from harness.protocol.produce_schema import partition_fields, versions_with_epoch
from harness.protocol.records import RecordBatch, encode_batch, parse_batches
from harness.scenarios.truncation import TruncationHistory, unclean_election_watched
from harness.waiting import Owed, WaitTimeout, wait_until

ZOMBIE_WRITES = 5
ZOMBIE_PREFIX = "zombie-"


def _records(batches: list[RecordBatch]) -> list[LogRecord]:
    return [LogRecord(r.offset, (r.value or b"").decode(errors="replace"))
            for b in batches if not b.is_control for r in b.records]


def _timeline(net: NetworkPartition) -> list[TimelineEvent]:
    """What the nemesis, the observer and the scenario noted, in order, on the nemesis's clock."""
    return [TimelineEvent.of(e) for e in net.events.events]


def _log(cluster: Cluster, broker: int, topic: str, catch_up_to: int | None = None) -> list[LogRecord]:
    """The partition's records as `broker` serves them (a follower up to its high
    watermark, KIP-392), once that reaches `catch_up_to`."""
    with rr.RawConnector(cluster) as raw:
        # Made again for the attempt after one that timed out under load (which closes it): retried on
        # the closed one, the read would fail until the deadline (as ElectLeaders did in `_elect_unclean`).
        client = raw(broker, reconnect=True)
        tid = rr.topic_id(client, topic)

        def read() -> list[LogRecord] | None:
            batches, hw = rr.read_log(client, topic, tid)
            if catch_up_to is not None and hw < catch_up_to:
                return None
            return _records(batches)

        return wait_until(read, 30, lambda: f"broker {broker}'s high watermark reaching {catch_up_to}",
                          owed=Owed.PREMISE)


# -- the zombie leader --------------------------------------------------------------------------


@dataclass
class ZombieProbes:
    """What the zombie said while cut off: its own view, the writes it acknowledged, its answers."""

    zombie: int = -1
    # Its Metadata for the partition: LeaderId, LeaderEpoch and IsrNodes as the wire gave them.
    view: Body = field(default_factory=dict)
    acked: list[LogRecord] = field(default_factory=list)  # acks=1 writes it took
    at_own_epoch: ZombieFetch | None = None  # a Fetch from 0 at its epoch (the premise)
    at_new_epoch: list[ZombieFetchFrom] = field(default_factory=list)  # Fetches at the new leader's epoch
    fetch_advertised: tuple[int, int] = (-1, -1)  # the zombie's Fetch versions (ApiVersions)
    log: list[LogRecord] = field(default_factory=list)  # its log as it served it, after those writes
    # KIP-359: the zombie's Produce partition fields per version it speaks (its own schema), what it
    # advertises, and one acks=1 write per version with CurrentLeaderEpoch at the new leader's epoch.
    produce_fields: dict[int, list[str]] = field(default_factory=dict)
    produce_advertised: tuple[int, int] = (-1, -1)
    writes_at_new_epoch: list[ZombieWrite] = field(default_factory=list)


@dataclass(frozen=True)
class ZombieLeader:
    truncation: TruncationHistory  # the consumers' reads, without the zombie's own writes
    probes: ZombieProbes
    zombie_reads: dict[str, list[ClientRecord]]  # per consumer: the zombie's writes it was served
    old_leader_log: list[LogRecord]  # after the heal, once caught up
    new_leader_log: list[LogRecord]
    timeline: list[TimelineEvent]

    @property
    def election(self) -> UncleanElection:
        return self.truncation.election

    @property
    def only_the_zombie_held(self) -> list[str]:
        """The values the zombie's log held past the divergence point while it was cut off."""
        return [r.value for r in self.probes.log if r.offset >= self.election.divergence_offset]

    def evidence(self) -> str:
        p = self.probes
        return (f"{self.truncation.evidence()}; zombie {p.zombie} saw itself as {p.view}; it acknowledged "
                f"{[a.offset for a in p.acked]}")


def _probe_zombie(cluster: Cluster, topic: str, zombie: int, zombie_epoch: int, new_epoch: int) -> ZombieProbes:
    """Ask the cut-off leader: its view, acks=1 writes (without an epoch, then at the new leader's
    epoch at every Produce version whose schema carries CurrentLeaderEpoch, KIP-359), and Fetch at
    every version that carries CurrentLeaderEpoch (v9 on), at its own epoch and at the new leader's,
    from offset 0 and past its log end."""
    probes = ZombieProbes(zombie)
    with rr.RawConnector(cluster) as raw:
        # Its reads are asked again, on a new connection, when one times out under load; its writes are
        # not (one that timed out may have landed), nor is a read the zombie hung up on (its answer).
        client = raw(zombie, reconnect=True)
        probes.view = {k: v for k, v in rr.again_on_timeout(lambda: rr.partition_metadata(client, topic)).items()
                       if k in ("LeaderId", "LeaderEpoch", "IsrNodes")}
        tid = rr.again_on_timeout(lambda: rr.topic_id(client, topic))
        version = client.max_version("Produce")
        for i in range(ZOMBIE_WRITES):
            value = f"{ZOMBIE_PREFIX}{i}"
            p = rr.produce(client, version, topic, tid, 0, encode_batch([value.encode()]), acks=1).response
            part = p["Responses"][0]["PartitionResponses"][0]
            if part["ErrorCode"] == 0:
                probes.acked.append(LogRecord(part["BaseOffset"], value))
        probes.produce_fields = partition_fields(client.specs, rr.versions(client, "Produce"))
        probes.produce_advertised = client.broker_versions[client.specs.api("Produce").key]
        for v in versions_with_epoch(probes.produce_fields):
            value = f"{ZOMBIE_PREFIX}epoch-{new_epoch}-v{v}"
            ex = rr.produce(client, v, topic, tid, 0, encode_batch([value.encode()]), acks=1, epoch=new_epoch)
            part = ex.response["Responses"][0]["PartitionResponses"][0]
            probes.writes_at_new_epoch.append(ZombieWrite(v, new_epoch, value, errors.error_name(part["ErrorCode"]),
                                                          part.get("BaseOffset", -1)))
        batches, log_end = rr.again_on_timeout(lambda: rr.read_log(client, topic, tid))
        probes.log = _records(batches)
        top = client.max_version("Fetch")
        own = rr.again_on_timeout(lambda: rr.fetch(client, top, topic, tid, 0, 0, zombie_epoch))
        probes.at_own_epoch = ZombieFetch(top, zombie_epoch, errors.error_name(own["ErrorCode"]),
                                          sum(len(b.records) for b in parse_batches(own["Records"])))
        probes.fetch_advertised = client.broker_versions[client.specs.api("Fetch").key]
        for v in rr.versions(client, "Fetch", lowest=9):
            for offset in (0, log_end + 10):
                a = rr.again_on_timeout(lambda v=v, at=offset: rr.fetch(client, v, topic, tid, 0, at, new_epoch))
                probes.at_new_epoch.append(ZombieFetchFrom(
                    v, new_epoch, errors.error_name(a["ErrorCode"]),
                    sum(len(b.records) for b in parse_batches(a["Records"] or b"")), offset))
    return probes


def zombie_leader(cluster: Cluster, topic: str, groups: dict[str, str]) -> ZombieLeader:
    """Run it on `topic` (2 replicas, min.insync.replicas 1, unclean election enabled)."""
    net = NetworkPartition(cluster, watch=(topic, 0))
    probes = ZombieProbes()

    def while_zombie(zombie: int, new_leader: int, new_epoch: int) -> None:
        zombie_epoch = cluster.state.partition_state(topic, 0, zombie).leader_epoch
        found = _probe_zombie(cluster, topic, zombie, zombie_epoch, new_epoch)
        probes.__dict__.update(found.__dict__)
        own = found.at_own_epoch and dataclasses.asdict(found.at_own_epoch)  # the event log's JSON, as before
        net.note("scenario", "zombie probed", acked=[a.offset for a in found.acked], own_epoch=own,
                 new_epoch_errors=sorted({a.error for a in found.at_new_epoch}))

    def elect(c: Cluster, t: str, write_divergent: Callable[[], None]) -> UncleanElection:
        return unclean_election_by_partition(c, t, net, write_divergent=write_divergent, while_zombie=while_zombie)

    with net:
        history = unclean_election_watched(cluster, topic, groups, elect=elect)
    e = history.election
    new_log = _log(cluster, e.new_leader, topic)
    end = new_log[-1].offset + 1 if new_log else 0
    old_log = _log(cluster, e.old_leader, topic, catch_up_to=end)
    zombie_reads = {n: [r for r in o.reads if str(r.value).startswith(ZOMBIE_PREFIX)]
                    for n, o in history.observed.items()}
    judged = {n: ConsumerSeen(tuple(r for r in o.reads if not str(r.value).startswith(ZOMBIE_PREFIX)), o.errors)
              for n, o in history.observed.items()}
    history = dataclasses.replace(history, observed=judged)
    return ZombieLeader(history, probes, zombie_reads, old_log, new_log, _timeline(net))


# -- acks=all on the minority side --------------------------------------------------------------


@dataclass(frozen=True)
class AcknowledgedWrites:
    """Writes through a fault (every delivery report) and the partition's log after the heal."""

    topic: str
    before: PartitionState
    after: PartitionState
    writes: list[DeliveryReport]
    log: list[LogRecord]
    cut_off_log_end: int | None  # the cut-off leader's log end while cut off: what it took, acknowledged or not
    timeline: list[TimelineEvent]

    @property
    def acked(self) -> list[DeliveryReport]:
        return [w for w in self.writes if w.error is None]

    def evidence(self) -> str:
        return (f"{self.topic}: {self.before.leader}@{self.before.leader_epoch} -> {self.after.leader}@"
                f"{self.after.leader_epoch}; {len(self.acked)} of {len(self.writes)} writes acknowledged; "
                f"the cut-off leader's log end while cut off {self.cut_off_log_end}; final log {len(self.log)} records")


class _Writer:
    """An acks=all, idempotent producer whose every delivery report is kept."""

    def __init__(self, cluster: Cluster, topic: str, stack: ExitStack, brokers: list[int] | None = None) -> None:
        self.topic = topic
        self.writes: list[DeliveryReport] = []
        bootstrap = {} if brokers is None else {
            "bootstrap.servers": ",".join("{}:{}".format(*cluster.broker_address(b)) for b in brokers)}
        self.producer = stack.enter_context(confluent.producer({
            **cluster.client_config(), **bootstrap, "acks": "all", "enable.idempotence": True,
            "request.timeout.ms": 5000, "message.timeout.ms": 120000, "topic.metadata.refresh.interval.ms": 1000,
            "linger.ms": 5,
        }, flush_timeout=0))
        self.n = 0

    def write(self, n: int, tag: str) -> None:
        for _ in range(n):
            value = f"{tag}-{self.n}"
            self.n += 1

            def report(err: KafkaError | None, msg: Message, value: str = value) -> None:
                self.writes.append(DeliveryReport(value, msg.offset() if err is None else None,
                                                  None if err is None else err.str()))

            self.producer.produce(self.topic, value.encode(), partition=0, on_delivery=report)
            self.producer.poll(0)

    def finish(self, timeout: float = 150.0) -> None:
        """Every delivery report in, or the scene's premise refused: a write still unanswered is no
        verdict (a gate run beside a soak once had a majority of 2 replicas take more than 60 s)."""
        left = self.producer.flush(timeout)
        require_target(not left, f"{left} of {self.n} writes to {self.topic} had no delivery report after {timeout} s")


def minority_leader(cluster: Cluster, topic: str) -> AcknowledgedWrites:
    """On `topic` (3 replicas, min.insync.replicas 2): write, cut the leader off from every other
    node while a producer that knows every broker writes on; once the majority has elected a new
    leader, a new producer that knows only the majority's brokers writes there too (the new leader's
    log grows past what the cut-off leader took); heal, write again, and read the log back once every
    replica is in sync. Both producers are idempotent, acks=all."""
    before = cluster.state.wait_for_partition(topic, 0, lambda s: len(s.isr) == 3, "3 replicas in sync")
    others = [b for b in cluster.broker_ids if b != before.leader]
    net = NetworkPartition(cluster, watch=(topic, 0))
    cut_off_end = None
    with ExitStack() as stack:
        writer = _Writer(cluster, topic, stack)
        with net:
            writer.write(100, "before")
            writer.finish(30)
            net.isolate(before.leader)
            writer.write(100, "during-election")
            after = cluster.state.wait_for_partition(
                topic, 0, lambda s: s.leader not in (-1, before.leader), "a new leader on the majority side",
                60, broker=others[0])
            net.observe(f"broker {after.leader} elected at epoch {after.leader_epoch}")
            # Made now, and told only of the majority's brokers, it learns the new leader first; a
            # client that already knew the cut-off leader may go on asking it for metadata, and be
            # told it still leads, until the heal.
            majority = _Writer(cluster, topic, stack, brokers=others)
            majority.write(100, "majority-after-election")
            majority.finish(60)
            writer.producer.poll(0)
            cut_off_end = cluster.state.log_end_offset(topic, 0, before.leader)
            acked = sum(1 for w in writer.writes + majority.writes if w.error is None)
            net.note("scenario", "writes acknowledged on the majority side", acked=acked, cut_off_log_end=cut_off_end)
        writer.write(100, "after-heal")
        writer.finish()
    # Agreed by every broker: just healed, the cut-off leader still describes its own past (itself
    # leading at the old epoch) until it has replayed the controller's log, and its log is not yet
    # truncated; read first, that view failed a correct broker in a CI run.
    final = cluster.state.wait_for_partition(topic, 0, lambda s: len(s.isr) == 3 and s.leader >= 0,
                                             "3 replicas in sync", 60, agreed=True)
    log = _log(cluster, final.leader, topic)
    return AcknowledgedWrites(topic, before, final, writer.writes + majority.writes, log, cut_off_end,
                              _timeline(net))


# -- the controller cut off ---------------------------------------------------------------------


@dataclass(frozen=True)
class ControllerCutOff:
    writes: AcknowledgedWrites
    reads_during: list[LogRecord]  # what a consumer read while the controller was cut off
    cut_for: float  # seconds the controller was cut off
    session_timeout: float


def _drain(consumer: Consumer, into: list[LogRecord], wait: float = 0.1) -> int:
    """Poll what the consumer has (appended to `into`); return how many `into` holds."""
    msg = consumer.poll(wait)
    while msg is not None:
        if msg.error() is None:
            into.append(LogRecord(msg.offset(), msg.value().decode()))
        msg = consumer.poll(0)
    return len(into)


def controller_cut_off(cluster: Cluster, topic: str, session_timeout: float = 3.0) -> ControllerCutOff:
    """On `topic` (3 replicas, min.insync.replicas 2): cut the controller off from every broker; write
    (acks=all) and read while it lasts, past twice the brokers' session timeout (the controller
    would fence every broker it stopped hearing), heal, write again, and read the log back."""
    cluster.state.wait_for_partition(topic, 0, lambda s: len(s.isr) == 3, "3 replicas in sync")
    (controller,) = cluster.controller_ids
    net = NetworkPartition(cluster, watch=(topic, 0))
    reads: list[LogRecord] = []
    started, cut_for = time.monotonic(), 0.0
    with ExitStack() as stack:
        writer = _Writer(cluster, topic, stack)
        consumer: Consumer = stack.enter_context(confluent.consumer({
            **cluster.client_config(), "group.id": f"{topic}-reader", "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }))
        consumer.assign([TopicPartition(topic, 0, 0)])
        # An idempotent producer's id comes from the controller (AllocateProducerIds): it has one, and
        # the consumer its connections, before the cut.
        writer.write(10, "before-cut")
        writer.finish(30)
        wait_until(lambda: _drain(consumer, reads) >= 10, 30, lambda: f"the consumer read {len(reads)} of 10 first",
                   owed=Owed.PREMISE)
        # The epoch the partition is led at when the cut begins: the leader may have moved since the topic
        # was made (seen on 3.6.2: 3@0 then 1@1), and "led again" after the heal must be past this one, or
        # the stale view of the cut itself would pass for it and the log be read from a former leader.
        at_cut = cluster.state.wait_for_partition(topic, 0, lambda s: len(s.isr) == 3,
                                                  "3 replicas in sync before the cut")
        with net:
            net.isolate(controller)
            started = time.monotonic()
            progress.step(f"writing and reading while the controller is cut off ({2 * session_timeout:.0f} s)")
            # The workload's length, not a wait for a state: writes go on for two session timeouts.
            during = lambda: [r for r in reads if r.value.startswith("controller-cut-off")]  # noqa: E731
            while time.monotonic() - started < 2 * session_timeout or len(during()) < 20:
                if len(writer.writes) < 10 + 20 * (time.monotonic() - started):  # 20 writes/s
                    writer.write(10, "controller-cut-off")
                    writer.producer.flush(10)
                _drain(consumer, reads, 0.2)
                if time.monotonic() - started > 60:
                    break
            cut_for = time.monotonic() - started
            net.observe("still cut off; writes and reads done")
        # Healed, each broker first learns that the controller fenced it (every partition leaderless),
        # then that it is unfenced (leaders again, at a later epoch): until every broker has seen
        # both, the cluster refuses new topics ("all brokers are currently fenced").
        for b in cluster.broker_ids:
            final = cluster.state.wait_for_partition(
                topic, 0, lambda s: len(s.isr) == 3 and s.leader >= 0 and s.leader_epoch > at_cut.leader_epoch,
                f"led again at an epoch past {at_cut.leader_epoch} (the controller fenced every broker)", 60, broker=b)
        cluster.state.wait_registered(cluster.broker_ids, 60, lambda: None, owed=Owed.PREMISE)
        net.observe("every broker unfenced and the partition led again")
        writer.write(50, "after-heal")
        writer.finish()
    log = _log(cluster, final.leader, topic)
    record = AcknowledgedWrites(topic, at_cut, final, writer.writes, log, None, _timeline(net))
    return ControllerCutOff(record, [r for r in reads if r.value.startswith("controller-cut-off")], cut_for,
                            session_timeout)


# -- a fenced follower that goes on fetching --------------------------------------------------


@dataclass(frozen=True)
class FencedFollower:
    """A follower cut off from the controller only: fenced by it, still fetching from its leader.

    `watched`: what the other brokers said of the partition while the follower, caught up with the
    leader's log end, was fenced;
    `rejoined`: the ISR once the follower was reconnected."""

    topic: str
    leader: int
    follower: int
    watched: list[IsrSample]
    rejoined: PartitionState
    timeline: list[TimelineEvent]


OBSERVE_FENCED = 5.0  # seconds the ISR is watched once the fenced follower has caught up


def fenced_follower(cluster: Cluster, topic: str) -> FencedFollower:
    """On `topic` (3 replicas): cut one in-sync follower off from the controller (not from its leader);
    once the controller has dropped it from the ISR, write and let it catch up with the leader's
    log end, watch the ISR for OBSERVE_FENCED seconds, then reconnect it and wait for it to rejoin."""
    before = cluster.state.wait_for_partition(topic, 0, lambda s: len(s.isr) == 3, "3 replicas in sync")
    (controller,) = cluster.controller_ids
    follower = next(b for b in before.isr if b != before.leader)
    others = [b for b in cluster.broker_ids if b != follower]
    net = NetworkPartition(cluster, watch=(topic, 0))
    watched: list[IsrSample] = []
    with net:
        net.isolate(follower, from_=[controller])
        cluster.state.wait_for_partition(topic, 0, lambda s: follower not in s.isr,
                                         f"follower {follower} out of the ISR", 30, broker=others[0])
        net.observe(f"controller dropped fenced follower {follower} from the ISR")
        with confluent.producer({**cluster.client_config(), "acks": "1"}) as producer:
            produce(producer, topic, [f"while-fenced-{i}".encode() for i in range(20)])
        dropped = cluster.state.partition_state(topic, 0, others[0])
        leader = dropped.leader
        try:
            ends = cluster.state.log_end_offset
            wait_until(lambda: ends(topic, 0, follower) == ends(topic, 0, leader), 30,
                       lambda: f"fenced follower {follower} catching up with leader {leader}", owed=Owed.PREMISE)
        except TargetRefused as exc:
            if dropped.leader_epoch > before.leader_epoch:
                # Before 3.6 the KRaft controller bumped the leader epoch with that ISR shrink (KAFKA-15021):
                # the follower, cut off from the controller, never learns the new epoch and its leader
                # fences its Fetches, so it cannot catch up: the scene cannot be built on that target.
                raise TargetRefused(
                    f"the controller bumped the leader epoch of {topic}-0 from {before.leader_epoch} to "
                    f"{dropped.leader_epoch} when it dropped fenced follower {follower} from the ISR, so the "
                    f"follower, which no longer hears from the controller, is fenced by leader {leader} and "
                    f"never catches up ({exc})") from exc
            raise
        net.observe(f"fenced follower {follower} caught up with leader {leader}")
        started = time.monotonic()

        def readded() -> bool:
            s = cluster.state.partition_state(topic, 0, others[0])
            watched.append(IsrSample(round(time.monotonic() - started, 2), list(s.isr), s.leader, s.leader_epoch,
                                     cluster.state.log_end_offset(topic, 0, follower),
                                     cluster.state.log_end_offset(topic, 0, s.leader)))
            return follower in s.isr

        # The promise is that a state never comes: watched for a bounded time, the timeout is the pass,
        # caught here; the check judges what was watched.
        try:
            wait_until(readded, OBSERVE_FENCED, lambda: f"ISR while {follower} is fenced: {watched[-1:]}",
                       interval=0.25, owed=Owed.HARNESS)
        except WaitTimeout:
            pass
    try:
        rejoined = cluster.state.wait_for_partition(topic, 0, lambda s: follower in s.isr,
                                                    f"follower {follower} back in the ISR", 60, broker=others[0])
        net.observe(f"follower {follower} reconnected and back in the ISR")
    except TargetRefused:
        # A follower that never rejoins is a premise the target refused, which the check names.
        rejoined = cluster.state.partition_state(topic, 0, others[0])
        net.observe(f"follower {follower} reconnected, not back in the ISR after 60 s")
    return FencedFollower(topic, before.leader, follower, watched, rejoined, _timeline(net))
