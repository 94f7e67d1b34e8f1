"""Two unclean elections in a row, watched by consumers reading the epoch the second leader never saw.

KIP-320 "Consumer Handling": "In some pathological cases (e.g. multiple consecutive unclean leader
elections), we may not be able to find the exact offset, but we should be able to get close by
finding the starting offset of the next largest epoch that the leader is aware of."

On a 2-replica partition (A leads, B follows; unclean election enabled, min.insync.replicas 1):
1. both hold 10 records (epoch e0, offsets 0-9);
2. B stops; A alone takes 10 more (acks=1, offsets 10-19, e0);
3. A stops; B starts and is elected uncleanly (e1): its log ends at 10, where e1 begins; it takes 20
   (offsets 10-29, e1). Consumers (librdkafka and Java; earliest and latest) read through 29: their
   position is 30, their last epoch e1;
4. B stops; A starts and is elected uncleanly (e2). A never learned of e1: it holds 0-19 at e0, and
   e2 begins at 20; it takes 20 (offsets 20-39, e2); then B starts and follows it.
Asked with OffsetsForLeaderEpoch for e1, A answers e0 ending at 20, the start of e2: the point each
consumer must resume from. The true divergence (10) is out of anyone's reach, and the consumers'
position (30) is still inside A's log, so only epoch validation can tell that anything changed; what A
advertises for OffsetForLeaderEpoch and Fetch is kept beside it (a client validates only with the
versions it speaks: harness.histories.version_needs.TRUNCATION_DETECTION).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass

from harness import confluent, progress
from harness.clients import stacks
from harness.clients.driver import READ_THROUGH_S, ClientDriver, stopped_on_exit
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster
from harness.histories.text_records import LogRecord
from harness.histories.truncation import ConsumerSeen, RepeatedUncleanConsumer
from harness.histories.version_needs import VALIDATION_APIS, Offered
from harness.nemesis.unclean import elect_unclean
from harness.scenarios.advertised import leader_offers
from harness.scenarios.truncation import Watched, watch_until_settled
from harness.waiting import Owed, wait_until

BOTH, FIRST_ALONE, SECOND_ALONE, LAST_LEADER = 10, 10, 20, 20
RESETS = ("earliest", "latest")


@dataclass(frozen=True)
class RepeatedUnclean:
    """What the two elections did, and what each consumer read and reported after the second."""

    topic: str
    first: int  # A: leads at e0, then again at e2
    second: int  # B: leads at e1
    epochs: tuple[int, int, int]
    e1_start: int  # B's log end when it was elected: the true divergence
    e2_start: int  # A's log end when it was elected again: the start of the next epoch A knows
    position_before: int
    leader_writes: list[LogRecord]  # A's records from e2_start on
    observed: dict[str, ConsumerSeen]
    incomplete: str | None = None
    leader_offers: tuple[Offered, ...] = ()  # what A, which the consumers validate against, advertised

    def consumer(self, name: str) -> RepeatedUncleanConsumer:
        """The consumer `name` (`<stack>/<reset>`) as its check judges it and its recording keeps it."""
        o = self.observed[name]
        return RepeatedUncleanConsumer(o.reads, o.errors, self.e1_start, self.e2_start, self.position_before,
                                       self.epochs, tuple(self.leader_writes))

    def evidence(self) -> str:
        e0, e1, e2 = self.epochs
        return (f"{self.topic}: broker {self.first} led at epoch {e0}, broker {self.second} uncleanly at {e1} "
                f"from offset {self.e1_start}, broker {self.first} uncleanly again at {e2} from offset "
                f"{self.e2_start}; the consumers had read through {self.position_before - 1} at epoch {e1}"
                + (f"; collection incomplete: {self.incomplete}" if self.incomplete else ""))


def _write_alone(cluster: Cluster, topic: str, tag: str, n: int) -> list[LogRecord]:
    with confluent.producer({**cluster.client_config(), "acks": "1", "enable.idempotence": False}) as p:
        return [LogRecord(w.offset, w.value.decode())
                for w in produce(p, topic, [f"{tag}-{i}".encode() for i in range(n)]).acked]


def two_unclean_elections_watched(cluster: Cluster, topic: str, timeout: float = 60.0) -> RepeatedUnclean:
    """Run the scene on `topic` (2 replicas, unclean election enabled, min.insync.replicas 1).
    Every broker it stops runs again on return."""
    start = cluster.state.wait_for_partition(topic, 0, lambda s: len(s.isr) == 2 and s.leader >= 0,
                                             "2 replicas in sync")
    a = start.leader
    (b,) = [r for r in start.replicas if r != a]
    drivers: dict[str, ClientDriver] = {}
    with ExitStack() as clients:
        for stack in stacks.current().judged():
            drivers[stack] = stacks.consumers_driver(stack, cluster.java_clients, cluster.client_config(), topic)
            clients.enter_context(stopped_on_exit(drivers[stack]))
        with confluent.producer({**cluster.client_config(), "acks": "all"}) as both:
            produce(both, topic, [f"both-{i}".encode() for i in range(BOTH)])
        ends = cluster.state.log_end_offset
        wait_until(lambda: ends(topic, 0, b) == ends(topic, 0, a) == BOTH,
                   timeout, lambda: f"both replicas holding {BOTH} records", owed=Owed.PREMISE)

        progress.step(f"nemesis: stopping follower {b}; leader {a} writes alone")
        cluster.stop_node(b)
        cluster.state.wait_for_isr(topic, 0, {a})
        _write_alone(cluster, topic, "first-alone", FIRST_ALONE)

        progress.step(f"nemesis: stopping {a}; electing {b} uncleanly")
        cluster.stop_node(a)
        cluster.start_node(b)
        first = elect_unclean(cluster, topic, 0, b, start.leader_epoch, timeout)
        e1_start = cluster.state.log_end_offset(topic, 0, b)
        written = _write_alone(cluster, topic, "second-alone", SECOND_ALONE)
        last = written[-1].offset

        for stack, d in drivers.items():
            d.start().wait_ready()
            for reset in RESETS:
                d.send_line(f"assign {stack}/{reset} {reset} 0")
        for stack, d in drivers.items():
            for reset in RESETS:
                d.wait_for(lambda e, n=f"{stack}/{reset}": e.get("event") == "record" and e["consumer"] == n
                           and e["offset"] == last, READ_THROUGH_S,
                           f"{stack}/{reset} reads through {last}")
        marks = {stack: len(d.events) for stack, d in drivers.items()}

        progress.step(f"nemesis: stopping {b}; electing {a} uncleanly again, which never saw epoch "
                      f"{first.leader_epoch}")
        cluster.stop_node(b)
        cluster.start_node(a)
        second = elect_unclean(cluster, topic, 0, a, first.leader_epoch, timeout)
        e2_start = cluster.state.log_end_offset(topic, 0, a)
        leader_writes = _write_alone(cluster, topic, "last-leader", LAST_LEADER)
        cluster.start_node(b)
        cluster.state.wait_for_partition(topic, 0, lambda s: b in s.isr, f"broker {b} back in the ISR", timeout)
        offers = leader_offers(cluster, topic, *VALIDATION_APIS)

        watched = {f"{stack}/{reset}": Watched() for stack in drivers for reset in RESETS}
        incomplete = watch_until_settled(drivers, marks, watched, leader_writes[-1].offset)
    observed = {name: w.seen() for name, w in watched.items()}
    return RepeatedUnclean(topic, a, b, (start.leader_epoch, first.leader_epoch, second.leader_epoch), e1_start,
                           e2_start, last + 1, leader_writes, observed, incomplete, offers)
