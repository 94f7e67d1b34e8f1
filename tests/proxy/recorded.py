"""Responses recorded from a 3-broker Apache Kafka 4.4.0 cluster, for the proxy's unit tests.

data/<name>.hex holds one response frame (header and body, no size prefix) as a broker sent it.
The brokers listened on 127.0.0.1:36673 (node 1), :52557 (node 2) and :56745 (node 3). The
FindCoordinator answers were recorded before __consumer_offsets existed, so they are the
COORDINATOR_NOT_AVAILABLE kind (node -1, host "", port -1). The Produce and Fetch answers come
from a broker that does not lead the partition: NOT_LEADER_OR_FOLLOWER with KIP-951 NodeEndpoints.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
RECORDED_BROKERS = {1: ("127.0.0.1", 36673), 2: ("127.0.0.1", 52557), 3: ("127.0.0.1", 56745)}

# file -> (API, version it was sent at)
RECORDED = {
    "metadata-v12": ("Metadata", 12),
    "metadata-v13": ("Metadata", 13),
    "api-versions-v3": ("ApiVersions", 3),
    "find-coordinator-v3": ("FindCoordinator", 3),
    "find-coordinator-v6": ("FindCoordinator", 6),
    "describe-cluster-v2": ("DescribeCluster", 2),
    "produce-v13-not-leader": ("Produce", 13),
    "fetch-v18-not-leader": ("Fetch", 18),
}


def recorded(name: str) -> bytes:
    return bytes.fromhex((DATA / f"{name}.hex").read_text().strip())
