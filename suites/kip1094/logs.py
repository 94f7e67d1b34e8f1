"""A partition's log as the KIP-1094 checks read it: its batches from the leader, and its end offset."""

from __future__ import annotations

from dataclasses import dataclass

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.protocol.records import RecordBatch


@dataclass
class Log:
    """A topic, its batches as read from the leader, and its end offset."""

    topic: str
    batches: list[RecordBatch]
    end: int

    def blob(self) -> bytes:
        """The batches re-encoded, as the recorded answers keep them."""
        return b"".join(b.encode() for b in self.batches)


def read_log(cluster: Cluster, raw: rr.RawConnector, topic: str) -> Log:
    leader = raw(cluster.partition_state(topic).leader)
    batches, end = rr.read_log(leader, topic, rr.topic_id(leader, topic))
    return Log(topic, batches, end)


def with_commits(log: Log, n: int) -> Log | None:
    return log if sum(b.control_type() == "COMMIT" for b in log.batches) == n else None
