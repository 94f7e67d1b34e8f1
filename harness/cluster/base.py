"""The one cluster interface that every backend (local, docker, external) implements.

Guarantees, for every backend:
- Node operations are idempotent: stopping a stopped node, or starting a running one, does nothing.
- When `start_node` returns, the broker is registered, unfenced and listed by a metadata request.
- When `stop_node` / `kill_node` return, the process is gone; `pause_node` returns once the
  process is stopped by the kernel (it keeps its sockets but answers nothing).
- State queries ask the brokers, never a cache: each call reflects the cluster as it is now.
- A backend that cannot control nodes raises `FaultControlUnavailable` from the node operations,
  so that checks needing faults skip with that reason.
- What a target allows is in `capabilities` (from its `TargetSpec`); code outside this package
  asks those, never which backend class it holds.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from harness.cluster import probe
from harness.cluster.model import Capabilities, TargetSpec
from harness.errors import FaultControlUnavailable, KctsError, SetupError, TargetRefused
from harness.network.links import LinkFault
from harness.process.service import ProcessState as NodeState
from harness.protocol.auth import Transport, from_client_config
from harness.protocol.client import RawClient
from harness.protocol.exceptions import ProtocolError
from harness.protocol.spec import SpecError
from harness.waiting import Owed, wait_until

__all__ = [
    "METADATA_EPOCH_CHECK", "Cluster", "FaultControlUnavailable", "Node", "NodeCluster", "NodeState", "PartitionState",
    "no_leader_epoch", "require_leader_epoch",
]


@dataclass(frozen=True)
class PartitionState:
    """One partition as a broker's metadata shows it."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]

    @property
    def epochless(self) -> bool:
        """A leader at no epoch: Metadata v7+ (the harness reads v12) carries LeaderEpoch -1."""
        return self.leader >= 0 and self.leader_epoch < 0


# The check that judges Metadata's leader epoch itself; every scene that waits for an epoch to rise
# names it when the target gives none, so that the one broken promise is judged in one place.
METADATA_EPOCH_CHECK = "test_every_metadata_version_gives_the_current_leader_epoch"
CREATE_TOPICS = 19  # the API key


def _api_name(client: RawClient, key: int) -> str:
    try:
        return client.specs.api(key).name
    except SpecError:  # an API newer than the specs kcts speaks
        return f"API {key}"
_ANY_EPOCH = 2**31 - 1


def no_leader_epoch(state: PartitionState) -> str:
    return (f"the target's Metadata v{probe.METADATA_VERSION} carries no leader epoch (-1) for "
            f"{state.topic}-{state.partition}, led by broker {state.leader}, which KIP-320 promises "
            f"(\"Protocol Changes / Metadata\"; {METADATA_EPOCH_CHECK})")


def require_leader_epoch(state: PartitionState) -> PartitionState:
    """`state`, unless its leader has no epoch: then `TargetRefused` at once, since an epoch that is not
    there never rises, and waiting for it would only end in a timeout."""
    if state.epochless:
        raise TargetRefused(no_leader_epoch(state))
    return state


class Cluster(abc.ABC):
    """A Kafka cluster under test: nodes to break, and partition state to read."""

    target: TargetSpec
    version: str  # the broker version as reports show it

    @property
    def capabilities(self) -> Capabilities:
        return self.target.capabilities

    @property
    def java_clients(self) -> str:
        """The kafka-clients version of the Java drivers that run against this target."""
        return self.target.java_clients

    # -- lifecycle -------------------------------------------------------------------------
    @abc.abstractmethod
    def start(self) -> Cluster:
        """Bring every node up; return once the cluster is ready (see module docstring)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Stop every node and remove everything the cluster created. Safe to call twice."""

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- addresses ---------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def bootstrap_servers(self) -> str:
        """host:port,... of every broker, for clients."""

    @property
    @abc.abstractmethod
    def broker_ids(self) -> list[int]:
        """Node ids of the brokers (never the controllers)."""

    @abc.abstractmethod
    def broker_address(self, broker_id: int) -> tuple[str, int]:
        """The client listener of one broker."""

    def probe_address(self, broker_id: int) -> tuple[str, int]:
        """Where the harness reads state (metadata, log end offsets), without client credentials
        where the backend has a listener of its own for that."""
        return self.broker_address(broker_id)

    def probe_transport(self, broker_id: int) -> Transport:
        """How the raw client reaches `probe_address`: over the clients' TLS and SASL when it is
        the clients' listener (an external target's), in the clear on a harness listener."""
        if self.probe_address(broker_id) != self.broker_address(broker_id):
            return Transport()
        config = self.client_config()
        key = tuple(sorted(config.items()))
        cached = getattr(self, "_probe_transport", None)
        if cached is None or cached[0] != key:
            cached = (key, from_client_config(config))
            self._probe_transport = cached
        return cached[1]

    def client_config(self, user: str | None = None) -> dict[str, str]:
        """Settings every client needs to reach this cluster (bootstrap, and SASL if any); with
        `user`, as that user of the cluster's own (a local SASL cluster's alice, for ACL checks)."""
        if user is not None:
            raise SetupError(f"the target {self.target.label} has no user {user!r} of the harness's own")
        return {"bootstrap.servers": self.bootstrap_servers}

    # -- topics ------------------------------------------------------------------------------
    def no_create_topics(self) -> str | None:
        """Why the target's brokers serve no CreateTopics, with the evidence (the ApiVersions a broker
        advertises, where API 19 is absent); None where they serve it. Decided once per cluster, so
        that no check waits on a CreateTopics the target said it does not serve."""
        decided = getattr(self, "_no_create_topics", False)
        if decided is not False:
            return decided
        for b in self.running_brokers():
            host, port = self.probe_address(b)
            try:
                with RawClient.connect(host, port, timeout=10, client_id="kcts-probe",
                                       transport=self.probe_transport(b)) as c:
                    offered = dict(c.broker_versions)
                    names = {k: _api_name(c, k) for k in offered}
            except (OSError, ProtocolError):
                continue  # the next broker, or CreateTopics itself, will say what is wrong
            why = None
            if CREATE_TOPICS not in offered:
                listed = ", ".join(f"{names[k]} {lo}-{hi}" for k, (lo, hi) in sorted(offered.items()))
                why = (f"its brokers serve no CreateTopics: API {CREATE_TOPICS} is not among those broker {b} "
                       f"advertises in ApiVersions ({listed})")
            self._no_create_topics = why
            return why
        return None

    def create_topic_itself(self, name: str, partitions: int, replication_factor: int,
                            config: dict[str, str] | None, why: str) -> None:
        """Create a topic in the target's own way, where its brokers serve no CreateTopics (`why`
        says so); a target with no way of its own refuses at once, with that reason."""
        raise TargetRefused(f"the target refused to create topic {name} (rf={replication_factor}, config={config}): "
                            f"{why}, and it has no other way to create topics that kcts knows")

    # -- node control ------------------------------------------------------------------------
    @abc.abstractmethod
    def node_state(self, broker_id: int) -> NodeState: ...

    @abc.abstractmethod
    def start_node(self, broker_id: int) -> None:
        """Start a stopped broker and wait until it is registered and unfenced."""

    @abc.abstractmethod
    def stop_node(self, broker_id: int) -> None:
        """Clean shutdown (SIGTERM and its controlled shutdown); returns once the process is gone."""

    @abc.abstractmethod
    def kill_node(self, broker_id: int) -> None:
        """Crash (SIGKILL); returns once the process is gone."""

    @abc.abstractmethod
    def pause_node(self, broker_id: int) -> None:
        """Freeze (SIGSTOP): the process keeps its sockets and answers nothing."""

    @abc.abstractmethod
    def resume_node(self, broker_id: int) -> None:
        """Thaw a paused broker (SIGCONT)."""

    def pause_controller(self) -> None:
        """Freeze the controller quorum (SIGSTOP): brokers keep running but learn nothing new."""
        raise FaultControlUnavailable(self.target.label)

    def resume_controller(self) -> None:
        raise FaultControlUnavailable(self.target.label)

    def isolate_node(self, broker_id: int) -> None:
        """Cut a broker off the network: it keeps running, and reaches no node and no client (nor they
        it) until `heal_node`. Targets whose capabilities have no `partitions` raise."""
        raise FaultControlUnavailable(self.target.label, "network partitions")

    def heal_node(self, broker_id: int) -> None:
        """Reconnect a broker cut off by `isolate_node`; returns once it is on the network again."""
        raise FaultControlUnavailable(self.target.label, "network partitions")

    # -- links between nodes -------------------------------------------------------------------
    @property
    def controller_ids(self) -> list[int]:
        """Node ids of the dedicated controllers the harness can reach with link faults; none by default."""
        return []

    def cut_links(self, faults: Iterable[LinkFault]) -> None:
        """Add directed link faults between nodes (`LinkFault(frm, to, loss)`: `to` stops hearing
        `frm`, or loses `loss` % of it); clients keep reaching every node. Returns once in force.
        Targets whose capabilities have no `links` raise."""
        raise FaultControlUnavailable(self.target.label, f"link faults ({self.capabilities.no_links})")

    def heal_links(self) -> None:
        """Every link between nodes back to normal; returns once in force."""
        raise FaultControlUnavailable(self.target.label, f"link faults ({self.capabilities.no_links})")

    def links_in_force(self) -> str:
        """The link faults in force, for evidence."""
        return "no link control"

    def move_leader_to(self, topic: str, partition: int, to: int) -> None:
        """Ask the target, in its own way, to make broker `to` lead the partition; return once asked
        (`harness.nemesis.leadership.move_leader` waits for the move). Targets whose capabilities
        name no way of their own move leaders by reassignment, and do not implement this."""
        raise NotImplementedError(f"{self.target.label} moves leaders by reassignment")

    def elect_unclean_itself(self, topic: str, partition: int, to: int) -> bool:
        """Ask the target in its own way to elect broker `to` uncleanly (an operated target's `unclean`
        command); False where it has none: ElectLeaders UNCLEAN through the admin API asks then."""
        return False

    def restart_node(self, broker_id: int) -> None:
        """Clean stop, then start; returns once the broker is registered and unfenced again."""
        self.stop_node(broker_id)
        self.start_node(broker_id)

    # -- partition state ---------------------------------------------------------------------
    def running_brokers(self) -> list[int]:
        return [b for b in self.broker_ids if self.node_state(b) is NodeState.RUNNING]

    def observers(self) -> list[int]:
        """The running brokers in the order state queries ask them: one cut off from the controller
        answers from a stale view, so those come last."""
        running = self.running_brokers()
        deaf = self._deaf_to_controller()
        return [b for b in running if b not in deaf] + [b for b in running if b in deaf]

    def _deaf_to_controller(self) -> set[int]:
        """Brokers that no longer hear the controller (a cut link from it); none unless a backend cuts links."""
        return set()

    def partition_state(self, topic: str, partition: int = 0, broker: int | None = None) -> PartitionState:
        """Leader, epoch, replicas and ISR, as `broker` sees them (default: the first running one that answers)."""
        errors: list[str] = []
        for b in self.observers() if broker is None else [broker]:
            host, port = self.probe_address(b)
            try:
                md = probe.metadata(host, port, [topic], transport=self.probe_transport(b))
            except OSError as exc:
                errors.append(f"broker {b}: {exc!r}")
                continue
            p = md.partitions.get((topic, partition))
            if p is None or p.error_code not in (0, 5, 6):
                errors.append(f"broker {b}: {p}")
                continue
            return PartitionState(topic, partition, p.leader, p.leader_epoch, p.replicas, p.isr)
        raise KctsError(f"no running broker describes {topic}-{partition}: {'; '.join(errors) or 'none running'}")

    def agreed_state(self, topic: str, partition: int) -> PartitionState:
        """The partition's state that every running broker gives; `KctsError` naming each one's view
        while they differ."""
        views = {b: self.partition_state(topic, partition, b) for b in self.observers()}
        if not views:
            raise KctsError(f"no running broker describes {topic}-{partition}")
        if len(set(views.values())) != 1:
            raise KctsError("the brokers disagree: " + "; ".join(
                f"broker {b}: leader {v.leader}@{v.leader_epoch} isr {list(v.isr)}" for b, v in views.items()))
        return next(iter(views.values()))

    def leader(self, topic: str, partition: int = 0) -> int:
        return self.partition_state(topic, partition).leader

    def isr(self, topic: str, partition: int = 0) -> tuple[int, ...]:
        return self.partition_state(topic, partition).isr

    def leader_epoch(self, topic: str, partition: int = 0) -> int:
        return self.partition_state(topic, partition).leader_epoch

    def log_end_offset(self, topic: str, partition: int, broker_id: int) -> int:
        """The log end offset of the replica on `broker_id`, which must be running."""
        host, port = self.probe_address(broker_id)
        return probe.log_end_offset(host, port, topic, partition, transport=self.probe_transport(broker_id))

    # -- evidence ----------------------------------------------------------------------------
    def environment(self) -> dict[str, str]:
        """What reports show of this target: its kind, versions and size (no secret)."""
        return {**self.target.environment(), "broker_version": self.version, "brokers": str(len(self.broker_ids))}

    def log_paths(self) -> list[Path]:
        """Every node's log file, for the run's report folder; none where the logs are not ours."""
        return []

    def node_log_size(self, broker_id: int) -> int:
        """A mark in the broker's log, for `node_log` later; 0 where the backend has no logs."""
        return 0

    def node_log(self, broker_id: int, since: int = 0) -> str | None:
        """The broker's log from `since` on; None where the backend cannot read it."""
        return None

    # -- waits -------------------------------------------------------------------------------
    def wait_for_partition(
        self,
        topic: str,
        partition: int,
        predicate: object,
        what: str,
        timeout: float = 30.0,
        broker: int | None = None,
        agreed: bool = False,
        owed: Owed = Owed.PREMISE,
    ) -> PartitionState:
        """Wait until `predicate(PartitionState)` holds, as `broker` sees it if given.

        `agreed`: as every running broker sees it, all of them giving the same leader, epoch, replicas
        and ISR. After a heal the broker that was cut off answers from its stale view until it has
        replayed the controller's log, so "the first broker that answers" may describe a past that the
        others have left; a scene that reads the settled state after a fault asks for agreement.

        The timeout shows the last state seen. A state that would hold but for its leader's missing
        epoch (Metadata's LeaderEpoch -1) ends the wait at once with `TargetRefused`: decided from
        the answer, as no epoch will come.

        `owed`: a partition's leader, epoch and ISR are the target's conduct, so by default a state
        that never comes is the target's refusal of the scene's premise (`TargetRefused`);
        `Owed.PROMISE` where that state is what a promise owes (harness.waiting).
        """
        assert callable(predicate)
        seen: list[PartitionState | str] = ["nothing yet"]

        def check() -> PartitionState | None:
            try:
                st = self.agreed_state(topic, partition) if agreed else self.partition_state(topic, partition, broker)
            except KctsError as exc:
                seen[0] = str(exc)
                return None
            seen[0] = st
            if predicate(st):
                return st
            if st.epochless and predicate(replace(st, leader_epoch=_ANY_EPOCH)):
                require_leader_epoch(st)
            return None

        return wait_until(check, timeout, lambda: f"{topic}-{partition} {what}: last seen {seen[0]}", owed=owed)

    def wait_registered(self, broker_ids: list[int], timeout: float, alive: Callable[[], None],
                        owed: Owed = Owed.HARNESS) -> None:
        """Wait until every broker's own metadata lists all of `broker_ids` (registered and unfenced);
        `alive` raises if a node died meanwhile. The timeout shows what each broker listed.

        `owed`: while the harness starts the cluster, brokers that never register are a cluster that
        would not start (the harness's ERROR); `Owed.PREMISE` where a scene waits for the target to
        unfence brokers it had running."""
        seen: dict[int, object] = {}

        def ready() -> bool:
            alive()
            ok = True
            for b in broker_ids:
                host, port = self.probe_address(b)
                try:
                    md = probe.metadata(host, port, topics=[], timeout=2, transport=self.probe_transport(b))
                    seen[b] = md.broker_ids
                    ok &= set(broker_ids) <= set(md.broker_ids)
                except OSError as exc:
                    seen[b] = f"not answering ({exc.__class__.__name__})"
                    ok = False
            return ok

        wait_until(ready, timeout, lambda: f"brokers' metadata (broker -> ids listed): {seen}", interval=0.1,
                   owed=owed)

    def wait_for_isr(self, topic: str, partition: int, isr: set[int], timeout: float = 30.0) -> PartitionState:
        """Agreed by every running broker: it is read after a heal, when the healed broker still gives
        the ISR it knew before its fault (a resumed follower calls itself in sync at the same epoch)."""
        return self.wait_for_partition(topic, partition, lambda s: set(s.isr) == isr, f"ISR == {sorted(isr)}", timeout,
                                       agreed=True)

    def wait_for_leader(self, topic: str, partition: int, leader: int, timeout: float = 30.0) -> PartitionState:
        return self.wait_for_partition(topic, partition, lambda s: s.leader == leader, f"leader == {leader}", timeout)


class Node(Protocol):
    """One broker as a backend holds it: a process or a container of its own."""

    @property
    def state(self) -> NodeState: ...
    def stop(self) -> None: ...
    def kill(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def log_size(self) -> int: ...
    def log_text(self, since: int = 0) -> str: ...


class NodeCluster(Cluster):
    """A cluster whose every broker is one `Node` of its own: node control and node logs are that
    node's (the local backend's JVMs, the docker backend's containers)."""

    @abc.abstractmethod
    def node(self, broker_id: int) -> Node:
        """The broker's node; a `ClusterError` naming the brokers there are for an unknown id."""

    def node_state(self, broker_id: int) -> NodeState:
        return self.node(broker_id).state

    def stop_node(self, broker_id: int) -> None:
        self.node(broker_id).stop()

    def kill_node(self, broker_id: int) -> None:
        self.node(broker_id).kill()

    def pause_node(self, broker_id: int) -> None:
        self.node(broker_id).pause()

    def resume_node(self, broker_id: int) -> None:
        self.node(broker_id).resume()

    def node_log_size(self, broker_id: int) -> int:
        return self.node(broker_id).log_size()

    def node_log(self, broker_id: int, since: int = 0) -> str | None:
        return self.node(broker_id).log_text(since)
