"""Run by tests/harness/test_no_leaks.py in a child pytest: start a cluster, report, then hold it."""

import threading

from harness import session
from harness.cluster.base import Cluster
from tests.harness.holder import report_held


def test_hold_cluster(cluster: Cluster) -> None:
    # Local JVMs by pid; the docker backend's containers are found by the session's label instead.
    nodes = [cluster.controller, *cluster.brokers.values()] if hasattr(cluster, "brokers") else []  # type: ignore[attr-defined]
    pids = [n.proc.pid for n in nodes]
    if type(cluster).__name__ == "LibrdkafkaMockCluster":  # its whole cluster is one holder process
        pids.append(cluster.proc.pid)  # type: ignore[attr-defined]
    info = {"session": session.current().id, "root": str(session.current().root), "pids": pids}
    report_held(info)
    threading.Event().wait(600)  # held until the parent kills or interrupts this process
