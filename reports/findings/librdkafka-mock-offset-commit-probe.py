"""What librdkafka's mock cluster answers a group's OffsetFetch and OffsetCommit after one leader move.

Run from a checkout (it starts the mock through harness/cluster/rdkafka_mock_holder.py, so through
`kcts-live` on a shared machine):
    .tox/conformance/bin/python reports/findings/librdkafka-mock-offset-commit-probe.py
Its output, against librdkafka 2.16.0 (confluent-kafka 2.16.1), is librdkafka-mock-offset-commit-probe.json.
"""

import json
import subprocess
import sys
from itertools import count
from pathlib import Path

from harness.protocol.client import RawClient

HOLDER = Path(__file__).resolve().parents[2] / "harness" / "cluster" / "rdkafka_mock_holder.py"
TOPIC, GROUP = "probe", "probe-group"
holder = subprocess.Popen([sys.executable, str(HOLDER), "--brokers=3"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
ids = count(1)


def control(**command: object) -> dict:
    holder.stdin.write(json.dumps({"id": next(ids), **command}) + "\n")
    holder.stdin.flush()
    return json.loads(holder.stdout.readline())


def partition(c: RawClient) -> dict:
    md = c.send("Metadata", 9, {"Topics": [{"Name": TOPIC}], "AllowAutoTopicCreation": False,
                                "IncludeTopicAuthorizedOperations": False})
    return {"brokers": md["Brokers"], **md["Topics"][0]["Partitions"][0]}


out: dict = {}
try:
    ready = json.loads(holder.stdout.readline())
    out["holder"] = ready
    out["create"] = control(op="create_topic", topic=TOPIC, partitions=1, replication_factor=3)
    host, _, port = ready["bootstrap"].split(",")[0].rpartition(":")
    with RawClient.connect(host, int(port), timeout=10, client_id="h30mock-probe") as c:
        p = partition(c)
        out["before"] = {"leader": p["LeaderId"], "epoch": p["LeaderEpoch"]}
        other = next(r for r in p["ReplicaNodes"] if r != p["LeaderId"])
        out["move"] = control(op="set_leader", topic=TOPIC, partition=0, node=other)
        p = partition(c)
        out["after"] = {"leader": p["LeaderId"], "epoch": p["LeaderEpoch"]}
        out["coordinator"] = c.send("FindCoordinator", 3, {"Key": GROUP, "KeyType": 0})["NodeId"]
        coordinator = next(b for b in p["brokers"] if b["NodeId"] == out["coordinator"])
    with RawClient.connect(coordinator["Host"], coordinator["Port"], timeout=10, client_id="h30mock-probe") as g:

        def fetch() -> dict:
            r = g.send("OffsetFetch", 6, {"GroupId": GROUP, "Topics": [{"Name": TOPIC, "PartitionIndexes": [0]}]})
            q = r["Topics"][0]["Partitions"][0]
            return {k: q[k] for k in ("CommittedOffset", "CommittedLeaderEpoch", "ErrorCode")}

        out["offset_fetch_v6_nothing_committed"] = fetch()
        for epoch in (0, 1, 2, -1):  # the epoch before the move, the current one, a newer one, none
            r = g.send("OffsetCommit", 8, {"GroupId": GROUP, "GenerationIdOrMemberEpoch": -1, "MemberId": "",
                                           "GroupInstanceId": None, "Topics": [{"Name": TOPIC, "Partitions": [
                                               {"PartitionIndex": 0, "CommittedOffset": 20 + epoch,
                                                "CommittedLeaderEpoch": epoch, "CommittedMetadata": ""}]}]})
            out[f"offset_commit_v8_epoch_{epoch}"] = {
                "offset": 20 + epoch, "ErrorCode": r["Topics"][0]["Partitions"][0]["ErrorCode"],
                "then_offset_fetch_v6": fetch()}
finally:
    holder.stdin.close()
    holder.wait(10)
print(json.dumps(out, indent=1))
