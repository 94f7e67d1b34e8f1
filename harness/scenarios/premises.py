"""What a scenario asks of the target before it starts, so that a target lacking it gets the verdict
"not supported" (with what it advertised) rather than an error halfway through; on a release known to
have it (harness.cluster.reference), the same lack is a regression and the check fails."""

from __future__ import annotations

from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.cluster.base import Cluster
from harness.cluster.reference import expected
from harness.errors import NotSupported


def require_idempotence(cluster: Cluster) -> None:
    """Raise `NotSupported` where the target advertises no InitProducerId: an idempotent producer (KIP-98)
    gets no producer id there, so every write of a scene that needs one fails before it is sent."""
    with rr.RawConnector(cluster) as raw:
        client = raw(cluster.state.running_brokers()[0])
        if not client.broker_versions:
            client.negotiate()
        if client.specs.api("InitProducerId").key not in client.broker_versions:
            raise NotSupported("the idempotent producer (KIP-98 InitProducerId)",
                               f"{client.host}:{client.port} advertises no InitProducerId in ApiVersions",
                               expected(cluster.target, "idempotence"))


def require_transactions(cluster: Cluster) -> None:
    """Raise `NotSupported` where the target advertises no API a transaction needs."""
    with rr.RawConnector(cluster) as raw:
        try:
            tx.require_transactions(raw(cluster.state.running_brokers()[0]))
        except NotSupported as exc:
            raise NotSupported(exc.what, exc.evidence, expected(cluster.target, "transactions")) from None
