"""What a broker advertised in ApiVersions, read into `harness.histories.version_needs.Offered` for a scene
to gate on (`require_offered`) or to keep beside what it observed, as the evidence of a "not supported".

The ranges are the ones the connection negotiated: behind the protocol proxy, what the proxy let the
broker advertise, as every client of the run saw it.
"""

from __future__ import annotations

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.histories.version_needs import Offered
from harness.protocol.client import RawClient


def offered(client: RawClient, broker: int, *apis: str) -> tuple[Offered, ...]:
    """The range `client`'s broker (`broker`) advertised for each of `apis`."""
    if not client.broker_versions:
        client.negotiate()
    found = [(api, client.broker_versions.get(client.specs.api(api).key)) for api in apis]
    return tuple(Offered(broker, api, (v[0], v[1]) if v else None) for api, v in found)


def leader_offers(cluster: Cluster, topic: str, *apis: str, partition: int = 0) -> tuple[Offered, ...]:
    """The ranges the leader of `topic`-`partition` (as the cluster sees it now) advertises for `apis`."""
    leader = cluster.state.leader(topic, partition)
    with rr.RawConnector(cluster) as raw:
        return offered(raw(leader), leader, *apis)
