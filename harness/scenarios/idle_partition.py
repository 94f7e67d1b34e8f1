"""A partition asked about what holds no record: its empty log, and epochs leader moves reached with no
write since.

On a 3-replica partition:
1. nothing written: ask the leader ListOffsets at every version from v1 (EARLIEST, LATEST, and lookups
   by time: 0 and the scene's start), the "created" lookups;
2. move the leader, write nothing: the same lookups again, and OffsetsForLeaderEpoch (every version
   from v2, every epoch from -1 to two above the current one, CurrentLeaderEpoch the current one)
   about an epoch that starts at the end of an empty log;
3. write 5 records (acknowledged by all replicas, in the epoch of step 2), move the leader again,
   write nothing, wait until the new leader's high watermark is the acknowledged end: OffsetsForLeaderEpoch
   again, about an epoch that starts at the log end after records.

Two leader moves by reassignment and a preferred election, as the KIP-320 leader-moves history makes
them; nothing stops a node. A target that will not move a leader leaves step 1, with its refusal.
"""

from __future__ import annotations

import time

from confluent_kafka import Producer

from harness import confluent
from harness.clients import raw as rr
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster
from harness.errors import NotSupported, TargetRefused
from harness.histories.idle_partition import EmptyLookups, IdlePartition
from harness.histories.leader_answers import EndOffsetAnswers, ListOffsetsAtTime
from harness.nemesis.leadership import move_leader
from harness.protocol import errors
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, NO_EPOCH
from harness.scenarios.epoch_edges import probe_end_offsets
from harness.scenarios.steady import while_steady
from harness.waiting import Owed, wait_until

RECORDS = 5
FIRST_WITH_EPOCH = 4  # ListOffsets' first version with CurrentLeaderEpoch and LeaderEpoch
# How long a new leader may take to learn the high watermark from its followers' fetches (each within
# replica.fetch.wait.max.ms, 500 ms by default): the Java producer's request.timeout.ms.
HIGH_WATERMARK_S = 30.0


def probe_empty(raw: rr.RawConnector, topic: str, stage: str, times: tuple[int, ...]) -> EmptyLookups:
    """EARLIEST, LATEST and each of `times`, asked of the leader at every ListOffsets version from v1."""
    p = rr.partition_metadata(raw(raw.cluster.state.running_brokers()[0]), topic)
    client = raw(p["LeaderId"])
    current = rr.partition_metadata(client, topic)["LeaderEpoch"]
    answers = [
        ListOffsetsAtTime(v, ts, rr.list_offsets(client, v, topic, 0, ts,
                                                 current_epoch=current if v >= FIRST_WITH_EPOCH else NO_EPOCH))
        for v in rr.versions(client, "ListOffsets", 1)
        for ts in (EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, *times)
    ]
    return EmptyLookups(stage, p["LeaderId"], current, times, tuple(answers))


def _write(cluster: Cluster, producer: Producer, topic: str) -> None:
    """RECORDS records, all in one epoch (the one the last move reached)."""
    before = cluster.state.partition_state(topic).leader_epoch
    written = produce(producer, topic, [f"idle-{i}".encode() for i in range(RECORDS)], timeout=30)
    after = cluster.state.partition_state(topic).leader_epoch
    if written.failed or after != before or len(written.acked) != RECORDS:
        # A cluster may move a leader of its own accord, or refuse writes: the scene's premise, not a promise.
        raise TargetRefused(f"the write to {topic} did not land in one epoch: epoch {before} -> {after}, "
                            f"{len(written.acked)} of {RECORDS} acknowledged, "
                            f"failed {[w.error for w in written.failed][:3]}")


def _await_high_watermark(raw: rr.RawConnector, topic: str, end: int) -> None:
    """Wait until the leader's high watermark is `end`, the acknowledged end: a new leader learns it from
    its followers' next fetches, and until then serves (and LATEST names) less than its log holds."""
    seen: list[str] = []

    def reached() -> bool:
        leader = rr.partition_metadata(raw(raw.cluster.state.running_brokers()[0]), topic)["LeaderId"]
        client = raw(leader)
        latest = rr.list_offsets(client, client.max_version("ListOffsets"), topic, 0, LATEST_TIMESTAMP)
        seen.append(f"leader {leader}: {errors.describe(latest['ErrorCode'])} offset {latest.get('Offset')}")
        return bool(latest["ErrorCode"] == 0 and latest["Offset"] == end)

    wait_until(reached, HIGH_WATERMARK_S, lambda: f"{topic}'s leader's LATEST, wanted {end}: {seen[-3:]}",
               owed=Owed.PREMISE)


def idle_partition(cluster: Cluster, topic: str) -> IdlePartition:
    """Run the scene on `topic` (3 replicas, nothing written). A target that will not move the leader
    gives the created lookups only, with its refusal."""
    times = (0, int(time.time() * 1000))
    with (rr.RawConnector(cluster) as raw,
          confluent.producer({**cluster.client_config(), "acks": "all"}) as producer,
          confluent.admin(cluster.client_config()) as admin):
        mover = raw(cluster.broker_ids[0])
        tid = rr.topic_id(mover, topic)
        empty = [probe_empty(raw, topic, "created, nothing written", times)]
        unwritten: list[EndOffsetAnswers] = []
        for i, then_write in enumerate((True, False)):
            try:
                moved = move_leader(cluster, mover, admin, topic)
                if not then_write:
                    _await_high_watermark(raw, topic, RECORDS)
            except NotSupported as exc:
                return IdlePartition(topic, tuple(empty), tuple(unwritten), exc.evidence, lacks_moves=True)
            except TargetRefused as exc:
                return IdlePartition(topic, tuple(empty), tuple(unwritten), f"leader move {i + 1}: {exc}")
            stage = (f"leader move to {moved.leader} (epoch {moved.leader_epoch}), "
                     + ("nothing written yet" if then_write else f"{RECORDS} records before it, none since"))
            if then_write:
                empty.append(while_steady(cluster, topic, lambda stage=stage: probe_empty(raw, topic, stage, times),
                                          f"ListOffsets at every version, {stage}"))
            unwritten.append(while_steady(cluster, topic, lambda stage=stage: probe_end_offsets(raw, topic, tid, stage),
                                          f"OffsetForLeaderEpoch at every version, {stage}"))
            if then_write:
                _write(cluster, producer, topic)
        return IdlePartition(topic, tuple(empty), tuple(unwritten))
