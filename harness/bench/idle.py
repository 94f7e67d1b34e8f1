"""`kcts bench idle`: what a local cluster costs the machine, to start and to hold while it serves nothing.

For the target's shape (a controller and three brokers) and a side cluster's (a controller and one
broker), in one run: the CPU its JVMs used until ready, and the share of one core they use idle over
`seconds` after that. Their quotient is how long a cluster may wait idle before holding it cost more
than starting a new one, which is why session clusters end after their last user
(harness.plugin.last_user) rather than with the session.
"""

from __future__ import annotations

import time

from harness import procfs
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.errors import KctsError
from harness.kafka.dist import resolve


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a running process."""
    seen = procfs.stat(pid)
    if seen is None:
        raise KctsError(f"process {pid} ended while its CPU time was measured")
    return seen.cpu_seconds


def measure(version: str, brokers: int, seconds: float) -> dict[str, float]:
    dist = resolve(version)
    started = time.monotonic()
    with LocalCluster(LocalClusterSpec(version=version, brokers=brokers), dist) as cluster:
        ready = time.monotonic() - started
        pids = [node.proc.pid for node in (cluster.controller, *cluster.brokers.values()) if node.proc]
        at_ready = sum(cpu_seconds(p) for p in pids)
        time.sleep(seconds)  # the measurement itself: the cluster left alone for `seconds`
        idle = sum(cpu_seconds(p) for p in pids) - at_ready
    share = idle / seconds
    return {"ready_s": round(ready, 1), "start_cpu_s": round(at_ready, 1), "idle_core_share": round(share, 3),
            "idle_s_costing_a_start": round(at_ready / share, 1) if share else float("inf")}


def run(version: str, seconds: float = 60.0) -> dict[str, object]:
    result: dict[str, object] = {"kafka_version": version, "idle_seconds": seconds}
    for shape, brokers in (("target", 3), ("side", 1)):
        for key, value in measure(version, brokers, seconds).items():
            result[f"{shape}_{key}"] = value
    return result
