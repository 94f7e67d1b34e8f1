"""A follower's Fetch and OffsetsForLeaderEpoch at a stale (and a newer) epoch (KIP-320 "Replica Handling").

On a partition whose leader moved (`EpochLineage.require_moves`: the older epoch exists), the harness
asks the leader as its in-sync follower asks it: Fetch (v9+, the versions with CurrentLeaderEpoch)
with ReplicaId the follower's broker id (from v15 in ReplicaState, with ReplicaEpoch -1, "unknown"),
and OffsetsForLeaderEpoch (v3+, the versions with ReplicaId) with the same ReplicaId, each with the
leader's epoch minus one and plus one. Only wrong epochs are sent: a follower-shaped Fetch at the
right epoch would move the leader's view of the real follower's position.
"""

from __future__ import annotations

from typing import Any

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.errors import require_target
from harness.histories.epoch_validation import EpochProbe
from harness.histories.epochs import EpochLineage
from harness.histories.observations import Body
from harness.histories.replica_fencing import FollowerFencing, FollowerProbe
from harness.protocol import errors
from harness.protocol.sentinels import DEBUGGING_REPLICA_ID, LATEST_TIMESTAMP

FETCH_WITH_EPOCH = 9
FETCH_REPLICA_STATE = 15  # KIP-903: ReplicaId moved into the ReplicaState tagged field
OFLE_WITH_REPLICA_ID = 3


def _fetch_as(client: Any, version: int, topic: str, tid: Any, replica_id: int, epoch: int) -> Body:
    key = {"TopicId": tid} if version >= 13 else {"Topic": topic}
    part = {"Partition": 0, "FetchOffset": 0, "PartitionMaxBytes": 1 << 20, "CurrentLeaderEpoch": epoch}
    body: Body = {
        "MaxWaitMs": 0, "MinBytes": 0, "MaxBytes": 4 << 20, "IsolationLevel": 0, "SessionId": 0, "SessionEpoch": -1,
        "Topics": [{**key, "Partitions": [part]}], "ForgottenTopicsData": [], "RackId": "",
    }
    if version >= FETCH_REPLICA_STATE:
        body["ReplicaState"] = {"ReplicaId": replica_id, "ReplicaEpoch": -1}
    else:
        body["ReplicaId"] = replica_id
    resp = client.send("Fetch", version, body)
    return rr.fetched_partition(resp, version, topic, 0, body)


def _ofle_as(client: Any, version: int, topic: str, replica_id: int, epoch: int) -> Body:
    body = {"ReplicaId": replica_id, "Topics": [{"Topic": topic, "Partitions": [
        {"Partition": 0, "CurrentLeaderEpoch": epoch, "LeaderEpoch": epoch}]}]}
    answer: Body = client.send("OffsetForLeaderEpoch", version, body)["Topics"][0]["Partitions"][0]
    return answer


def follower_requests_at_wrong_epochs(cluster: Cluster, lineage: EpochLineage) -> FollowerFencing:
    """See the module."""
    lineage.require_moves("a follower's request with an older CurrentLeaderEpoch")
    topic = lineage.topic
    with rr.RawConnector(cluster) as raw:
        p = rr.partition_metadata(raw(cluster.state.running_brokers()[0]), topic)
        leader_view = rr.partition_metadata(raw(p["LeaderId"]), topic)
        leader, epoch, isr = leader_view["LeaderId"], leader_view["LeaderEpoch"], tuple(leader_view["IsrNodes"])
        follower = next((b for b in isr if b != leader), None)
        require_target(follower is not None, f"{topic} has no in-sync follower (ISR {list(isr)}, leader {leader})")
        assert follower is not None
        theirs = rr.partition_metadata(raw(follower), topic)["LeaderEpoch"]
        require_target(theirs == epoch, f"{topic}'s follower {follower} says epoch {theirs}, leader {leader} {epoch}")
        client = raw(leader)
        # The leader's own log end, as `Cluster.log_end_offset` reads it (the debugging ReplicaId), but
        # through the raw client: asked again while the leader answers as a leader moving may
        # (`rr.as_a_client_asks`), where a single answer would end the scene.
        end = rr.list_offsets(client, client.max_version("ListOffsets"), topic, 0, LATEST_TIMESTAMP,
                              replica_id=DEBUGGING_REPLICA_ID)
        require_target(end["ErrorCode"] == 0, f"leader {leader} of {topic} did not give its log end: "
                                              f"ListOffsets {errors.describe(end['ErrorCode'])}")
        log_end = end["Offset"]
        answers = []
        for requested in (epoch - 1, epoch + 1):
            for v in rr.versions(client, "Fetch", FETCH_WITH_EPOCH):
                answers.append(FollowerProbe(follower, 0, EpochProbe(
                    "Fetch", v, leader, "leader", requested, epoch,
                    _fetch_as(client, v, topic, lineage.topic_id, follower, requested))))
            for v in rr.versions(client, "OffsetForLeaderEpoch", OFLE_WITH_REPLICA_ID):
                answers.append(FollowerProbe(follower, requested, EpochProbe(
                    "OffsetForLeaderEpoch", v, leader, "leader", requested, epoch,
                    _ofle_as(client, v, topic, follower, requested))))
    return FollowerFencing(topic, leader, follower, epoch, log_end, isr, tuple(answers))
