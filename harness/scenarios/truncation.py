"""One forced unclean election, watched by every consumer the KIP-320 truncation checks judge.

Before the election each consumer reads past the divergence point: 20 replicated records, then 30
that only the old leader holds (acks=1). The election truncates those 30; the new leader then
writes 60, so every consumer's position (50) is valid again in the new log and only epoch
validation can tell that records 20..49 changed under it (seed 000, "Motivation").

Watching consumers, per client (confluent-kafka's librdkafka, and the Java client of the target's
Java-clients version through the Kip320Consumers driver):
- `<client>/earliest`, `<client>/latest`: positioned by assign() and reading when the election hits;
- `<client>/none`: the same with no reset policy (librdkafka `error`, Java `none`);
- `<client>/group-restart`: a group member read to 50 and committed (offset, epoch) before the
  election; after it, a new member of the group, with no reset policy, starts from that commit;
- `<client>/seek`: after the election, a consumer with no reset policy positioned at (50, the old
  epoch) by seek with an offset and epoch (librdkafka: an assignment carrying the leader epoch).
Everything each one read or reported after the election is recorded; the checks judge it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from harness.clients import kafka
from harness.clients.history import produce, read_through
from harness.clients.jvm import JavaClient
from harness.clients.kafka import LIBRDKAFKA_VERSION  # noqa: F401 - the suites' name for it
from harness.cluster.base import Cluster
from harness.kafka.dist import resolve
from harness.nemesis.unclean import UncleanElection, force_unclean_election
from harness.waiting import WaitTimeout, wait_until

REPLICATED, DIVERGENT, REWRITTEN = 20, 30, 60
RESETS = {"librdkafka": ("earliest", "latest", "error"), "java": ("earliest", "latest", "none")}
NO_RESET = {"librdkafka": "error", "java": "none"}


@dataclass(frozen=True)
class Observed:
    """What one consumer read ({offset, epoch, value}) and reported (code or exception, message) after the election."""

    reads: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class TruncationHistory:
    topic: str
    election: UncleanElection
    position_before: int
    new_leader_writes: list[dict[str, Any]]
    committed_before: dict[str, dict[str, int]]
    observed: dict[str, Observed]
    incomplete: str | None = None

    @property
    def divergence(self) -> int:
        return self.election.divergence_offset

    def evidence(self) -> str:
        e = self.election
        return (
            f"unclean election {e.old_leader}@{e.epoch_before} -> {e.new_leader}@{e.epoch_after}, divergence at "
            f"{e.divergence_offset}, truncated {e.truncated}; consumers were at {self.position_before}"
            + (f"; collection incomplete: {self.incomplete}" if self.incomplete else "")
        )


def _consumer_config(cluster: Cluster, reset: str, group: str) -> dict[str, object]:
    return {
        **cluster.client_config(), "group.id": group, "enable.auto.commit": False,
        "auto.offset.reset": reset, "enable.partition.eof": False,
        # librdkafka validates a position only when metadata shows a new leader epoch.
        "topic.metadata.refresh.interval.ms": 1000,
    }


def poll_into(consumer: Consumer, into: Observed) -> None:
    """One poll: a record ({offset, epoch, value}) or an error ({code, message}) into `into`."""
    msg = consumer.poll(0.05)
    if msg is None:
        return
    if msg.error() is not None:
        err: KafkaError = msg.error()
        into.errors.append({"code": err.name(), "message": err.str()})
    else:
        into.reads.append({"offset": msg.offset(), "epoch": msg.leader_epoch(), "value": msg.value().decode()})


Elect = Callable[[Cluster, str, Callable[[], None]], UncleanElection]


def _stopping_nodes(cluster: Cluster, topic: str, write_divergent: Callable[[], None]) -> UncleanElection:
    return force_unclean_election(cluster, topic, write_divergent=write_divergent)


def unclean_election_watched(
    cluster: Cluster, topic: str, groups: dict[str, str], elect: Elect = _stopping_nodes
) -> TruncationHistory:
    """Run the scenario on `topic` (2 replicas, unclean election enabled); `groups` names each client's
    group. `elect(cluster, topic, write_divergent)` forces the election: by default by stopping
    nodes; `harness.nemesis.partitions` makes it by cutting links instead."""
    config = cluster.client_config()
    java = JavaClient.driver(
        resolve(cluster.java_clients), "Kip320Consumers", [cluster.bootstrap_servers, topic, "0"], config=config
    )
    with ExitStack() as clients, ExitStack() as group_member:
        clients.callback(stop_java, java)
        writer = clients.enter_context(kafka.producer({**config, "acks": "all"}))
        produce(writer, topic, [f"replicated-{i}".encode() for i in range(REPLICATED)])
        lib: dict[str, Consumer] = {}
        java.start()
        java.wait_for(lambda e: e.get("event") == "ready", 60, "start")
        for reset in RESETS["librdkafka"]:
            lib[f"librdkafka/{reset}"] = c = clients.enter_context(
                kafka.consumer(_consumer_config(cluster, reset, f"{groups['librdkafka']}-assign-{reset}"))
            )
            c.assign([TopicPartition(topic, 0, 0)])
        for reset in RESETS["java"]:
            java.send_line(f"assign java/{reset} {reset} 0")
        lib["librdkafka/group"] = member = group_member.enter_context(
            kafka.consumer(_consumer_config(cluster, "earliest", groups["librdkafka"]))
        )
        member.subscribe([topic])
        java.send_line(f"subscribe java/group earliest {groups['java']}")
        committed: dict[str, dict[str, int]] = {}
        java_mark = [0]

        def diverge() -> None:
            with kafka.producer({**config, "acks": "1", "enable.idempotence": False}) as divergent:
                written = produce(divergent, topic, [f"divergent-{i}".encode() for i in range(DIVERGENT)])
            # The election may have put records of its own before these (the partition nemesis does).
            last = max(w.offset for w in written.acked)
            for name, c in lib.items():
                read_through(c, last, name)
            for name in [f"java/{r}" for r in RESETS["java"]] + ["java/group"]:
                java.wait_for(lambda e, n=name: e.get("event") == "record" and e["consumer"] == n
                              and e["offset"] == last, 30, f"{name} reads through {last}")
            member.commit(asynchronous=False)
            (tp,) = member.committed([TopicPartition(topic, 0)], timeout=10)
            committed["librdkafka"] = {"offset": tp.offset, "epoch": tp.leader_epoch}
            del lib["librdkafka/group"]
            group_member.close()
            java.send_line("commit java/group")
            event = java.wait_for(lambda e: e.get("event") == "committed", 30, "commit java/group")
            committed["java"] = {"offset": event["offset"], "epoch": event["epoch"]}
            java.send_line("close java/group")
            java_mark[0] = len(java.events)

        election = elect(cluster, topic, diverge)
        rewritten = produce(writer, topic, [f"new-leader-{i}".encode() for i in range(REWRITTEN)])
        new_writes = [{"offset": w.offset, "value": w.value.decode()} for w in rewritten.acked]

        # KIP-320 "Consumer Handling", extension 3: a position restored from outside (the offset the
        # consumers had reached, with the epoch of the record before it) is validated on the next poll.
        seek = {"offset": election.old_leader_leo_before, "epoch": election.epoch_before}
        lib["librdkafka/seek"] = sought = clients.enter_context(
            kafka.consumer(_consumer_config(cluster, NO_RESET["librdkafka"], f"{groups['librdkafka']}-seek"))
        )
        sought.assign([TopicPartition(topic, 0, seek["offset"], leader_epoch=seek["epoch"])])
        java.send_line(f"seekepoch java/seek {NO_RESET['java']} {seek['offset']} {seek['epoch']}")

        lib["librdkafka/group-restart"] = restarted = clients.enter_context(
            kafka.consumer(_consumer_config(cluster, NO_RESET["librdkafka"], groups["librdkafka"]))
        )
        restarted.subscribe([topic])
        java.send_line(f"subscribe java/group-restart {NO_RESET['java']} {groups['java']}")

        observed = {name: Observed() for name in [*lib, *(f"java/{r}" for r in RESETS["java"]), "java/group-restart",
                                                  "java/seek"]}
        last_new = new_writes[-1]["offset"] if new_writes else -1
        incomplete = watch_until_settled(lib, java, java_mark[0], observed, last_new)
        return TruncationHistory(
            topic, election, election.old_leader_leo_before, new_writes, committed, observed, incomplete
        )


def watch_until_settled(
    lib: dict[str, Consumer], java: JavaClient, mark: int, observed: dict[str, Observed], last: int,
    timeout: float = 45.0,
) -> str | None:
    """Poll the librdkafka consumers `lib` and the Java driver's events from `mark` on into `observed`
    (by consumer name) until each consumer reported an error or read through offset `last`; None, or
    why not (kept as evidence: the checks of the consumers that did not settle fail on it)."""
    seen = mark

    def settled(name: str) -> bool:
        o = observed[name]
        return bool(o.errors) or (bool(o.reads) and o.reads[-1]["offset"] >= last)

    def everyone_settled() -> bool:
        nonlocal seen
        for name, c in lib.items():
            poll_into(c, observed[name])
        for e in java.events[seen:]:
            seen += 1
            o = observed.get(e.get("consumer", ""))
            if o is None:
                continue
            if e["event"] == "record":
                o.reads.append({"offset": e["offset"], "epoch": e["epoch"], "value": e["value"]})
            elif e["event"] == "error":
                o.errors.append({k: v for k, v in e.items() if k not in ("event", "consumer")})
        return all(settled(name) for name in observed)

    try:
        wait_until(everyone_settled, timeout, lambda: "; ".join(
            f"{n}: {len(o.reads)} reads, errors {o.errors[:1]}" for n, o in observed.items() if not settled(n)
        ), interval=0)
    except WaitTimeout as exc:
        return str(exc)
    return None


def stop_java(java: JavaClient) -> None:
    if java.proc is not None and java.proc.poll() is None:
        java.send_line("exit")
        try:
            java.wait_exit(60)  # a JVM that said "exited" may take long to go on a loaded 2-core machine
        finally:
            java.stop()
