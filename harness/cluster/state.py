"""What a cluster's brokers say of it: partition state, log end offsets and the waits on them, read
over the wire through the few members of the Cluster interface that say which brokers run and where
to ask them (`Observed`). Every backend gets these as `cluster.state`; none implements them.

Each read of partitions and offsets asks the brokers, never a cache: each call reflects the cluster as it
is now. Whether the brokers serve CreateTopics is asked once per cluster (`no_create_topics`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from harness.cluster import probe
from harness.errors import KctsError, TargetRefused
from harness.process.service import ProcessState as NodeState
from harness.protocol.auth import Transport
from harness.protocol.client import RawClient
from harness.protocol.exceptions import ProtocolError
from harness.protocol.spec import SpecError
from harness.waiting import Owed, wait_until

__all__ = ["METADATA_EPOCH_CHECK", "ClusterState", "Observed", "PartitionState", "no_leader_epoch",
           "require_leader_epoch"]


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


class Observed(Protocol):
    """What the reads need of a cluster (harness.cluster.base.Cluster has each)."""

    @property
    def broker_ids(self) -> list[int]: ...
    def node_state(self, broker_id: int) -> NodeState: ...
    def probe_address(self, broker_id: int) -> tuple[str, int]: ...
    def probe_transport(self, broker_id: int) -> Transport: ...
    def deaf_to_controller(self) -> set[int]: ...


def _api_name(client: RawClient, key: int) -> str:
    try:
        return client.specs.api(key).name
    except SpecError:  # an API newer than the specs kcts speaks
        return f"API {key}"


class ClusterState:
    """The brokers' own account of one cluster."""

    def __init__(self, cluster: Observed) -> None:
        self.cluster = cluster
        self._create_topics_asked = False
        self._no_create_topics: str | None = None

    def running_brokers(self) -> list[int]:
        return [b for b in self.cluster.broker_ids if self.cluster.node_state(b) is NodeState.RUNNING]

    def observers(self) -> list[int]:
        """The running brokers in the order state queries ask them: one cut off from the controller
        answers from a stale view, so those come last."""
        running = self.running_brokers()
        deaf = self.cluster.deaf_to_controller()
        return [b for b in running if b not in deaf] + [b for b in running if b in deaf]

    def _metadata(self, broker: int, topics: list[str], timeout: float = 5.0) -> probe.BrokerMetadata:
        host, port = self.cluster.probe_address(broker)
        return probe.metadata(host, port, topics, timeout=timeout, transport=self.cluster.probe_transport(broker))

    # -- partitions ------------------------------------------------------------------------------
    def partition_state(self, topic: str, partition: int = 0, broker: int | None = None) -> PartitionState:
        """Leader, epoch, replicas and ISR, as `broker` sees them (default: the first running one that answers)."""
        errors: list[str] = []
        for b in self.observers() if broker is None else [broker]:
            try:
                md = self._metadata(b, [topic])
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
        host, port = self.cluster.probe_address(broker_id)
        return probe.log_end_offset(host, port, topic, partition, transport=self.cluster.probe_transport(broker_id))

    # -- what the brokers serve ------------------------------------------------------------------
    def no_create_topics(self) -> str | None:
        """Why the target's brokers serve no CreateTopics, with the evidence (the ApiVersions a broker
        advertises, where API 19 is absent); None where they serve it. Decided once per cluster, so
        that no check waits on a CreateTopics the target said it does not serve."""
        if self._create_topics_asked:
            return self._no_create_topics
        for b in self.running_brokers():
            host, port = self.cluster.probe_address(b)
            try:
                with RawClient.connect(host, port, timeout=10, client_id="kcts-probe",
                                       transport=self.cluster.probe_transport(b)) as c:
                    offered = dict(c.broker_versions)
                    names = {k: _api_name(c, k) for k in offered}
            except (OSError, ProtocolError):
                continue  # the next broker, or CreateTopics itself, will say what is wrong
            why = None
            if CREATE_TOPICS not in offered:
                listed = ", ".join(f"{names[k]} {lo}-{hi}" for k, (lo, hi) in sorted(offered.items()))
                why = (f"its brokers serve no CreateTopics: API {CREATE_TOPICS} is not among those broker {b} "
                       f"advertises in ApiVersions ({listed})")
            self._create_topics_asked, self._no_create_topics = True, why
            return why
        return None

    # -- waits -----------------------------------------------------------------------------------
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
                try:
                    md = self._metadata(b, [], timeout=2)
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
