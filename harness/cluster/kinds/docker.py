"""Apache Kafka in containers, from an image kcts builds offline or a named one (`--target docker:4.4.0`)."""

from __future__ import annotations

from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.factory import Backend
from harness.cluster.target import DOCKER, REASSIGNMENT, Capabilities, TargetKind, TargetSpec, docker_target
from harness.errors import KctsError


def _make(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.docker import DockerCluster

    return DockerCluster(target, log_dir)


def _prepare(target: TargetSpec) -> str:
    from harness import docker_engine
    from harness.cluster.docker import check_ports_free
    from harness.docker import images
    from harness.kafka.dist import check_java, resolve

    check_java()  # the Java clients, and any side cluster, run here
    if target.publish_from:
        check_ports_free({b: target.publish_from + b - 1 for b in range(1, target.brokers + 1)})
    client = docker_engine.client()
    if target.image:
        built = images.require(client, target.image)
    else:
        assert target.version is not None
        built = images.ensure_kafka(client, resolve(target.version))
    how = f"built in {built.seconds:.0f} s" if built.seconds else "reused"
    return f"Apache Kafka {target.version or ''} in containers from {built.tag} ({how})"


def _validate(spec: TargetSpec) -> None:
    if not (spec.version or spec.image):
        raise KctsError("a docker target needs an Apache Kafka version (--kafka-version) or an image (--image)")


def _run_args(spec: TargetSpec) -> list[str]:
    own = ["--kafka-version", spec.version] if spec.version else []
    image = ["--image", spec.image] if spec.image else []
    ports = ["--publish-from", str(spec.publish_from)] if spec.publish_from else []
    return ["--backend", DOCKER, *own, *image, *ports, "--brokers", str(spec.brokers)]


KIND = TargetKind(
    name=DOCKER,
    spelling="`docker:4.4.0`            Apache Kafka 4.4.0 in containers, from an image kcts builds offline\n"
             "  `docker:IMAGE`            the same from a named image (`docker:apache/kafka:4.4.0`)",
    # As a local cluster, and a node can be cut off the network.
    capabilities=lambda spec: Capabilities(
        fault_control=True, node_logs=True, side_clusters=spec.version is not None, owned=True,
        leader_moves=REASSIGNMENT, replication=True, controller=True, partitions=True),
    run_args=_run_args,
    prefix=f"{DOCKER}:",
    parse_rest=lambda rest, **overrides: docker_target(rest, None, **overrides),
    backend=DOCKER,
    # A named image's release is the image's business unless its tag says it (docker_target).
    apache_release=lambda spec: spec.version is not None,
    validate=_validate,
    label=lambda spec: f"docker:{spec.image or spec.version}",
)

BACKEND = Backend(make=_make, prepare=_prepare)
