"""A local Apache Kafka cluster of one release, started here (`--target 4.4.0`, `--backend local`)."""

from __future__ import annotations

from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.factory import Backend
from harness.cluster.target import APACHE, REASSIGNMENT, Capabilities, TargetKind, TargetSpec


def _make(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.local import LocalCluster, LocalClusterSpec

    assert target.version is not None
    return LocalCluster(LocalClusterSpec(version=target.version, brokers=target.brokers, log_dir=log_dir),
                        target=target)


def _prepare(target: TargetSpec) -> str:
    from harness.kafka.dist import check_java, resolve

    assert target.version is not None
    check_java()
    dist = resolve(target.version)
    return f"Apache Kafka {dist.version} ({len(dist.jars)} jars, tools {dist.tools_version})"


KIND = TargetKind(
    name=APACHE,
    spelling="`4.4.0`, `4.0.x`          a local Apache Kafka cluster of that version",
    capabilities=lambda spec: Capabilities(fault_control=True, node_logs=True, side_clusters=True, owned=True,
                                           leader_moves=REASSIGNMENT, replication=True, controller=True),
    run_args=lambda spec: ["--kafka-version", str(spec.version), "--brokers", str(spec.brokers)],
    backend="local",
    apache_release=lambda spec: spec.version is not None,
)

BACKEND = Backend(make=_make, prepare=_prepare)
