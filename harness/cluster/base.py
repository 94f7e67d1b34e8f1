"""The one cluster interface that every backend (local, docker, external) implements.

Guarantees, for every backend:
- Node operations are idempotent: stopping a stopped node, or starting a running one, does nothing.
- When `start_node` returns, the broker is registered, unfenced and listed by a metadata request.
- When `stop_node` / `kill_node` return, the process is gone; `pause_node` returns once the
  process is stopped by the kernel (it keeps its sockets but answers nothing).
- What the brokers say of the cluster (partition state, log end offsets, the waits on them) is not
  the backend's to implement: `cluster.state` (harness.cluster.state) reads it over the wire through
  `broker_ids`, `node_state`, `probe_address`, `probe_transport` and `deaf_to_controller`.
- A backend that cannot control nodes raises `FaultControlUnavailable` from the node operations,
  so that checks needing faults skip with that reason.
- What a target allows is in `capabilities` (from its `TargetSpec`); code outside this package
  asks those, never which backend class it holds.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from harness.cluster.model import Capabilities, TargetSpec
from harness.cluster.state import ClusterState
from harness.errors import FaultControlUnavailable, SetupError, TargetRefused
from harness.network.links import LinkFault
from harness.process.service import ProcessState as NodeState
from harness.protocol.auth import Transport, from_client_config

__all__ = ["Cluster", "FaultControlUnavailable", "Node", "NodeCluster", "NodeState"]


class Cluster(abc.ABC):
    """A Kafka cluster under test: its nodes and where they listen, their faults, leader moves and
    evidence; what the brokers say of it is `state`, on top."""

    target: TargetSpec
    version: str  # the broker version as reports show it

    @property
    def capabilities(self) -> Capabilities:
        return self.target.capabilities

    @property
    def java_clients(self) -> str:
        """The kafka-clients version of the Java drivers that run against this target."""
        return self.target.java_clients

    @functools.cached_property
    def state(self) -> ClusterState:
        """What the brokers say of this cluster (harness.cluster.state), asked through this interface."""
        return ClusterState(self)

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

    def deaf_to_controller(self) -> set[int]:
        """Brokers that no longer hear the controller (a cut link from it): they answer state reads from
        a stale view, so `state` asks them last. None unless a backend cuts links."""
        return set()

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
