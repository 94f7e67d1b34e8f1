"""Every version the leader of a partition advertises of the APIs KIP-320 judges (Metadata,
ListOffsets, OffsetForLeaderEpoch, Fetch), each asked once with a plain request about that
partition; a connection closed instead of an answer is kept, per version, as the evidence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.histories.served_versions import VersionServed
from harness.protocol.client import RawClient
from harness.protocol.exceptions import AdvertisedVersionNotServed
from harness.protocol.sentinels import NO_EPOCH

APIS = ("Metadata", "ListOffsets", "OffsetForLeaderEpoch", "Fetch")
LATEST = -1  # ListOffsets Timestamp: the log end


def _asks(topic: str) -> dict[str, Callable[[RawClient, int], Any]]:
    return {
        "Metadata": lambda c, v: c.send("Metadata", v, {"Topics": [{"Name": topic}],
                                                        **({"AllowAutoTopicCreation": False} if v >= 4 else {})}),
        "ListOffsets": lambda c, v: rr.list_offsets(c, v, topic, 0, LATEST),
        "OffsetForLeaderEpoch": lambda c, v: rr.offsets_for_leader_epoch(c, v, topic, 0, 0),
        "Fetch": lambda c, v: rr.fetch(c, v, topic, rr.topic_id(c, topic), 0, 0, NO_EPOCH),
    }


def served_versions(cluster: Cluster, topic: str) -> list[VersionServed]:
    """Each advertised version of `APIS` on the leader of `topic`-0, from the lowest our codec speaks."""
    leader = cluster.state.partition_state(topic, 0).leader
    out: list[VersionServed] = []
    with rr.RawConnector(cluster) as raw:
        client = raw(leader)
        broker = f"{client.host}:{client.port}"
        for api, ask in _asks(topic).items():
            offered = client.broker_versions.get(client.specs.api(api).key)
            if offered is None:
                continue  # an API it does not advertise was never promised (what needs it is "not supported")
            lo, hi = offered
            for v in rr.versions(client, api):
                try:
                    ask(client, v)
                    out.append(VersionServed(broker, api, v, (lo, hi)))
                except AdvertisedVersionNotServed as exc:
                    out.append(VersionServed(broker, api, v, (lo, hi), str(exc)))
                    client = raw(leader)  # the broker hung up: the next version goes out on a new connection
    return out
