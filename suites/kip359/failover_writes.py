"""Idempotent producers writing one partition while its leader is crashed, stopped and paused.

Two producers write the same partition at once: confluent-kafka (librdkafka) from a thread here,
and the Java client of the target's version through kafka-tools' VerifiableProducer. Between
faults each must make progress, so that every failover hits writes in flight. Each fault moves
leadership (the controller fences a crashed or paused broker within seconds), is healed, and the
partition is back to three in-sync replicas before the next. The log is then read raw, whole.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, Message, Producer

from harness import session
from harness.clients import raw as rr
from harness.clients.admin import QUIET
from harness.clients.jvm import VERIFIABLE_PRODUCER, JavaClient
from harness.cluster.base import Cluster
from harness.kafka.dist import resolve
from harness.nemesis.faults import CleanStop, Crash, Fault, Pause
from harness.waiting import wait_until

PROGRESS = 100  # acknowledged writes each producer must add between two faults
JAVA_PREFIX = 7  # VerifiableProducer values are "<prefix>.<n>"


@dataclass
class Writes:
    """One producer's history: values in send order, acknowledgements, failures."""

    sent: list[str] = field(default_factory=list)
    acks: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


@dataclass
class FailoverWrites:
    topic: str
    faults: list[str]
    writes: dict[str, Writes]
    log: list[dict[str, Any]]


class LibrdkafkaWriter:
    """Sends `py-<n>` as fast as the producer takes them, until stopped; acks recorded by callback."""

    def __init__(self, cluster: Cluster, topic: str) -> None:
        self.producer = Producer({
            **cluster.client_config(), **QUIET, "acks": "all", "enable.idempotence": True, "linger.ms": 5,
            "queue.buffering.max.messages": 200,  # keeps the in-flight window small and steady
            # A paused leader answers nothing: give up on it after 10 s, as the Java producer below
            # does, rather than the 60 s socket default, and retry on the new leader.
            "socket.timeout.ms": 10000, "request.timeout.ms": 10000,
        })
        self.topic = topic
        self.writes = Writes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kip359-librdkafka-writer", daemon=True)

    def _report(self, err: KafkaError | None, msg: Message) -> None:
        if err is None:
            self.writes.acks.append({"value": msg.value().decode(), "offset": msg.offset()})
        else:
            self.writes.failures.append(f"{msg.value().decode()}: {err}")

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            value = f"py-{n:06d}"
            try:
                self.producer.produce(self.topic, value.encode(), partition=0, on_delivery=self._report)
            except BufferError:
                self.producer.poll(0.05)  # the queue is full while a leader is down: wait for acks
                continue
            self.writes.sent.append(value)
            n += 1
            self.producer.poll(0)
            self._stop.wait(0.005)  # a steady stream (about 200/s), not a flood, on 2 cores shared with 4 JVMs

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        left = self.producer.flush(60)
        if left:
            self.writes.failures.append(f"{left} records without a delivery report 60 s after the last send")


def _java_writes(java: JavaClient) -> Writes:
    """VerifiableProducer sends <prefix>.0, .1, ... in order: every number up to the last reported was sent,
    so one with no event at all shows up as unacknowledged."""
    events = {int(str(e["value"]).split(".")[1]): e for e in java.events
              if e.get("name") in ("producer_send_success", "producer_send_error")}
    w = Writes(sent=[f"{JAVA_PREFIX}.{n}" for n in range(max(events, default=-1) + 1)])
    for n in sorted(events):
        e = events[n]
        if e["name"] == "producer_send_success":
            w.acks.append({"value": str(e["value"]), "offset": e["offset"]})
        else:
            w.failures.append(f"{e['value']}: {e.get('exception')} {e.get('message')}")
    return w


def run_failover_writes(cluster: Cluster, topic: str) -> FailoverWrites:
    config = session.current().scratch("kip359") / "producer.properties"
    # VerifiableProducer sets retries=0, which idempotence refuses; the file overrides it.
    config.write_text("enable.idempotence=true\nacks=all\nretries=2147483647\nlinger.ms=5\nrequest.timeout.ms=10000\n")
    java = JavaClient(resolve(cluster.client_version), VERIFIABLE_PRODUCER, [
        "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic, "--throughput", "200",
        "--value-prefix", str(JAVA_PREFIX), "--command-config", str(config),
    ])
    py = LibrdkafkaWriter(cluster, topic)
    replicas = set(cluster.partition_state(topic).replicas)
    applied: list[str] = []

    def acked() -> dict[str, int]:
        return {"librdkafka": len(py.writes.acks),
                "java": sum(1 for e in java.events if e.get("name") == "producer_send_success")}

    def progress() -> None:
        start = acked()
        wait_until(lambda: all(acked()[k] >= start[k] + PROGRESS for k in start), 60,
                   lambda: f"both producers adding {PROGRESS} acks: from {start} to {acked()}; "
                   f"java {java.describe()}; librdkafka failures {py.writes.failures[:3]}")

    try:
        java.start()
        py.start()
        progress()
        for fault in (Crash, CleanStop, Pause):
            f: Fault = fault(cluster, "leader", topic)
            before = cluster.partition_state(topic)
            hit = f.inject()
            after = cluster.wait_for_partition(
                topic, 0, lambda s, hit=hit, e=before.leader_epoch: s.leader not in (-1, hit) and s.leader_epoch > e,
                f"a new leader after the {f.name} of {hit}",
            )
            applied.append(f"{f.name} of {hit}@{before.leader_epoch} -> {after.leader}@{after.leader_epoch}")
            progress()
            f.heal()
            cluster.wait_for_isr(topic, 0, replicas)
        progress()
    finally:
        py.stop()
        java.stop()
    client = rr.RawConnector(cluster)
    try:
        leader = cluster.partition_state(topic).leader
        batches, _ = rr.read_log(client(leader), topic, rr.topic_id(client(leader), topic))
    finally:
        client.close()
    log = [{"offset": r.offset, "value": (r.value or b"").decode()} for b in batches if not b.is_control
           for r in b.records]
    return FailoverWrites(topic, applied, {"librdkafka": py.writes, "java": _java_writes(java)}, log)
