"""Network partitions between nodes, as an inject/heal pair (Jepsen's partition nemesis).

`NetworkPartition` cuts links with the target's link control (`Cluster.cut_links`): whole groups
apart (`partition`), one node from the others (`isolate`), one direction only (`cut`), or a lossy
link (`degrade`). Clients keep reaching every node: a cut node goes on answering them, which is
the situation KIP-320 was written for. Used as a context manager it always heals on the way out,
and it writes every event, with what each broker then said of the watched partition, to the
run's event log and, at the end, to the check's Allure result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from harness import attach, progress
from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.cluster.state import PartitionState, require_leader_epoch
from harness.errors import KctsError
from harness.nemesis.unclean import UncleanElection, logged_truncation
from harness.network.links import LinkFault
from harness.process.events import EventLog
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.exceptions import ProtocolError
from harness.protocol.records import encode_batch
from harness.waiting import Owed, wait_until


@dataclass
class NetworkPartition:
    """Link faults on one cluster; `watch` names the partition whose view each event records."""

    cluster: Cluster
    watch: tuple[str, int] | None = None
    events: EventLog = field(default_factory=EventLog)
    faults: list[LinkFault] = field(default_factory=list)

    @property
    def nodes(self) -> list[int]:
        return [*self.cluster.broker_ids, *self.cluster.controller_ids]

    # -- inject ----------------------------------------------------------------------------------
    def partition(self, groups: Sequence[Iterable[int]]) -> None:
        """Split the nodes into `groups`; no node hears any node of another group. Nodes named in no
        group form one group of their own."""
        sets = [set(g) for g in groups]
        rest = set(self.nodes) - set().union(*sets)
        if rest:
            sets.append(rest)
        self._inject("partition", [
            LinkFault(a, b) for i, ga in enumerate(sets) for j, gb in enumerate(sets) if i != j for a in ga for b in gb
        ], groups=" | ".join(",".join(map(str, sorted(g))) for g in sets))

    def isolate(self, node: int, from_: Iterable[int] | None = None) -> None:
        """Cut `node` from `from_` (default: every other node), both ways; clients still reach it."""
        others = sorted(set(self.nodes if from_ is None else from_) - {node})
        self._inject("isolate", [f for o in others for f in (LinkFault(node, o), LinkFault(o, node))],
                     node=node, from_=others)

    def cut(self, frm: int, to: int) -> None:
        """One way only: `to` no longer hears `frm`; `frm` still hears `to`."""
        self._inject("cut one way", [LinkFault(frm, to)], link=f"{frm}->{to}")

    def degrade(self, frm: int, to: int, loss: int = 0, delay_ms: int = 0) -> None:
        """`to` loses `loss` % of the packets `frm` sends it, and hears the rest `delay_ms` late."""
        self._inject("degrade", [LinkFault(frm, to, loss, delay_ms)], link=f"{frm}->{to}", loss=f"{loss}%",
                     delay=f"{delay_ms} ms")

    def _inject(self, what: str, faults: list[LinkFault], **detail: object) -> None:
        unknown = {n for f in faults for n in (f.frm, f.to)} - set(self.nodes)
        if unknown:
            raise KctsError(f"no node {sorted(unknown)} to cut: the nodes are {self.nodes}")
        self.cluster.cut_links(faults)
        self.faults.extend(faults)
        progress.step(f"nemesis: {what} {' '.join(f'{k}={v}' for k, v in detail.items())}")
        self._record("nemesis", what, **detail, in_force=self.cluster.links_in_force(), **self._views())

    # -- heal ------------------------------------------------------------------------------------
    def heal(self) -> None:
        """Every link up again (idempotent)."""
        if not self.faults:
            return
        self.cluster.heal_links()
        self.faults.clear()
        progress.step("nemesis: heal")
        self._record("nemesis", "heal", **self._views())

    def note(self, who: str, what: str, **detail: object) -> None:
        """An event of the scenario's own, on the same clock as the nemesis's."""
        self._record(who, what, **detail)

    def observe(self, what: str) -> None:
        """What each broker says of the watched partition now, as an event."""
        self._record("observer", what, **self._views())

    def _record(self, who: str, what: str, **detail: object) -> None:
        """Into this partition's timeline (Allure) and the run's event log (events.jsonl)."""
        self.events.add(who, what, **detail)
        attach.event(who, what, **detail)

    def _views(self) -> dict[str, object]:
        if self.watch is None:
            return {}
        topic, partition = self.watch
        views: dict[str, object] = {}
        for b in self.cluster.broker_ids:
            try:
                s = self.cluster.state.partition_state(topic, partition, b)
                views[f"broker{b}"] = f"leader={s.leader}@{s.leader_epoch} isr={list(s.isr)}"
            except KctsError as exc:
                views[f"broker{b}"] = f"no answer ({str(exc)[:60]})"
        return views

    # -- context ---------------------------------------------------------------------------------
    def __enter__(self) -> NetworkPartition:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.heal()
        finally:
            attach.timeline("network partition timeline (seconds since the nemesis began)", self.events.events)


def unclean_election_by_partition(
    cluster: Cluster,
    topic: str,
    net: NetworkPartition,
    partition: int = 0,
    write_divergent: Callable[[], None] | None = None,
    while_zombie: Callable[[int, int, int], None] | None = None,
    timeout: float = 60.0,
) -> UncleanElection:
    """The forced unclean election of `harness.nemesis.unclean`, made by cutting links, not by stopping
    processes, so that the old leader goes on serving clients throughout (KIP-320 "Motivation"):

    1. cut the replication link between the leader A and its in-sync follower B: A shrinks the ISR
       to itself (after replica.lag.time.max.ms); the caller writes the divergent records (acks=1);
    2. cut A from every node, the controller included. The controller fences A; B is elected
       uncleanly, while A, which hears nothing of it, still leads at its old epoch for its clients:
       `while_zombie(A, B, B's epoch)` acts on it then;
    3. heal: A learns of the election and truncates the records past B's log end.
    `topic`-`partition` has two replicas, min.insync.replicas 1 and unclean election enabled.
    """
    before = cluster.state.wait_for_partition(
        topic, partition, lambda s: len(s.isr) >= 2 and s.leader >= 0, "a leader and at least one in-sync follower"
    )
    old_leader = before.leader
    new_leader = next(b for b in before.isr if b != old_leader)

    def log_ends() -> tuple[int, int]:
        return (cluster.state.log_end_offset(topic, partition, new_leader),
                cluster.state.log_end_offset(topic, partition, old_leader))

    wait_until(lambda: len(set(log_ends())) == 1, timeout,
               lambda: f"{topic}-{partition}: follower {new_leader} and leader {old_leader} log ends {log_ends()}",
               owed=Owed.PREMISE)
    net.isolate(new_leader, from_=[old_leader])
    # A follower that has every record counts as caught up however long it stays silent: one record
    # it cannot fetch puts it behind, and replica.lag.time.max.ms later the leader drops it.
    _write_one(cluster, old_leader, topic, partition, b"divergent-behind")
    # The epoch the lone leader leads (and writes) at: before 3.6 the KRaft controller bumped the leader
    # epoch with that ISR shrink (KAFKA-15021 stopped that), so it may be above `before`'s.
    alone = cluster.state.wait_for_partition(topic, partition, lambda s: set(s.isr) == {old_leader},
                                             f"ISR shrunk to the leader {old_leader} alone", timeout, broker=old_leader)
    net.observe(f"ISR shrunk to leader {old_leader}")
    if write_divergent is not None:
        write_divergent()
    leo_before = cluster.state.log_end_offset(topic, partition, old_leader)
    log_mark = cluster.node_log_size(old_leader)
    net.note("scenario", "divergent records written", old_leader_log_end=leo_before)

    net.isolate(old_leader)
    state = _elect_unclean(cluster, topic, partition, new_leader, alone.leader_epoch, timeout)
    divergence = cluster.state.log_end_offset(topic, partition, new_leader)
    net.observe(f"broker {new_leader} elected uncleanly at epoch {state.leader_epoch}; log end {divergence}")
    if while_zombie is not None:
        while_zombie(old_leader, new_leader, state.leader_epoch)
    net.heal()
    cluster.state.wait_for_partition(
        topic, partition, lambda s: old_leader in s.isr and s.leader == new_leader,
        f"old leader {old_leader} back in the ISR of {new_leader}", timeout, broker=new_leader,
    )
    # Back in the ISR, the former leader must truncate what only it held and follow: log ends that
    # never meet are the truncation KIP-320 owes, not a scene that could not be built.
    wait_until(lambda: len(set(log_ends())) == 1, timeout,
               lambda: f"{topic}-{partition}: leader {new_leader} and rejoined {old_leader} log ends {log_ends()}",
               owed=Owed.PROMISE, promise="kip320.replica.truncates-to-divergence")
    leo_after = cluster.state.log_end_offset(topic, partition, old_leader)
    net.observe(f"old leader {old_leader} rejoined with log end {leo_after}")
    return UncleanElection(
        topic, partition, old_leader, new_leader, alone.leader_epoch, state.leader_epoch,
        divergence, leo_before, leo_after, logged_truncation(cluster, old_leader, topic, partition, log_mark),
    )


def _write_one(cluster: Cluster, broker: int, topic: str, partition: int, value: bytes) -> None:
    """One acks=1 write to `broker` (the leader), straight on the wire."""
    host, port = cluster.probe_address(broker)
    with RawClient.connect(host, port, spec=cluster.target.protocol_specs, timeout=20.0,
                           transport=cluster.probe_transport(broker)) as client:
        tid = rr.topic_id(client, topic)
        answer = rr.produce(client, client.max_version("Produce"), topic, tid, partition, encode_batch([value]), acks=1)
        code = answer.response["Responses"][0]["PartitionResponses"][0]["ErrorCode"]
        if code != 0:
            raise KctsError(f"an acks=1 write to leader {broker} of {topic}-{partition} got {errors.describe(code)}")


def _elect_unclean(
    cluster: Cluster, topic: str, partition: int, candidate: int, epoch: int, timeout: float
) -> PartitionState:
    """ElectLeaders(UNCLEAN) through the candidate itself: any other broker may be the one cut off,
    which would neither forward the request nor know its outcome."""
    attempts: list[str] = []
    host, port = cluster.probe_address(candidate)

    def elected() -> PartitionState | None:
        state = cluster.state.partition_state(topic, partition, candidate)
        if state.leader == candidate:
            require_leader_epoch(state)
        if state.leader == candidate and state.leader_epoch > epoch:
            return state
        # A connection of its own per attempt: under load an attempt may time out, and the broker
        # closes the connection it timed out on; a soak run once retried on that closed one for 60 s.
        try:
            with RawClient.connect(host, port, spec=cluster.target.protocol_specs, timeout=20.0,
                                   transport=cluster.probe_transport(candidate)) as client:
                answer = client.send("ElectLeaders", client.max_version("ElectLeaders"), {
                    "ElectionType": 1, "TopicPartitions": [{"Topic": topic, "Partitions": [partition]}],
                    "TimeoutMs": 5000,
                })
        except ProtocolError as exc:
            attempts.append(f"{type(exc).__name__}: {exc}")
            return None
        results = [r for t in answer.get("ReplicaElectionResults", []) for r in t["PartitionResult"]]
        attempts.append(", ".join(errors.describe(r["ErrorCode"]) for r in results) or str(answer)[:200])
        return None

    def seen() -> str:
        state = cluster.state.partition_state(topic, partition, candidate)
        return f"{topic}-{partition} as {candidate} sees it: {state}; ElectLeaders(UNCLEAN): {attempts[-3:]}"

    return wait_until(elected, timeout, seen, interval=0.5, owed=Owed.PREMISE)
