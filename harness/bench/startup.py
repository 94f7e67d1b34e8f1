"""`kcts bench startup`: time to ready a controller + N brokers ÷ time to ready one combined node."""

from __future__ import annotations

import statistics
import time

from harness import session
from harness.cluster.combined import combined_node, ensure_cds_archive, start_and_wait
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.kafka.dist import DEFAULT_VERSION, KafkaDistribution, cache_root, resolve
from harness.process.cds import cds_archive_path
from harness.process.ports import free_port


def time_cluster(dist: KafkaDistribution, brokers: int) -> float:
    t0 = time.monotonic()
    with LocalCluster(LocalClusterSpec(version=dist.version, brokers=brokers), dist):
        return time.monotonic() - t0


def time_combined(dist: KafkaDistribution) -> float:
    """Format and start one node with process.roles=broker,controller; ready = it lists itself."""
    workdir = session.current().scratch("combined")
    port = free_port()
    archive = cds_archive_path(cache_root(), dist.version, dist.jars)
    node = combined_node(dist, workdir, port, free_port(), cds_archive=archive)
    t0 = time.monotonic()
    try:
        start_and_wait(node, dist, port)
        return time.monotonic() - t0
    finally:
        node.stop(20)
        session.remove_tree(workdir)


def run(version: str = DEFAULT_VERSION, brokers: int = 3, rounds: int = 3) -> dict[str, object]:
    dist = resolve(version)
    ensure_cds_archive(dist)  # both sides then map the same archive and format template
    time_cluster(dist, brokers)
    clusters, combined = [], []
    for _ in range(rounds):  # interleaved, so that machine noise hits both sides alike
        combined.append(time_combined(dist))
        clusters.append(time_cluster(dist, brokers))
    c, s = statistics.median(clusters), statistics.median(combined)
    return {
        "bench": "startup",
        "kafka_version": dist.version,
        "brokers": brokers,
        "rounds": rounds,
        "cluster_ready_s": round(c, 3),
        "combined_node_ready_s": round(s, 3),
        "cluster_samples_s": [round(x, 3) for x in clusters],
        "combined_samples_s": [round(x, 3) for x in combined],
        "ratio": round(c / s, 3),
        "target": "<= 1.5",
    }
