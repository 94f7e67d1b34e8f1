"""A single combined-mode node (broker and controller in one JVM), and the warm-up that dumps the
class-data archive.

The archive (its path: harness.process.cds) is dumped once per classpath by a combined node at
its exit, because that JVM loads both the controller's and the broker's classes; every later JVM
of that classpath maps it.
"""

from __future__ import annotations

import fcntl
from pathlib import Path

from harness import session
from harness.cluster import probe
from harness.cluster.node import KafkaNode, random_kafka_uuid
from harness.kafka.dist import KafkaDistribution, cache_root
from harness.process.cds import cds_archive_path
from harness.process.ports import free_port
from harness.waiting import wait_until

HOST = "127.0.0.1"
NODE_ID = 1000


def combined_node(
    dist: KafkaDistribution, workdir: Path, port: int, controller_port: int, **kw: Path | None
) -> KafkaNode:
    props: dict[str, object] = {
        "process.roles": "broker,controller",
        "node.id": NODE_ID,
        "controller.quorum.voters": f"{NODE_ID}@{HOST}:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "listeners": f"CLIENT://{HOST}:{port},CONTROLLER://{HOST}:{controller_port}",
        "advertised.listeners": f"CLIENT://{HOST}:{port}",
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "CLIENT",
        "log.dirs": workdir / "data",
        "offsets.topic.replication.factor": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
    }
    return KafkaNode(NODE_ID, "combined", props, dist, workdir, workdir / "combined.log", **kw)


def start_and_wait(node: KafkaNode, dist: KafkaDistribution, port: int, timeout: float = 120.0) -> None:
    node.format_from_template(random_kafka_uuid(), {}, cache_root() / "formats" / dist.version)
    node.spawn()

    def ready() -> bool:
        node.check_alive()
        return NODE_ID in probe.metadata(HOST, port, topics=[], timeout=2).broker_ids

    wait_until(ready, timeout, lambda: node.log_tail(10))


def ensure_cds_archive(dist: KafkaDistribution) -> Path:
    """Dump the archive if this classpath has none yet (a few seconds, once per version)."""
    archive = cds_archive_path(cache_root(), dist.version, dist.jars)
    if archive.exists():
        return archive
    with open(archive.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if archive.exists():
            return archive
        workdir = session.current().scratch("cds-warmup")
        tmp = archive.with_suffix(f".tmp{id(workdir)}.jsa")
        port = free_port()
        node = combined_node(dist, workdir, port, free_port(), archive_out=tmp)
        try:
            start_and_wait(node, dist, port)
        finally:
            node.stop(30)
            session.remove_tree(workdir)
        if tmp.exists():
            tmp.replace(archive)
    return archive
