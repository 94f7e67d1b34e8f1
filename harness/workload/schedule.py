"""The nemesis of a pipeline run: faults fired at progress points, each healed before the next.

A step fires when `progress()` reaches its mark, hits the broker that leads the named partition at
that moment, waits until another broker leads it (the fault really moved leadership), heals, and
waits until every broker runs and every watched partition has its full ISR again. Whatever is
still broken when the schedule ends, however it ends, is healed.

`run()` must be called from a thread that lives as long as the cluster (the test's own): a broker
restarted by the heal is that thread's child, and PR_SET_PDEATHSIG kills it when the thread ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from harness import attach, confluent, progress
from harness.cluster.base import Cluster, NodeState
from harness.errors import KctsError
from harness.nemesis.faults import CleanStop, Crash, CutOff, Fault, Isolate, Pause
from harness.process.events import EventLog
from harness.waiting import Owed, wait_until

FAULTS: dict[str, type[Fault]] = {
    "crash": Crash, "bounce": CleanStop, "pause": Pause, "isolate": Isolate, "cut-off": CutOff,
}
INTERNAL = ("__consumer_offsets", "__transaction_state")


def internal_topics(cluster: Cluster) -> dict[str, int]:
    """Partition counts of the offsets and transaction-state topics (those that exist yet)."""
    with confluent.admin(cluster.client_config()) as admin:
        metadata = admin.list_topics(timeout=10).topics
    return {t: len(metadata[t].partitions) for t in INTERNAL if t in metadata}


@dataclass(frozen=True)
class FaultStep:
    at: float  # fraction of the workload done when the fault fires
    fault: str  # a key of FAULTS
    topic: str
    partition: int = 0


class FaultSchedule:
    def __init__(
        self,
        cluster: Cluster,
        steps: list[FaultStep],
        progress: Callable[[], float],
        watched: dict[str, int],
        events: EventLog | None = None,
        timeout: float = 90.0,
    ) -> None:
        self.cluster = cluster
        self.steps = steps
        self.progress = progress
        # Transactions stall while a transaction-log or offsets partition is below its min ISR:
        # those must be whole again before the next fault, as much as the pipeline's own topics.
        self.watched = {**internal_topics(cluster), **watched}
        self.events = events or EventLog()
        self.timeout = timeout
        self.done: list[FaultStep] = []
        self.halt = threading.Event()

    def run(self) -> None:
        """Every step in turn, in the calling thread; `halt` (set by the workload) ends it early."""
        try:
            for step in self.steps:
                if self.halt.is_set():
                    return
                self._run(step)
                self.done.append(step)
        finally:
            self._heal_all()
            attach.timeline("nemesis timeline (seconds since the workload began)", self.events.of_who("nemesis"))

    def injected(self) -> list[dict[str, object]]:
        return [e for e in self.events.of_who("nemesis") if str(e["what"]).endswith("-injected")]

    def _run(self, step: FaultStep) -> None:
        # The workload's pace is its own clients' (the generator and processors raise the target's
        # refusals themselves), so a stalled one is the harness's to explain.
        wait_until(lambda: self.halt.is_set() or self.progress() >= step.at, self.timeout,
                   lambda: f"workload progress {self.progress():.2f} < {step.at} for {step}", owed=Owed.HARNESS)
        if self.halt.is_set():
            return
        before = self.cluster.state.partition_state(step.topic, step.partition)
        fault = FAULTS[step.fault](self.cluster, "leader", step.topic, step.partition)
        victim = fault.inject()
        progress.step(f"nemesis: {step.fault} the leader of {step.topic}-{step.partition} (broker {victim})")
        self.events.add("nemesis", f"{step.fault}-injected", broker=victim, topic=step.topic,
                        partition=step.partition, epoch=before.leader_epoch, progress=round(self.progress(), 3))
        after = self.cluster.state.wait_for_partition(
            step.topic, step.partition, lambda s: s.leader not in (-1, victim),
            f"a leader other than the faulted broker {victim}", self.timeout,
        )
        self.events.add("nemesis", "leader-moved", leader=after.leader, epoch=after.leader_epoch)
        progress.step(f"nemesis: broker {after.leader} leads {step.topic}-{step.partition} at epoch "
                      f"{after.leader_epoch}; healing broker {victim}")
        fault.heal()
        self.wait_healthy()
        self.events.add("nemesis", f"{step.fault}-healed", broker=victim)

    def wait_healthy(self) -> None:
        """Every broker running and every watched partition fully in sync."""
        brokers = set(self.cluster.broker_ids)
        lagging: list[object] = []

        def healthy() -> bool:
            lagging.clear()
            if set(self.cluster.state.running_brokers()) != brokers:
                lagging.append(f"running {self.cluster.state.running_brokers()}")
                return False
            for topic, partitions in self.watched.items():
                for p in range(partitions):
                    try:
                        # Agreed: a broker just healed still describes the partition as it was before.
                        s = self.cluster.state.agreed_state(topic, p)
                    except KctsError as exc:
                        lagging.append(str(exc))
                        continue
                    if set(s.isr) != set(s.replicas) or s.leader < 0:
                        lagging.append(s)
            return not lagging

        wait_until(healthy, self.timeout, lambda: f"not yet healthy: {lagging[:4]}", interval=0.25,
                   owed=Owed.PREMISE)

    def _heal_all(self) -> None:
        for b in self.cluster.broker_ids:
            state = self.cluster.node_state(b)
            if state is NodeState.PAUSED:
                self.cluster.resume_node(b)
            if self.cluster.node_state(b) is not NodeState.RUNNING:
                self.cluster.start_node(b)
