"""A partition whose leader has no entry for some epochs, and the leader's answers about them.

On a 3-replica partition, with every write acknowledged by all replicas:
1. 5 records in the first epoch e0 (offsets 0-4);
2. move the leader (e1); 5 records (5-9);
3. move the leader (e2), and at once again (e3), with no write between: no batch carries e2, so the
   leader at e3 has no entry for it (a leader's entry for an epoch it led without writing goes when
   the next epoch starts at the same offset); 5 records (10-14);
4. ask the leader (OffsetsForLeaderEpoch at every version from v2, with the current epoch) about
   every epoch from -1 to e3 + 2: the "gap" probe;
5. delete the log's head up to 2 records into e1 (DeleteRecords), so the leader no longer knows e0;
   ask again: the "log start moved" probe.

Three leader moves cost the same as the KIP-320 leader-moves history; nothing stops a node.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaException, TopicPartition

from harness.clients import kafka
from harness.clients import raw as rr
from harness.clients.history import produce
from harness.cluster.base import Cluster
from harness.errors import ClusterError, TargetRefused
from harness.nemesis.leadership import move_leader
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.records import RecordBatch, parse_batches
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, NO_EPOCH

RECORDS = 5
DELETED_INTO_SECOND_EPOCH = 2  # the new log start: this many records into e1's


@dataclass(frozen=True)
class EndOffsetProbe:
    """One leader's OffsetsForLeaderEpoch answers, {version: {asked LeaderEpoch: partition answer}},
    and its log from `log_start` to `log_end` (the high watermark), re-encoded."""

    stage: str
    leader: int
    current_epoch: int
    log_start: int
    log_end: int
    log: bytes
    answers: dict[int, dict[int, dict[str, Any]]]


@dataclass(frozen=True)
class GappedEpochs:
    topic: str
    epochs: list[int]  # the partition's epoch after creation and after each move
    gap: EndOffsetProbe
    head_deleted: EndOffsetProbe | None
    deleted_to: int = -1
    refused: str | None = None  # why the target would not delete the head

    def require_head_deleted(self) -> EndOffsetProbe:
        """The probe after the head was deleted; `TargetRefused` where the target would not delete it."""
        if self.head_deleted is None:
            raise TargetRefused(f"an epoch older than the earliest the leader knows needs the log's head deleted: "
                                f"{self.refused}")
        return self.head_deleted


def _read_from_start(client: RawClient, topic: str, tid: uuid.UUID) -> tuple[int, list[RecordBatch], int]:
    """(log start, every batch from it up to the high watermark, the high watermark)."""
    start = rr.list_offsets(client, client.max_version("ListOffsets"), topic, 0, EARLIEST_TIMESTAMP)
    assert start["ErrorCode"] == 0, f"ListOffsets EARLIEST of {topic}: {errors.describe(start['ErrorCode'])}"
    version = client.max_version("Fetch")
    batches: list[RecordBatch] = []
    offset, hw = start["Offset"], None
    while hw is None or offset < hw:
        p = rr.fetch(client, version, topic, tid, 0, offset)
        assert p["ErrorCode"] == 0, f"reading {topic}-0 at {offset}: {errors.describe(p['ErrorCode'])}"
        hw = p["HighWatermark"]
        got = [b for b in parse_batches(p["Records"]) if b.last_offset >= offset]
        if not got:
            break
        batches.extend(got)
        offset = got[-1].next_offset
    return start["Offset"], batches, hw or 0


def probe_end_offsets(raw: rr.RawConnector, topic: str, tid: uuid.UUID, stage: str) -> EndOffsetProbe:
    """Ask the leader about every epoch from -1 to two above its current one, at every version from v2."""
    p = rr.partition_metadata(raw(raw.cluster.running_brokers()[0]), topic)
    client = raw(p["LeaderId"])
    current = rr.partition_metadata(client, topic)["LeaderEpoch"]
    log_start, batches, log_end = _read_from_start(client, topic, tid)
    asked = [NO_EPOCH, *range(0, current + 3)]
    answers = {
        v: {e: rr.offsets_for_leader_epoch(client, v, topic, 0, e, current_epoch=current) for e in asked}
        for v in rr.versions(client, "OffsetForLeaderEpoch", 2)
    }
    log = b"".join(b.encode() for b in batches)
    return EndOffsetProbe(stage, p["LeaderId"], current, log_start, log_end, log, answers)


def _write(cluster: Cluster, producer: Any, topic: str, tag: str) -> int:
    """Write one epoch's records; the first offset."""
    before = cluster.partition_state(topic).leader_epoch
    written = produce(producer, topic, [f"{tag}-{i}".encode() for i in range(RECORDS)])
    after = cluster.partition_state(topic).leader_epoch
    if written.failed or after != before:
        raise ClusterError(f"write '{tag}' to {topic} did not land in one epoch: epoch {before} -> {after}, "
                           f"failed {written.failed[:3]}")
    return min(w.offset for w in written.acked)


def gapped_epochs(cluster: Cluster, topic: str) -> GappedEpochs:
    """Run the scene on `topic` (3 replicas). A target that will not move the leader raises
    `TargetRefused`; one that will not delete records gives `head_deleted` None and says why."""
    with (rr.RawConnector(cluster) as raw,
          kafka.producer({**cluster.client_config(), "acks": "all"}) as producer,
          kafka.admin(cluster.client_config()) as admin):
        mover = raw(cluster.broker_ids[0])
        tid = rr.topic_id(mover, topic)
        epochs = [cluster.partition_state(topic).leader_epoch]
        _write(cluster, producer, topic, "e0")
        epochs.append(move_leader(cluster, mover, admin, topic).leader_epoch)
        second_start = _write(cluster, producer, topic, "e1")
        epochs.append(move_leader(cluster, mover, admin, topic).leader_epoch)
        epochs.append(move_leader(cluster, mover, admin, topic).leader_epoch)
        _write(cluster, producer, topic, "e3")
        gap = probe_end_offsets(raw, topic, tid, "after a move without a write")

        cut = second_start + DELETED_INTO_SECOND_EPOCH
        tp = TopicPartition(topic, 0, cut)
        try:
            admin.delete_records([tp])[tp].result(30)
        except KafkaException as exc:
            return GappedEpochs(topic, epochs, gap, None, cut, f"DeleteRecords to offset {cut}: {exc}")
        head_deleted = probe_end_offsets(raw, topic, tid, f"records before offset {cut} deleted")
        return GappedEpochs(topic, epochs, gap, head_deleted, cut)
