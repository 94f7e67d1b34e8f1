"""Any broker binary the harness starts and controls, as its profile says (`--target tansu`, a
profile with kind = "command": the tables harness/cluster/command.py reads)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.factory import Backend
from harness.cluster.target import COMMAND, HOOK, Capabilities, TargetKind, TargetSpec


def _make(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.command import CommandCluster

    return CommandCluster(target, log_dir)


def _prepare(target: TargetSpec) -> str:
    from harness.cluster.command import prepare

    return prepare(target)


def _capabilities(spec: TargetSpec) -> Capabilities:
    # Nodes in containers ([node] image) can also be cut off the run's network.
    node = spec.tables.get("node")
    return Capabilities(fault_control=True, node_logs=True, side_clusters=False, owned=True,
                        leader_moves=HOOK if "leader_move" in spec.tables else None, replication=True,
                        partitions=isinstance(node, Mapping) and "image" in node)


KIND = TargetKind(
    name=COMMAND,
    spelling="`tansu`, `tansu-memory`, `nisshi`, `nisshi-memory`   a shipped profile (harness/profiles/<name>.toml)",
    capabilities=_capabilities,
    # Only a profile describes a command target.
    run_args=lambda spec: ["--target-profile", str(spec.profile)],
)

BACKEND = Backend(make=_make, prepare=_prepare)
