"""ListOffsets v0 on a partition whose leader moved (KIP-320 "Compatibility, Deprecation, and Migration
Plan": "Older versions of the modified APIs will continue to work as expected").

v0 carries MaxNumOffsets and answers a list of offsets (OldStyleOffsets); for a timestamp it gave the
start offsets of log segments, no single record, so only EARLIEST and LATEST are asked, each with
MaxNumOffsets 1. Apache Kafka 4.0 removed v0 (KIP-896): it is asked only where the leader advertises
it and the target's own schema has it.
"""

from __future__ import annotations

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.histories.leader_answers import ListOffsetsAtTime
from harness.histories.list_offsets_v0 import ListOffsetsV0
from harness.histories.observations import Body
from harness.protocol.client import RawClient
from harness.protocol.sentinels import CONSUMER_REPLICA_ID, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP


def _v0(client: RawClient, topic: str, timestamp: int) -> Body:
    body = {"ReplicaId": CONSUMER_REPLICA_ID, "Topics": [{"Name": topic, "Partitions": [
        {"PartitionIndex": 0, "Timestamp": timestamp, "MaxNumOffsets": 1}]}]}
    answer: Body = client.send("ListOffsets", 0, body)["Topics"][0]["Partitions"][0]
    return answer


def list_offsets_v0(cluster: Cluster, topic: str) -> ListOffsetsV0:
    """See the module."""
    with rr.RawConnector(cluster) as raw:
        p = rr.partition_metadata(raw(cluster.state.running_brokers()[0]), topic)
        client = raw(p["LeaderId"])
        epoch = rr.partition_metadata(client, topic)["LeaderEpoch"]
        top = client.max_version("ListOffsets")
        api = client.specs.api("ListOffsets")
        advertised = tuple(client.broker_versions[api.key])
        schema = (api.valid_versions.low, api.valid_versions.high)
        start = rr.list_offsets(client, top, topic, 0, EARLIEST_TIMESTAMP, current_epoch=epoch)["Offset"]
        end = rr.list_offsets(client, top, topic, 0, LATEST_TIMESTAMP, current_epoch=epoch)["Offset"]
        answers = ()
        if advertised[0] <= 0 <= advertised[1] and schema[0] <= 0:
            answers = tuple(ListOffsetsAtTime(0, ts, _v0(client, topic, ts)) for ts in (EARLIEST_TIMESTAMP,
                                                                                         LATEST_TIMESTAMP))
    return ListOffsetsV0(topic, p["LeaderId"], epoch, advertised, schema, start, end, answers)  # type: ignore[arg-type]
