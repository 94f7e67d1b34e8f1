"""Where a pipeline stands, read from the brokers: group offsets, and open transactions on outputs.

The harness asks with its own protocol client, not librdkafka's admin client: a pipeline is polled
several times a second through broker crashes, and the admin client runs Python on librdkafka's
threads (its result callbacks), where a fault takes the whole test run down with it. Any error
(a broker down, a leader moving) is raised; the waits that poll this treat it as "not yet".
"""

from __future__ import annotations

import threading
from typing import Any

from harness.clients.raw import RawConnector
from harness.cluster.base import Cluster
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.sentinels import LATEST_TIMESTAMP

LIST_OFFSETS_VERSION = 7  # IsolationLevel and leader epochs; spoken by 3.9 to 4.4
FIND_COORDINATOR_VERSION = 4
OFFSET_FETCH_VERSION = 8
METADATA_VERSION = 12
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


class ProgressProbe:
    """One connection per broker, opened on first use and dropped (then reopened) after any error."""

    def __init__(self, cluster: Cluster, timeout: float = 5.0) -> None:
        self.cluster = cluster
        self.timeout = timeout
        self._connector = RawConnector(cluster)
        self._clients: dict[int, RawClient] = {}
        # The copiers' supervisor asks from its thread while the test polls from its own.
        self._lock = threading.Lock()

    def _send(self, broker: int, api: str, version: int, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            return self._send_locked(broker, api, version, body)

    def _send_locked(self, broker: int, api: str, version: int, body: dict[str, Any]) -> dict[str, Any]:
        client = self._clients.get(broker)
        try:
            if client is None:
                client = self._connector(broker, timeout=self.timeout, client_id="kcts-progress")
                self._clients[broker] = client
            return client.send(api, version, body)
        except Exception:
            self._clients.pop(broker, None)
            if client is not None:
                client.close()
            raise

    def _highest(self, api: str, newest: int) -> int:
        """`newest`, or the highest version below it that a running broker serves (librdkafka's mock
        cluster serves FindCoordinator up to v3 and OffsetFetch up to v6), from its ApiVersions."""
        for broker in self.cluster.state.running_brokers():
            try:
                with self._lock:
                    client = self._clients.get(broker)
                    if client is None:
                        client = self._connector(broker, timeout=self.timeout, client_id="kcts-progress")
                        self._clients[broker] = client
                    return min(newest, client.max_version(api))
            except Exception:  # noqa: BLE001 - the next broker may answer; the request itself then says why
                self._clients.pop(broker, None)
        return newest

    def _any(self, api: str, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """Ask the first running broker that answers."""
        failures: list[str] = []
        for broker in self.cluster.state.running_brokers():
            try:
                return self._send(broker, api, version, body)
            except Exception as exc:  # noqa: BLE001 - the next broker may answer; all failures are reported
                failures.append(f"broker {broker}: {exc!r}")
        raise ConnectionError(f"no broker answered {api}: {failures}")

    def leaders(self, topic: str, partitions: int) -> dict[int, int]:
        md = self._any("Metadata", METADATA_VERSION, {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False})
        found = {p["PartitionIndex"]: p["LeaderId"] for t in md["Topics"] for p in t["Partitions"]}
        missing = [p for p in range(partitions) if found.get(p, -1) < 0]
        if missing:
            raise LookupError(f"{topic}: no leader for partitions {missing}")
        return found

    def end_offsets(self, topic: str, partitions: int, committed: bool) -> dict[int, int]:
        """Per partition: the last stable offset (`committed`) or the high watermark, from its leader."""
        by_leader: dict[int, list[int]] = {}
        for p, leader in self.leaders(topic, partitions).items():
            by_leader.setdefault(leader, []).append(p)
        offsets: dict[int, int] = {}
        for leader, parts in by_leader.items():
            resp = self._send(leader, "ListOffsets", LIST_OFFSETS_VERSION, {
                "ReplicaId": -1, "IsolationLevel": READ_COMMITTED if committed else READ_UNCOMMITTED,
                "Topics": [{"Name": topic, "Partitions": [
                    {"PartitionIndex": p, "CurrentLeaderEpoch": -1, "Timestamp": LATEST_TIMESTAMP} for p in parts
                ]}],
            })
            for part in resp["Topics"][0]["Partitions"]:
                if part["ErrorCode"]:
                    raise LookupError(f"ListOffsets {topic}-{part['PartitionIndex']} to broker {leader}: "
                                      f"{errors.describe(part['ErrorCode'])}")
                offsets[part["PartitionIndex"]] = part["Offset"]
        return offsets

    def committed_offsets(self, group: str, topic: str, partitions: int) -> dict[int, int]:
        """The group's committed offset per partition of `topic`; -1 where it has none."""
        # Before FindCoordinator v4 one key per request, answered at the top level; before OffsetFetch v8
        # one group per request, likewise.
        fv = self._highest("FindCoordinator", FIND_COORDINATOR_VERSION)
        if fv >= 4:
            found = self._any("FindCoordinator", fv, {"KeyType": 0, "CoordinatorKeys": [group]})
            (coordinator,) = found["Coordinators"]
        else:
            coordinator = self._any("FindCoordinator", fv, {"KeyType": 0, "Key": group})
        if coordinator["ErrorCode"]:
            raise LookupError(f"FindCoordinator {group}: {errors.describe(coordinator['ErrorCode'])}")
        ov = self._highest("OffsetFetch", OFFSET_FETCH_VERSION)
        topics = [{"Name": topic, "PartitionIndexes": list(range(partitions))}]
        if ov >= 8:
            resp = self._send(coordinator["NodeId"], "OffsetFetch", ov, {
                "Groups": [{"GroupId": group, "Topics": topics}], "RequireStable": False})
            (answer,) = resp["Groups"]
        else:
            answer = self._send(coordinator["NodeId"], "OffsetFetch", ov, {"GroupId": group, "Topics": topics})
        if answer["ErrorCode"]:
            raise LookupError(f"OffsetFetch {group}: {errors.describe(answer['ErrorCode'])}")
        offsets = {p: -1 for p in range(partitions)}
        for t in answer["Topics"]:
            for part in t["Partitions"]:
                if part["ErrorCode"]:
                    raise LookupError(f"OffsetFetch {group} {topic}-{part['PartitionIndex']}: "
                                      f"{errors.describe(part['ErrorCode'])}")
                offsets[part["PartitionIndex"]] = part["CommittedOffset"]
        return offsets

    def open_transactions(self, topics: dict[str, int]) -> dict[str, list[tuple[int, int, int]]]:
        """Partitions whose last stable offset trails the high watermark: (partition, LSO, HW) per topic."""
        found: dict[str, list[tuple[int, int, int]]] = {}
        for topic, partitions in topics.items():
            lso = self.end_offsets(topic, partitions, committed=True)
            hw = self.end_offsets(topic, partitions, committed=False)
            lagging = [(p, lso[p], hw[p]) for p in range(partitions) if lso[p] != hw[p]]
            if lagging:
                found[topic] = lagging
        return found

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
            self._connector.close()
