"""A producer of each client stack writing through the protocol proxy after a leader move (KIP-359).

The partition's leader is moved once (its epoch above 0, so that -1 and 0 are told apart from the
current epoch); then the stack's producer driver (harness.scenarios.kip359's, through the proxy: the
run's confluent-kafka release, KctsProducer on the target's Java clients, franz-go) writes until
ACKED records are acknowledged, and is stopped. Every Metadata answer naming the partition and every
Produce partition entry it sent are recorded with when.
"""

from __future__ import annotations

import time

from harness import session
from harness.clients import raw as rr
from harness.clients import stacks
from harness.clients.driver import ClientDriver
from harness.clients.stacks import client_version
from harness.cluster.base import Cluster
from harness.errors import PromiseUnkept
from harness.histories.producer_epochs import ProduceEntry, ProducerEpochRun
from harness.nemesis.leadership import move_leader_away
from harness.protocol.produce_schema import partition_fields, versions_with_epoch
from harness.proxy.server import Proxy
from harness.scenarios.client_reactions import at, metadata_told
from harness.scenarios.kip359 import produce_schema, stop_producer
from harness.waiting import Owed, wait_until

ACKED = 40


def _driver(cluster: Cluster, proxy: Proxy, stack: str, topic: str) -> ClientDriver:
    log = session.current().scratch("clients") / f"{stack}-producer-epochs-{topic}.log"
    return stacks.producer_driver(stack, cluster.java_clients, proxy.client_config(), topic, log)


def producer_epochs(cluster: Cluster, topic: str, stack: str) -> ProducerEpochRun:
    """See the module."""
    schema = produce_schema(cluster)
    with_epoch = tuple(versions_with_epoch(partition_fields(schema.specs, schema.spoken)))
    _, moved = move_leader_away(cluster, topic)
    with rr.RawConnector(cluster) as raw:
        tid = rr.topic_id(raw(moved.leader), topic)
    incomplete = None
    with Proxy.for_cluster(cluster) as proxy:
        t0 = time.monotonic()
        driver = _driver(cluster, proxy, stack, topic)
        with driver:
            driver.wait_ready()

            def acked() -> int:
                return sum(1 for e in driver.events if e.get("event") == "producer_send_success")

            try:
                wait_until(lambda: acked() >= ACKED, 60, lambda: f"{stack} acknowledged {acked()} of {ACKED}",
                           owed=Owed.PROMISE)
            except PromiseUnkept as exc:  # how far the producer got is the check's evidence
                incomplete = str(exc)
            stop_producer(driver)
        entries = []
        for e in sorted(proxy.recording.exchanges("Produce"), key=lambda e: e.started):
            if e.request is None:
                continue
            for t in e.request.get("TopicData") or ():
                if t.get("Name") != topic and t.get("TopicId") != tid:
                    continue
                for p in t.get("PartitionData") or ():
                    if p.get("Index") == 0:
                        entries.append(ProduceEntry(at(e.started, t0), e.version, tuple(p),
                                                    p.get("CurrentLeaderEpoch")))
        learned = metadata_told(proxy, topic, t0)
    named = client_version(driver) or (f"kafka-clients {cluster.java_clients}" if stack == stacks.JAVA else None)
    return ProducerEpochRun(stack, named, topic, moved.leader_epoch, learned, tuple(entries),
                            acked(), with_epoch, tuple(schema.advertised), incomplete)  # type: ignore[arg-type]
