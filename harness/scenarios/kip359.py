"""KIP-359 situations: the target's Produce schema, epoch probes, a former leader asked to append, and
idempotent producers writing through failovers.

- `produce_schema`: the Produce versions a broker speaks, with its own schema (the check reads the
  partition fields from it).
- `produce_epoch_probes`: after one leader move (so that an older epoch exists), one Produce per
  version with CurrentLeaderEpoch and per requested epoch (`kip320.CASES`) to the leader.
- `former_leader_produce`: after a leader move, one Produce per version to the replica that led
  before, and what Metadata says of the leader now.
- `old_version_produce`: after a leader move (epoch above 0), one acks=all Produce to the leader per
  version without CurrentLeaderEpoch in the target's own schema, then the log read back.
- `failover_writes`: a producer of each client stack judged writes the same partition at once
  (librdkafka of the run's confluent-kafka release, franz-go, and the Java client of the target's
  Java-clients version, each in a kcts producer driver), while its leader
  is crashed, stopped and paused in turn. Between faults each
  must make progress, so that every failover hits writes in flight. Each fault moves leadership
  (the controller fences a crashed or paused broker within seconds), is healed, and the partition
  is back to three in-sync replicas before the next. The log is then read raw, whole.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field

from harness import confluent, session
from harness.clients import raw as rr
from harness.clients import stacks
from harness.clients.driver import ClientDriver, stopped_on_exit
from harness.cluster.base import Cluster
from harness.cluster.state import PartitionState
from harness.errors import NotSupported, TargetRefused, require_target
from harness.histories.epoch_validation import EpochProbe
from harness.histories.former_leader import FormerLeaderAnswer
from harness.histories.kip359 import OldVersionAppend, OldVersionProduce
from harness.histories.observations import Read
from harness.histories.text_records import Ack, LogRecord
from harness.nemesis.faults import Fault, node_faults, resolve_victim
from harness.nemesis.leadership import move_leader, move_leader_away
from harness.protocol.exceptions import DecodeError
from harness.protocol.produce_schema import EPOCH_FIELD, partition_fields
from harness.protocol.records import encode_batch
from harness.protocol.spec import SpecSet
from harness.scenarios.kip320 import requested_epochs
from harness.waiting import Owed, wait_until

PROGRESS = 100  # acknowledged writes each producer must add between two faults


# -- the Produce schema and epoch probes -----------------------------------------------------


@dataclass(frozen=True)
class ProduceSchema:
    """The Produce versions a broker and our spec set both speak, the spec set, and what the broker advertises."""

    broker: int
    specs: SpecSet
    spoken: list[int]
    advertised: tuple[int, int]


def produce_schema(cluster: Cluster) -> ProduceSchema:
    raw = rr.RawConnector(cluster)
    try:
        broker = cluster.state.running_brokers()[0]
        client = raw(broker)
        spoken = rr.versions(client, "Produce")
        advertised = client.broker_versions[client.specs.api("Produce").key]
        return ProduceSchema(broker, client.specs, spoken, advertised)
    finally:
        raw.close()


@dataclass(frozen=True)
class ProduceEpochProbes:
    """Produce answers of the leader, one per version and requested epoch, after one leader move (`state`)."""

    topic: str
    state: PartitionState
    answers: list[EpochProbe]


def produce_epoch_probes(cluster: Cluster, topic: str, versions: list[int]) -> ProduceEpochProbes:
    """Move `topic`'s leader (an epoch above 0, so that an older one exists), then send the leader one
    acks=all Produce per version in `versions` and per requested epoch."""
    raw = rr.RawConnector(cluster)
    try:
        with confluent.admin(cluster.client_config()) as admin:
            state = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        leader = raw(state.leader)
        tid = rr.topic_id(leader, topic)
        answers: list[EpochProbe] = []
        for version in versions:
            for epoch in requested_epochs(state.leader_epoch):
                ex = rr.produce(leader, version, topic, tid, 0, encode_batch([b"kip359"]), epoch=epoch)
                p = ex.response["Responses"][0]["PartitionResponses"][0]
                answers.append(EpochProbe("Produce", version, state.leader, "leader", epoch, state.leader_epoch, p))
        return ProduceEpochProbes(topic, state, answers)
    finally:
        raw.close()


@dataclass(frozen=True)
class FormerLeaderProduce:
    """Produce answers of a replica that no longer leads, one per version, and the leader as its own
    Metadata gives it, with its endpoint."""

    topic: str
    former: int
    answers: list[FormerLeaderAnswer]
    leader: int
    epoch: int
    endpoint: tuple[str, int]


def former_leader_produce(cluster: Cluster, topic: str) -> FormerLeaderProduce:
    """Move `topic`'s leader, wait until the former leader knows, then send it one Produce per version."""
    raw = rr.RawConnector(cluster)
    try:
        former = cluster.state.partition_state(topic).leader
        with confluent.admin(cluster.client_config()) as admin:
            state = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        # The former leader must know it no longer leads, or it would take the write.
        cluster.state.wait_for_partition(topic, 0, lambda s: s.leader == state.leader, f"broker {former} sees the move",
                                         broker=former)
        # The truth the former leader's hint is held to is the new leader's own Metadata, once it shows
        # the move: under load a broker can lead before its Metadata cache says so (a soak beside busy
        # cores read "leader 2 at epoch 0" from the new leader 3 and failed a correct hint of (3, 1)).
        cluster.state.wait_for_partition(
            topic, 0, lambda s: s.leader == state.leader and s.leader_epoch >= state.leader_epoch,
            f"broker {state.leader} sees itself lead at epoch {state.leader_epoch}", broker=state.leader)
        truth = rr.partition_metadata(raw(state.leader), topic)
        client = raw(former)
        tid = rr.topic_id(client, topic)
        answers: list[FormerLeaderAnswer] = []
        for version in rr.versions(client, "Produce"):
            try:
                ex = rr.produce(client, version, topic, tid, 0, encode_batch([f"to-former-v{version}".encode()]))
            except DecodeError as exc:
                # An answer that is not a Produce response of the version asked is the target's answer
                # at that version (librdkafka's mock writes v5 without LogStartOffset); the raw client
                # closed the connection, so the next version gets a new one.
                answers.append(FormerLeaderAnswer(version, former, unreadable=str(exc)))
                client = raw(former)
                continue
            answers.append(FormerLeaderAnswer(version, former, ex.response["Responses"][0]["PartitionResponses"][0],
                                              ex.response.get("NodeEndpoints")))
        endpoint = cluster.probe_address(truth["LeaderId"])
        return FormerLeaderProduce(topic, former, answers, truth["LeaderId"], truth["LeaderEpoch"], endpoint)
    finally:
        raw.close()


def old_version_produce(cluster: Cluster, topic: str) -> OldVersionProduce:
    """Move `topic`'s leader (its epoch above 0), then send the leader one acks=all Produce of one
    record per version whose partitions carry no CurrentLeaderEpoch (the target's own schema), lowest
    first; then read the log back from the leader."""
    raw = rr.RawConnector(cluster)
    try:
        with confluent.admin(cluster.client_config()) as admin:
            state = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        leader = raw(state.leader)
        tid = rr.topic_id(leader, topic)
        spoken = rr.versions(leader, "Produce")
        fields = partition_fields(leader.specs, spoken)
        advertised = leader.broker_versions[leader.specs.api("Produce").key]
        appends = []
        for version in (v for v in spoken if EPOCH_FIELD not in fields[v]):
            value = f"kip359-without-epoch-v{version}".encode()
            try:
                ex = rr.produce(leader, version, topic, tid, 0, encode_batch([value]))
            except DecodeError as exc:
                # As in former_leader_produce: the target's answer at that version (librdkafka's mock
                # writes v5 without LogStartOffset); the raw client closed the connection.
                appends.append(OldVersionAppend(version, value, -1, -1, unreadable=str(exc)))
                leader = raw(state.leader)
                continue
            p = ex.response["Responses"][0]["PartitionResponses"][0]
            appends.append(OldVersionAppend(version, value, p["ErrorCode"], p["BaseOffset"]))
        batches, _ = rr.read_log(leader, topic, tid)
        log = tuple(Read(topic, 0, r.offset, r.value or b"", b.partition_leader_epoch)
                    for b in batches if not b.is_control for r in b.records)
        return OldVersionProduce(topic, state.leader, state.leader_epoch, advertised, fields, tuple(appends), log)
    finally:
        raw.close()


# -- idempotent producers through failovers --------------------------------------------------


@dataclass(frozen=True)
class Writes:
    """One producer's history: values in send order, acknowledgements, failures, and the lines in
    which the client said it bumped its producer epoch (librdkafka's EOS debug log)."""

    sent: list[str] = field(default_factory=list)
    acks: list[Ack] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    epoch_bumps: list[str] = field(default_factory=list)
    library: str | None = None  # the client library's own version, as its driver said when ready (librdkafka)


@dataclass(frozen=True)
class FailoverWrites:
    topic: str
    faults: list[str]
    writes: dict[str, Writes]
    log: list[LogRecord]
    refused: dict[str, str] = field(default_factory=dict)  # stack -> why its client could not reach the target
    # stack -> (what, evidence): a client the target does not support (the Java client on librdkafka's mock)
    unsupported: dict[str, tuple[str, str]] = field(default_factory=dict)

    def writes_of(self, stack: str) -> Writes:
        """`stack`'s history; `TargetRefused` where its client could not reach the target, `NotSupported`
        where the target does not support that client."""
        if stack in self.unsupported:
            raise NotSupported(*self.unsupported[stack])
        if stack in self.refused:
            raise TargetRefused(self.refused[stack])
        return self.writes[stack]


# The librdkafka producer logs its idempotence state ("debug": "eos", harness.clients.stacks.librdkafka).
EPOCH_BUMP = ("bumped epoch", "skipped sequence numbers")


def writes_of(driver: ClientDriver, prefix: int) -> Writes:
    """Every producer driver sends <prefix>.0, .1, ... in order and reports in VerifiableProducer's
    words: every number up to the last reported, or the count it says it sent, was sent, so one with
    no event at all shows up as unacknowledged."""
    events = {int(str(e["value"]).split(".")[1]): e for e in driver.events
              if e.get("event") in ("producer_send_success", "producer_send_error")}
    stopped = next((e for e in driver.events if e.get("event") == "stopped"), None)
    count = max(max(events, default=-1) + 1, int(stopped["sent"]) if stopped else 0)
    ready = next((e for e in driver.events if e.get("event") == "ready"), {})
    w = Writes(sent=[f"{prefix}.{n}" for n in range(count)], library=ready.get("librdkafka"))
    for n in sorted(events):
        e = events[n]
        if e["event"] == "producer_send_success":
            w.acks.append(Ack(str(e["value"]), e["offset"]))
        else:
            w.failures.append(f"{e['value']}: {e.get('exception')} {e.get('message')}")
    if stopped and stopped.get("unreported"):
        w.failures.append(f"{stopped['unreported']} records without a delivery report 60 s after the last send")
    if driver.log_path.exists():
        with driver.log_path.open(errors="replace") as log:
            w.epoch_bumps.extend(line.strip()[:400] for line in log if any(m in line for m in EPOCH_BUMP))
    return w


def producer_driver(cluster: Cluster, stack: str, topic: str) -> ClientDriver:
    """The producer driver of `stack`, each of the same commands and events: kcts's KctsProducer on the
    target's Java clients, kcts's drivers for librdkafka (the run's confluent-kafka release) and franz-go."""
    log = session.current().scratch("clients") / f"{stack}-producer-{topic}.log"
    return stacks.producer_driver(stack, cluster.java_clients, cluster.client_config(), topic, log)


def failover_writes(cluster: Cluster, topic: str) -> FailoverWrites:
    """Every stack's producer writes `topic` (3 replicas, min.insync.replicas=2) through a crash, a clean stop and
    a pause of its leader; each fault healed and the ISR full again before the next. On a target
    whose nodes the harness cannot stop, through three leader moves instead (clean failovers)."""
    # A stack whose client cannot reach the target (Java on librdkafka's mock) leaves the others judged.
    producers, refused, unsupported = {}, {}, {}
    for stack in stacks.current().judged():
        try:
            producers[stack] = producer_driver(cluster, stack, topic)
        except TargetRefused as exc:
            refused[stack] = str(exc)
        except NotSupported as exc:
            unsupported[stack] = (exc.what, exc.evidence)
    require_target(producers, f"no stack's producer reaches the target: {refused or unsupported}")
    replicas = set(cluster.state.partition_state(topic).replicas)
    if cluster.capabilities.fault_control:
        resolve_victim(cluster, "leader", topic)  # a leader no one process holds refuses the premise before any write
    applied: list[str] = []
    with ExitStack() as running:

        def acked() -> dict[str, int]:
            return {stack: sum(1 for e in d.events if e.get("event") == "producer_send_success")
                    for stack, d in producers.items()}

        def progress() -> None:
            # Acks flowing again after each fault are the scene's premise; the checks judge what was
            # acknowledged (exactly once, in order), not how soon.
            start = acked()
            wait_until(lambda: all(acked()[k] >= start[k] + PROGRESS for k in start), 60,
                       lambda: f"every producer adding {PROGRESS} acks: from {start} to {acked()}; " + "; ".join(
                           f"{stack} {d.describe()}" for stack, d in producers.items()), owed=Owed.PREMISE)

        for d in producers.values():
            running.enter_context(stopped_on_exit(d, stop_producer))
            d.start()
        progress()
        if cluster.capabilities.fault_control:
            for fault in node_faults(cluster):
                f: Fault = fault(cluster, "leader", topic)
                before = cluster.state.partition_state(topic)
                hit = f.inject()
                after = cluster.state.wait_for_partition(
                    topic, 0,
                    lambda s, hit=hit, e=before.leader_epoch: s.leader not in (-1, hit) and s.leader_epoch > e,
                    f"a new leader after the {f.name} of {hit}",
                )
                applied.append(f"{f.name} of {hit}@{before.leader_epoch} -> {after.leader}@{after.leader_epoch}")
                progress()
                f.heal()
                cluster.state.wait_for_isr(topic, 0, replicas)
        else:
            for _ in range(3):
                before, after = move_leader_away(cluster, topic)
                applied.append(f"leader move {before.leader}@{before.leader_epoch} -> "
                               f"{after.leader}@{after.leader_epoch}")
                progress()
        progress()
    raw = rr.RawConnector(cluster)
    try:
        leader = cluster.state.partition_state(topic).leader
        batches, _ = rr.read_log(raw(leader), topic, rr.topic_id(raw(leader), topic))
    finally:
        raw.close()
    log = [LogRecord(r.offset, (r.value or b"").decode()) for b in batches if not b.is_control for r in b.records]
    writes = {stack: writes_of(d, stacks.get(stack).producer_prefix) for stack, d in producers.items()}
    return FailoverWrites(topic, applied, writes, log, refused, unsupported)


def stop_producer(driver: ClientDriver) -> None:
    """Stop sending, then flush and close, in the driver's one thread (`exit`): a send the harness cut
    short would otherwise be reported as the broker's failed write. Then it reports what it sent."""
    if driver.proc is None or driver.proc.poll() is not None:
        driver.stop()
        return
    try:
        driver.send_line("exit")
        driver.wait_for(lambda e: e.get("event") == "stopped", 90, "flush and stop")
        driver.wait_exit(30)
    finally:
        driver.stop()
