"""Any broker binary the harness starts and controls, as its profile says (`--target tansu`, a
profile with kind = "command": the tables harness/cluster/command.py reads, and serves with its BACKEND)."""

from __future__ import annotations

from collections.abc import Mapping

from harness.cluster.model import HOOK, Capabilities, TargetKind, TargetSpec


def _capabilities(spec: TargetSpec) -> Capabilities:
    # Nodes in containers ([node] image) can also be cut off the run's network.
    node = spec.tables.get("node")
    return Capabilities(fault_control=True, node_logs=True, side_clusters=False, owned=True,
                        leader_moves=HOOK if "leader_move" in spec.tables else None, replication=True,
                        partitions=isinstance(node, Mapping) and "image" in node)


KIND = TargetKind(
    name="command",
    spelling="`tansu`, `tansu-memory`, `nisshi`, `nisshi-memory`   a shipped profile (harness/profiles/<name>.toml)",
    capabilities=_capabilities,
    # Only a profile describes a command target.
    run_args=lambda spec: ["--target-profile", str(spec.profile)],
    profile_tables=True,
)
