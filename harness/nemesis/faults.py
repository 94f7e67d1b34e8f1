"""Faults as objects: aim at a victim, inject, heal; a final heal undoes whatever is left.

A victim is chosen when the fault is injected, against the partition's state at that moment:
`"leader"`, `"follower"` (one in-sync follower), or a broker id. (Not "target": that is the
cluster under test, `harness.cluster.target.TargetSpec`.)
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

from harness.cluster.base import Cluster, NodeState
from harness.cluster.state import require_leader_epoch
from harness.errors import FaultControlUnavailable, KctsError, TargetRefused
from harness.network.links import LinkFault
from harness.waiting import Owed, wait_until

Victim = str | int


def resolve_victim(cluster: Cluster, victim: Victim, topic: str | None, partition: int = 0) -> int:
    if isinstance(victim, int):
        return victim
    if topic is None:
        raise KctsError(f"victim {victim!r} needs a topic to be resolved against")
    state = cluster.state.partition_state(topic, partition)
    if victim == "leader":
        if state.leader not in cluster.broker_ids:
            raise TargetRefused(
                f"{topic}-{partition}'s leader, as Metadata names it, is broker {state.leader}, which is no one "
                f"process the harness can stop (its nodes: {cluster.broker_ids}); a failover needs one")
        return state.leader
    if victim == "follower":
        followers = [b for b in state.isr if b != state.leader]
        if not followers:
            raise KctsError(f"{topic}-{partition} has no in-sync follower: {state}")
        return followers[0]
    raise KctsError(f"unknown fault victim {victim!r}; use 'leader', 'follower' or a broker id")


@dataclass
class Fault(abc.ABC):
    """One fault on one broker. `inject` returns the broker hit; `heal` undoes it."""

    cluster: Cluster
    victim: Victim
    topic: str | None = None
    partition: int = 0
    hit: list[int] = field(default_factory=list)

    name: str = "fault"

    def inject(self) -> int:
        broker = resolve_victim(self.cluster, self.victim, self.topic, self.partition)
        self._inject(broker)
        self.hit.append(broker)
        return broker

    def heal(self) -> None:
        while self.hit:
            self._heal(self.hit.pop())

    @abc.abstractmethod
    def _inject(self, broker: int) -> None: ...

    def _heal(self, broker: int) -> None:
        if self.cluster.node_state(broker) is not NodeState.RUNNING:
            self.cluster.start_node(broker)


class CleanStop(Fault):
    """SIGTERM: controlled shutdown, the broker leaves every ISR at once."""

    name = "clean-stop"

    def _inject(self, broker: int) -> None:
        self.cluster.stop_node(broker)


class Crash(Fault):
    """SIGKILL: an unclean shutdown; the controller fences the broker after its session times out."""

    name = "crash"

    def _inject(self, broker: int) -> None:
        self.cluster.kill_node(broker)


class Pause(Fault):
    """SIGSTOP: the broker hangs with its sockets open, like a long GC pause or a frozen VM."""

    name = "pause"

    def _inject(self, broker: int) -> None:
        self.cluster.pause_node(broker)

    def _heal(self, broker: int) -> None:
        self.cluster.resume_node(broker)


class Isolate(Fault):
    """A network partition around one broker: it runs on, but no node and no client reaches it (nor
    it them) until healed. Needs a target whose capabilities have `partitions` (the docker backend)."""

    name = "isolate"

    def _inject(self, broker: int) -> None:
        if not self.cluster.capabilities.partitions:
            raise FaultControlUnavailable(self.cluster.target.label, "network partitions")
        self.cluster.isolate_node(broker)

    def _reconnect(self, broker: int) -> None:
        self.cluster.heal_node(broker)

    def _heal(self, broker: int) -> None:
        """Reconnect, then wait until the broker's own metadata has caught up with the others' for the
        fault's partition: until then it answers from the view it had when cut off (itself as leader,
        the old ISR), and a wait or a read that asks it would see that stale state."""
        self._reconnect(broker)
        if self.topic is None:
            return
        others = [b for b in self.cluster.broker_ids if b != broker]
        seen: list[object] = ["nothing yet"]

        def caught_up() -> bool:
            try:
                current = self.cluster.state.partition_state(self.topic or "", self.partition, others[0])
                mine = self.cluster.state.partition_state(self.topic or "", self.partition, broker)
            except KctsError as exc:
                seen[0] = str(exc)
                return False
            seen[0] = f"broker {broker} sees {mine}; broker {others[0]} sees {current}"
            return (mine.leader, mine.leader_epoch) == (current.leader, current.leader_epoch)

        wait_until(caught_up, 60,
                   lambda: f"{self.topic}-{self.partition} after reconnecting broker {broker}: {seen[0]}",
                   owed=Owed.PREMISE)


class CutOff(Isolate):
    """Every link between the broker and the other nodes (the controller included) cut both ways,
    while clients still reach it: for as long as it lasts, a leader it was goes on serving at its old
    epoch (a zombie). Needs a target whose capabilities have `links` (the local backend as root)."""

    name = "cut-off"

    def _inject(self, broker: int) -> None:
        caps = self.cluster.capabilities
        if not caps.links:
            raise FaultControlUnavailable(self.cluster.target.label, f"link faults ({caps.no_links})")
        others = [n for n in [*self.cluster.broker_ids, *self.cluster.controller_ids] if n != broker]
        self.cluster.cut_links([f for o in others for f in (LinkFault(broker, o), LinkFault(o, broker))])

    def _reconnect(self, broker: int) -> None:
        self.cluster.heal_links()


def node_faults(cluster: Cluster) -> tuple[type[Fault], ...]:
    """Every fault this target's capabilities allow on one broker: crash, clean stop, pause, and a
    network partition where it can be cut off."""
    return (Crash, CleanStop, Pause, *((Isolate,) if cluster.capabilities.partitions else ()))


@dataclass
class LeaderFailover:
    """Move leadership off the current leader with a clean stop, and wait for the new leader."""

    cluster: Cluster
    topic: str
    partition: int = 0
    timeout: float = 30.0

    def run(self) -> tuple[int, int, int, int]:
        """Return (old leader, old epoch, new leader, new epoch); the old leader stays stopped."""
        before = require_leader_epoch(self.cluster.state.partition_state(self.topic, self.partition))
        self.cluster.stop_node(before.leader)
        after = self.cluster.state.wait_for_partition(
            self.topic, self.partition,
            lambda s: s.leader not in (-1, before.leader) and s.leader_epoch > before.leader_epoch,
            f"a new leader other than {before.leader} with epoch > {before.leader_epoch}",
            self.timeout,
        )
        return before.leader, before.leader_epoch, after.leader, after.leader_epoch
