"""What a scenario asks of the target before it starts, so that a target lacking it gets the verdict
"not supported" (with what it advertised) rather than an error halfway through."""

from __future__ import annotations

from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.cluster.base import Cluster


def require_transactions(cluster: Cluster) -> None:
    """Raise `NotSupported` where the target advertises no API a transaction needs."""
    with rr.RawConnector(cluster) as raw:
        tx.require_transactions(raw(cluster.running_brokers()[0]))
