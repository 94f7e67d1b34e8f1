"""A partition whose leader has no entry for some epochs, and the leader's answers about them.

On a 3-replica partition, with every write acknowledged by all replicas:
1. 5 records in the first epoch e0 (offsets 0-4);
2. move the leader (e1); 5 records (5-9);
3. move the leader (e2), and at once again (e3), with no write between: no batch carries e2, so the
   leader at e3 has no entry for it (a leader's entry for an epoch it led without writing goes when
   the next epoch starts at the same offset); 5 records (10-14);
4. ask the leader (OffsetsForLeaderEpoch at every version from v2, with the current epoch) about
   every epoch from -1 to e3 + 2: the "gap" probe;
5. ask ListOffsets at every version from v1 (EARLIEST, LATEST, each batch's first timestamp, a time
   after the last record, and MAX_TIMESTAMP from v7), Metadata at every version from each broker, and
   commit to a group with every OffsetCommit version, each read back with every OffsetFetch version:
   the versions without an epoch must keep working on a partition whose leader moved (KIP-320
   "Compatibility"), and a commit without an epoch must read back without one;
6. delete the log's head up to 2 records into e1 (DeleteRecords), so the leader no longer knows e0;
   ask OffsetsForLeaderEpoch again: the "log start moved" probe.

The record with the largest timestamp (CreateTime, 10 minutes ahead of the others) is the fourth of
e1's, so that MAX_TIMESTAMP's record lies in neither the first nor the current epoch.

Three leader moves cost the same as the KIP-320 leader-moves history; nothing stops a node.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from confluent_kafka import KafkaException, Producer, TopicPartition

from harness import confluent
from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster
from harness.errors import ClusterError, NotSupported, TargetRefused
from harness.histories.leader_answers import EndOffsetAnswers, ListOffsetsAnswers, ListOffsetsAtTime
from harness.histories.metadata import MetadataAnswer
from harness.histories.offset_commits import CommitRound, OffsetAndEpoch, OffsetRead, VersionedRead
from harness.nemesis.leadership import move_leader
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.records import RecordBatch
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, NO_EPOCH
from harness.scenarios.steady import while_steady

RECORDS = 5
DELETED_INTO_SECOND_EPOCH = 2  # the new log start: this many records into e1's
AHEAD_MS = 600_000  # the max-timestamp record's lead: below 4.x's message.timestamp.after.max.ms (1 h)
MAX_TIMESTAMP = -3  # ListOffsets v7+ (KIP-734): the record with the largest timestamp


@dataclass(frozen=True)
class GappedEpochs:
    topic: str
    epochs: list[int]  # the partition's epoch after creation and after each move
    gap: EndOffsetAnswers
    head_deleted: EndOffsetAnswers | None
    list_offsets: ListOffsetsAnswers
    metadata: list[MetadataAnswer]
    commits: list[CommitRound] | None  # None where the target refused the scene's commits
    deleted_to: int = -1
    refused: str | None = None  # why the target would not delete the head
    commits_refused: str | None = None  # why the target would not take the scene's commits
    lacks_delete_records: bool = False  # `refused` is then the evidence of "not supported"

    def require_commits(self) -> list[CommitRound]:
        """The commit rounds; `TargetRefused` where the target would not take the scene's commits."""
        if self.commits is None:
            raise TargetRefused(str(self.commits_refused))
        return self.commits

    def require_head_deleted(self) -> EndOffsetAnswers:
        """The probe after the head was deleted; `TargetRefused` where the target would not delete it."""
        if self.head_deleted is None and self.lacks_delete_records:
            raise NotSupported("deleting a log's head (DeleteRecords)", str(self.refused))
        if self.head_deleted is None:
            raise TargetRefused(f"an epoch older than the earliest the leader knows needs the log's head deleted: "
                                f"{self.refused}")
        return self.head_deleted


def _read_from_start(client: RawClient, topic: str, tid: uuid.UUID) -> tuple[int, list[RecordBatch], int]:
    """(log start, every batch from it up to the high watermark, the high watermark)."""
    start = rr.until_served(
        lambda: rr.list_offsets(client, client.max_version("ListOffsets"), topic, 0, EARLIEST_TIMESTAMP),
        f"ListOffsets EARLIEST of {topic}")
    assert start["ErrorCode"] == 0, f"ListOffsets EARLIEST of {topic}: {errors.describe(start['ErrorCode'])}"
    batches, hw = rr.read_log(client, topic, tid, start=start["Offset"])
    return start["Offset"], batches, hw


def probe_end_offsets(raw: rr.RawConnector, topic: str, tid: uuid.UUID, stage: str) -> EndOffsetAnswers:
    """Ask the leader about every epoch from -1 to two above its current one, at every version from v2."""
    p = rr.partition_metadata(raw(raw.cluster.state.running_brokers()[0]), topic)
    client = raw(p["LeaderId"])
    current = rr.partition_metadata(client, topic)["LeaderEpoch"]
    log_start, batches, log_end = _read_from_start(client, topic, tid)
    asked = [NO_EPOCH, *range(0, current + 3)]
    answers = {
        v: {e: rr.offsets_for_leader_epoch(client, v, topic, 0, e, current_epoch=current) for e in asked}
        for v in rr.versions(client, "OffsetForLeaderEpoch", 2)
    }
    log = b"".join(b.encode() for b in batches)
    return EndOffsetAnswers(stage, p["LeaderId"], current, log_start, log_end, log, answers)


def _write(cluster: Cluster, producer: Producer, topic: str, tag: str, timestamps: list[int]) -> int:
    """Write one epoch's records with these CreateTime timestamps; the first offset."""
    before = cluster.state.partition_state(topic).leader_epoch
    history = produce(producer, topic, [f"{tag}-{i}".encode() for i in range(len(timestamps))], timeout=30,
                      timestamps=timestamps)
    after = cluster.state.partition_state(topic).leader_epoch
    if history.failed or after != before:
        raise ClusterError(f"write '{tag}' to {topic} did not land in one epoch: epoch {before} -> {after}, "
                           f"{len(history.acked)} of {len(timestamps)} acknowledged, "
                           f"failed {[w.error for w in history.failed][:3]}")
    return min(w.offset for w in history.acked)


def probe_list_offsets(raw: rr.RawConnector, topic: str, tid: uuid.UUID) -> ListOffsetsAnswers:
    p = rr.partition_metadata(raw(raw.cluster.state.running_brokers()[0]), topic)
    client = raw(p["LeaderId"])
    current = rr.partition_metadata(client, topic)["LeaderEpoch"]
    batches, log_end = rr.read_log(client, topic, tid)
    stamps = [r.timestamp for b in batches if not b.is_control for r in b.records if r.timestamp is not None]
    times = sorted({b.base_timestamp for b in batches if not b.is_control})
    answers = []
    for v in rr.versions(client, "ListOffsets", 1):
        asked = [EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, *times, max(stamps) + 1, *([MAX_TIMESTAMP] if v >= 7 else [])]
        for ts in asked:
            part = rr.list_offsets(client, v, topic, 0, ts, current_epoch=current if v >= 4 else NO_EPOCH)
            answers.append(ListOffsetsAtTime(v, ts, part))
    log = b"".join(b.encode() for b in batches)
    return ListOffsetsAnswers(p["LeaderId"], current, log_end, log, answers)


def probe_metadata(raw: rr.RawConnector, topic: str) -> list[MetadataAnswer]:
    """The partition as every running broker's Metadata gives it, at every version each speaks."""
    out = []
    for b in raw.cluster.state.running_brokers():
        client = raw(b)
        for v in rr.versions(client, "Metadata"):
            # Before v4 the request has no AllowAutoTopicCreation (it always creates): the topic exists.
            body = {"Topics": [{"Name": topic}], **({"AllowAutoTopicCreation": False} if v >= 4 else {})}
            (t,) = client.send("Metadata", v, body)["Topics"]
            if t["ErrorCode"]:
                out.append(MetadataAnswer(b, v, None, None, t["ErrorCode"]))
                continue
            p = next(p for p in t["Partitions"] if p["PartitionIndex"] == 0)
            out.append(MetadataAnswer(b, v, p["LeaderId"], p.get("LeaderEpoch"), p["ErrorCode"],
                                      tuple(p["ReplicaNodes"])))
    return out


def _read_commit(client: RawClient, version: int, group: str, topic: str, tid: uuid.UUID) -> OffsetRead:
    """Partition 0's commit at any OffsetFetch version (v1 has no top-level ErrorCode, v5 is the first
    with CommittedLeaderEpoch: None where the version has no such field)."""
    resp = tx.offset_fetch(client, version, group, topic, tid, [0]).response
    top = resp["Groups"][0] if version >= 8 else resp
    p = top["Topics"][0]["Partitions"][0] if top["Topics"] else {}
    return OffsetRead(p.get("CommittedOffset"), p.get("CommittedLeaderEpoch"),
                      p.get("ErrorCode", 0) or top.get("ErrorCode", 0))


def probe_commits(raw: rr.RawConnector, topic: str, tid: uuid.UUID, group: str) -> list[CommitRound]:
    """For each OffsetCommit version: commit (offset, the leader's epoch) with the newest version, then a
    new offset with this version, without an epoch (none below v6, -1 from v6); read it back with every
    OffsetFetch version, newest first."""
    # Reconnecting: the coordinator lookup (FindCoordinator) is asked again after a timeout.
    any_broker = raw(raw.cluster.state.running_brokers()[0], reconnect=True)
    # The epoch of the last record a consumer read (KIP-320 "Protocol Changes / OffsetCommit"): the
    # leader's own, which every broker takes (librdkafka's mock refuses any other).
    committed_epoch = rr.partition_metadata(any_broker, topic)["LeaderEpoch"]
    # Reconnecting for the commit before each round, a premise sent again after a timeout; the
    # judged commits and reads on it are not.
    gcoord = raw(tx.coordinator_id(any_broker, group, 0), reconnect=True)
    top = gcoord.max_version("OffsetCommit")
    reads = sorted(rr.versions(gcoord, "OffsetFetch", 1), reverse=True)
    rounds = []
    for v in rr.versions(gcoord, "OffsetCommit", 2):
        before = OffsetAndEpoch(1000 + v, committed_epoch)
        code = rr.offset_commit(gcoord, top, group, topic, tid, 0, before.offset, committed_epoch, resend=True)
        if code:
            raise TargetRefused(f"the scene commits {before} to {group} with OffsetCommit v{top} before each round; "
                                f"the target answered {errors.describe(code)}")
        before_read = _read_commit(gcoord, reads[0], group, topic, tid)
        sent = OffsetAndEpoch(2000 + v, NO_EPOCH if v >= 6 else None)
        code = rr.offset_commit(gcoord, v, group, topic, tid, 0, sent.offset, NO_EPOCH)
        got = [VersionedRead(f"OffsetFetch v{fv}", fv, _read_commit(gcoord, fv, group, topic, tid))
               for fv in reads] if code == 0 else []
        rounds.append(CommitRound(f"OffsetCommit v{v}", v, before, before_read, sent, code, got))
    return rounds


def gapped_epochs(cluster: Cluster, topic: str, group: str) -> GappedEpochs:
    """Run the scene on `topic` (3 replicas), committing to `group`. A target that will not move the
    leader raises `TargetRefused`; one that will not delete records gives `head_deleted` None and
    says why."""
    with (rr.RawConnector(cluster) as raw,
          confluent.producer({**cluster.client_config(), "acks": "all"}) as producer,
          confluent.admin(cluster.client_config()) as admin):
        mover = raw(cluster.broker_ids[0])
        tid = rr.topic_id(mover, topic)
        base = int(time.time() * 1000)
        epochs = [cluster.state.partition_state(topic).leader_epoch]
        _write(cluster, producer, topic, "e0", [base + i for i in range(RECORDS)])
        epochs.append(move_leader(cluster, mover, admin, topic).leader_epoch)
        second = [base + 10 + i for i in range(RECORDS)]
        second[3] = base + AHEAD_MS
        second_start = _write(cluster, producer, topic, "e1", second)
        epochs.append(move_leader(cluster, mover, admin, topic).leader_epoch)
        epochs.append(move_leader(cluster, mover, admin, topic).leader_epoch)
        _write(cluster, producer, topic, "e3", [base + 20 + i for i in range(RECORDS)])
        gap = while_steady(cluster, topic, lambda: probe_end_offsets(raw, topic, tid, "after a move without a write"),
                           "OffsetsForLeaderEpoch about every epoch")
        list_offsets = while_steady(cluster, topic, lambda: probe_list_offsets(raw, topic, tid),
                                    "ListOffsets at every version")
        metadata = while_steady(cluster, topic, lambda: probe_metadata(raw, topic), "Metadata at every version")
        # A target that refuses the scene's commits leaves only the checks of commits without a verdict.
        try:
            commits: list[CommitRound] | None = probe_commits(raw, topic, tid, group)
            commits_refused = None
        except TargetRefused as exc:
            commits, commits_refused = None, str(exc)

        cut = second_start + DELETED_INTO_SECOND_EPOCH
        tp = TopicPartition(topic, 0, cut)
        if not mover.supports("DeleteRecords", 0):
            # The target lacks the API: "not supported", with what it advertised (GappedEpochs.lacks).
            return GappedEpochs(topic, epochs, gap, None, list_offsets, metadata, commits, cut,
                                f"DeleteRecords (API 21) is not among the APIs the target advertises: "
                                f"{sorted(mover.broker_versions)}", commits_refused, lacks_delete_records=True)
        try:
            confluent.delete_records(admin, tp)
        except (KafkaException, TimeoutError) as exc:
            return GappedEpochs(topic, epochs, gap, None, list_offsets, metadata, commits, cut,
                                f"DeleteRecords to offset {cut}: {exc}", commits_refused)
        head_deleted = while_steady(cluster, topic,
                                    lambda: probe_end_offsets(raw, topic, tid, f"records before offset {cut} deleted"),
                                    "OffsetsForLeaderEpoch after the head was deleted")
        return GappedEpochs(topic, epochs, gap, head_deleted, list_offsets, metadata, commits, cut,
                            commits_refused=commits_refused)
