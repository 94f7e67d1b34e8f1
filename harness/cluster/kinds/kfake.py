"""franz-go's kfake, built and started here (`--target kfake`)."""

from __future__ import annotations

from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.factory import Backend
from harness.cluster.target import API, KFAKE, Capabilities, TargetKind, TargetSpec


def _make(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.kfake import KfakeCluster

    return KfakeCluster(target)


def _prepare(target: TargetSpec) -> str:
    from harness.cluster.kfake import ensure_binary

    return f"kfake at {ensure_binary()}"


KIND = TargetKind(
    name=KFAKE,
    spelling="`kfake`                   franz-go's kfake, built and started here",
    capabilities=lambda spec: Capabilities(
        fault_control=True, node_logs=False, side_clusters=False, owned=True, leader_moves=API, replication=False,
        no_replication="kfake keeps one log per partition that every broker serves; its Metadata lists "
        "every replica in the ISR whatever state the brokers are in, so no follower falls behind and "
        "no election can diverge a log"),
    run_args=lambda spec: ["--backend", KFAKE, "--brokers", str(spec.brokers)],
    words=(KFAKE,),
    backend=KFAKE,
)

BACKEND = Backend(make=_make, prepare=_prepare)
