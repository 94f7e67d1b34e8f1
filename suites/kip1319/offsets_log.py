"""OffsetCommitValue records as the group coordinator wrote them to `__consumer_offsets`.

The partition of a group is `abs(groupId.hashCode()) % partitions` (GroupCoordinator partitionFor,
Java's String.hashCode). Its leader is fetched from offset 0 to the high watermark, uncommitted
records included: a transactional commit writes its OffsetCommit records inside the transaction,
and the check wants what was persisted. Records are decoded with the coordinator jars' schemas.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import pytest

from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.coordinator import decode_coordinator_record
from harness.protocol.records import parse_batches
from suites.kip1319.transactions import Connect

OFFSETS_TOPIC = "__consumer_offsets"
# Record types (the key's int16 prefix) of offset commits: 0 legacy, 1 current (OffsetCommitKey).
OFFSET_COMMIT_TYPES = (0, 1)


def java_string_hash(text: str) -> int:
    """String.hashCode(): over UTF-16 code units, in 32-bit two's complement."""
    raw = text.encode("utf-16-be")
    h = 0
    for (unit,) in struct.iter_unpack(">H", raw):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def group_partition(group: str, partitions: int) -> int:
    h = java_string_hash(group)
    # Kafka's Utils.abs maps Integer.MIN_VALUE to 0.
    return (0 if h == -(1 << 31) else abs(h)) % partitions


@dataclass(frozen=True)
class PersistedOffset:
    partition: int
    offset_record: int  # where it sits in __consumer_offsets
    value_version: int | None
    value: dict[str, Any] | None


def persisted_offsets(connect: Connect, group: str, topic: str) -> dict[int, PersistedOffset]:
    """The latest OffsetCommit record per partition of `topic` for `group`."""
    client = connect()
    v = client.max_version("Metadata")
    md = client.send("Metadata", v, {"Topics": [{"Name": OFFSETS_TOPIC}], "AllowAutoTopicCreation": False})
    (t,) = md["Topics"]
    if t["ErrorCode"] == errors.UNKNOWN_TOPIC_OR_PARTITION:
        # Apache Kafka keeps group state in this topic; a target that keeps it elsewhere (kfake:
        # in memory) offers nothing to read, so the persisted form cannot be checked there.
        pytest.skip(f"the target has no {OFFSETS_TOPIC} topic to read what it persisted "
                    f"(Metadata: {errors.describe(t['ErrorCode'])})")
    assert t["ErrorCode"] == 0, f"Metadata of {OFFSETS_TOPIC}: error {errors.describe(t['ErrorCode'])}"
    index = group_partition(group, len(t["Partitions"]))
    leader = next(p["LeaderId"] for p in t["Partitions"] if p["PartitionIndex"] == index)
    owner = connect(leader)
    found: dict[int, PersistedOffset] = {}
    for offset, key, value in _read_all(owner, t["TopicId"], index):
        if struct.unpack_from(">h", key)[0] not in OFFSET_COMMIT_TYPES:
            continue  # other groups' records share the partition; only offset commits are read
        rec = decode_coordinator_record(owner.specs, OFFSETS_TOPIC, key, value)
        if rec.key_schema == "OffsetCommitKey" and (rec.key["group"], rec.key["topic"]) == (group, topic):
            p = rec.key["partition"]
            found[p] = PersistedOffset(p, offset, rec.value_version, rec.value)
    return found


def _read_all(client: RawClient, topic_id: Any, partition: int) -> list[tuple[int, bytes, bytes | None]]:
    v = client.max_version("Fetch")
    key = {"TopicId": topic_id} if v >= 13 else {"Topic": OFFSETS_TOPIC}
    out: list[tuple[int, bytes, bytes | None]] = []
    position, high_watermark = 0, None
    while high_watermark is None or position < high_watermark:
        body = {
            "ReplicaId": -1,
            "MaxWaitMs": 0,
            "MinBytes": 0,
            "MaxBytes": 8 << 20,
            "IsolationLevel": 0,
            "Topics": [{**key, "Partitions": [{"Partition": partition, "FetchOffset": position,
                                               "PartitionMaxBytes": 8 << 20}]}],
        }
        resp = client.send("Fetch", v, body)
        (p,) = resp["Responses"][0]["Partitions"]
        assert p["ErrorCode"] == 0, f"Fetch {OFFSETS_TOPIC}-{partition} at {position}: error {p['ErrorCode']}"
        high_watermark = p["HighWatermark"]
        batches = parse_batches(p["Records"] or b"")
        if not batches:
            break
        for batch in batches:
            position = max(position, batch.base_offset + batch.last_offset_delta + 1)
            if batch.is_control:  # transaction markers share the partition
                continue
            out.extend((r.offset, r.key, r.value) for r in batch.records if r.key is not None)
    return out
