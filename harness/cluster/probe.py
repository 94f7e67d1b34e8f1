"""Cluster state read straight from a broker: partition leader epochs and replica log end offsets.

No Python client exposes the current leader epoch of a partition or the log end offset of a
follower, and the cluster interface promises both. The raw client asks: Metadata (leader epochs),
and ListOffsets with the debugging replica id -2, which any replica answers with its own log end
offset (KafkaApis serves it without the leader check). Fixed versions that every supported target
speaks (3.9 to 4.4, kfake) keep this to one round trip per question.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.kafka.dist import DEFAULT_VERSION
from harness.protocol.auth import Transport
from harness.protocol.client import RawClient
from harness.protocol.errors import describe
from harness.protocol.exceptions import ConnectionFailed, RequestTimeout
from harness.protocol.sentinels import DEBUGGING_REPLICA_ID, LATEST_TIMESTAMP

METADATA_VERSION = 12
LIST_OFFSETS_VERSION = 7
SPECS = DEFAULT_VERSION  # the client side's schemas; the versions above are older than any target's maximum


@dataclass(frozen=True)
class PartitionMetadata:
    topic: str
    partition: int
    error_code: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class BrokerMetadata:
    broker_ids: tuple[int, ...]
    controller_id: int
    partitions: dict[tuple[str, int], PartitionMetadata]


def _send(host: str, port: int, api: str, version: int, body: dict, timeout: float,
          transport: Transport | None = None) -> dict:
    """One request on a fresh connection; a broker that does not answer is an OSError to the waits.
    With credentials in `transport` the connection negotiates first (SASL needs ApiVersions)."""
    negotiate = transport is not None and transport.sasl is not None
    try:
        with RawClient.connect(host, port, spec=SPECS, timeout=timeout, client_id="kcts-probe",
                               negotiate=negotiate, transport=transport) as c:
            return c.send(api, version, body)
    except (ConnectionFailed, RequestTimeout) as exc:
        raise ConnectionError(str(exc)) from exc


def metadata(host: str, port: int, topics: list[str] | None = None, timeout: float = 5.0,
             transport: Transport | None = None) -> BrokerMetadata:
    """Metadata from one broker; `topics=None` asks for every topic."""
    request = {"Topics": None if topics is None else [{"Name": t} for t in topics], "AllowAutoTopicCreation": False}
    resp = _send(host, port, "Metadata", METADATA_VERSION, request, timeout, transport)
    partitions = {
        (t["Name"], p["PartitionIndex"]): PartitionMetadata(
            t["Name"], p["PartitionIndex"], p["ErrorCode"], p["LeaderId"], p["LeaderEpoch"],
            tuple(p["ReplicaNodes"]), tuple(p["IsrNodes"]),
        )
        for t in resp["Topics"]
        for p in t["Partitions"]
    }
    return BrokerMetadata(tuple(sorted(b["NodeId"] for b in resp["Brokers"])), resp["ControllerId"], partitions)


def log_end_offset(host: str, port: int, topic: str, partition: int, timeout: float = 5.0,
                   transport: Transport | None = None) -> int:
    """The log end offset of the replica on this broker, leader or follower."""
    request = {
        "ReplicaId": DEBUGGING_REPLICA_ID,
        "IsolationLevel": 0,
        "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": partition, "Timestamp": LATEST_TIMESTAMP}]}],
    }
    resp = _send(host, port, "ListOffsets", LIST_OFFSETS_VERSION, request, timeout, transport)
    p = resp["Topics"][0]["Partitions"][0]
    if p["ErrorCode"]:
        raise LookupError(f"ListOffsets to {host}:{port} for {topic}-{partition}: error {describe(p['ErrorCode'])}")
    return p["Offset"]
