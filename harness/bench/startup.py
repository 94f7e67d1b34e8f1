"""`kcts bench startup`: time to ready a controller + N brokers ÷ time to ready one combined node.

With `--cluster-in containers`: time to ready the same cluster in containers (harness.cluster.docker) ÷
time to ready it as local processes, measured in turn in one run; the cold image build (the base
image by debootstrap, then Kafka's) is timed first, from an engine holding neither.
"""

from __future__ import annotations

import os
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


def time_docker(version: str, brokers: int) -> float:
    from harness.cluster.docker import DockerCluster
    from harness.cluster.kinds.docker import docker_target

    t0 = time.monotonic()
    with DockerCluster(docker_target(version, None, brokers=brokers)):
        return time.monotonic() - t0


def cold_image_build(dist: KafkaDistribution) -> dict[str, object]:
    """Remove kcts's base and Kafka images of this content, then build both; the seconds each took."""
    from harness import docker_engine
    from harness.containers import images

    client = docker_engine.client()
    base = images.base_tag()
    kafka = images.kafka_tag(dist, base)
    for tag in (kafka, f"{images.KAFKA_REPO}:{dist.version}", base):
        if images.exists(client, tag):
            client.images.remove(tag, force=True)
    os.environ["KCTS_BASE_REBUILD"] = "1"  # debootstrap again, not the saved image
    t0 = time.monotonic()
    try:
        built_base = images.ensure_base(client)
    finally:
        del os.environ["KCTS_BASE_REBUILD"]
    t1 = time.monotonic()
    images.ensure_kafka(client, dist)
    t2 = time.monotonic()
    return {"base_image_s": round(t1 - t0, 1), "kafka_image_s": round(t2 - t1, 1),
            "cold_build_s": round(t2 - t0, 1), "base_tag": built_base.tag}


def run_docker(version: str = DEFAULT_VERSION, brokers: int = 3, rounds: int = 3,
               cold: bool = True) -> dict[str, object]:
    dist = resolve(version)
    ensure_cds_archive(dist)
    build = cold_image_build(dist) if cold else {}
    time_docker(version, brokers)  # warm both: the page cache holds the image's layers and the jars
    time_cluster(dist, brokers)
    docker, local = [], []
    for _ in range(rounds):  # interleaved, so that machine noise hits both sides alike
        local.append(time_cluster(dist, brokers))
        docker.append(time_docker(version, brokers))
    d, loc = statistics.median(docker), statistics.median(local)
    return {
        "bench": "startup",
        "backend": "docker",
        "kafka_version": dist.version,
        "brokers": brokers,
        "rounds": rounds,
        "docker_cluster_ready_s": round(d, 3),
        "local_cluster_ready_s": round(loc, 3),
        "docker_samples_s": [round(x, 3) for x in docker],
        "local_samples_s": [round(x, 3) for x in local],
        "ratio": round(d / loc, 3),
        **build,
    }


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
