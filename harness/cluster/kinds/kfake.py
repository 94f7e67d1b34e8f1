"""franz-go's kfake, built and started here (`--target kfake`). Served by harness/cluster/kfake.py (its
BACKEND), which also starts the SASL side cluster beside it."""

from __future__ import annotations

from harness.cluster.model import API, Capabilities, TargetKind

NAME = "kfake"

KIND = TargetKind(
    name=NAME,
    spelling="`kfake`                   franz-go's kfake, built and started here",
    capabilities=lambda spec: Capabilities(
        fault_control=True, node_logs=False, side_clusters=False, owned=True, leader_moves=API, replication=False,
        no_replication="kfake keeps one log per partition that every broker serves; its Metadata lists "
        "every replica in the ISR whatever state the brokers are in, so no follower falls behind and "
        "no election can diverge a log"),
    run_args=lambda spec: ["--backend", NAME, "--brokers", str(spec.brokers)],
    words=(NAME,),
    backend=NAME,
)
