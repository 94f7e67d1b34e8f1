"""The codec and raw client against a real cluster: every field of the answers, at exact versions."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from harness.clients.raw import list_offsets
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.coordinator import decode_coordinator_record
from harness.protocol.records import WireRecord, encode_batch, parse_batches
from harness.protocol.types import ZERO_UUID
from harness.waiting import wait_until

pytestmark = pytest.mark.live

RawClientFactory = Callable[..., RawClient]
LATEST = -1
EARLIEST = -2


def _rf(cluster: Any) -> int:
    return min(3, len(cluster.broker_ids))


def _metadata(client: RawClient, topics: list[str] | None, version: int | None = None) -> dict[str, Any]:
    v = client.max_version("Metadata") if version is None else version
    body = {"Topics": None if topics is None else [{"Name": t} for t in topics], "AllowAutoTopicCreation": False}
    return client.send("Metadata", v, body)


def _topic_md(client: RawClient, topic: str, timeout: float = 30.0) -> dict[str, Any]:
    """The topic as this broker's metadata shows it, once every partition has a leader there.

    Brokers learn about a new topic at slightly different times; a Produce by topic ID to a
    leader that has not yet seen the topic is answered UNKNOWN_TOPIC_ID.
    """
    deadline = time.monotonic() + timeout
    while True:
        md = _metadata(client, [topic])
        (t,) = md["Topics"]
        if t["ErrorCode"] == 0 and t["Partitions"] and all(p["LeaderId"] >= 0 for p in t["Partitions"]):
            return t
        assert time.monotonic() < deadline, f"{topic} not ready on {client}: {errors.describe(t['ErrorCode'])}"
        time.sleep(0.1)


def _leader(raw_client: RawClientFactory, cluster: Any, topic: str, partition: int = 0) -> RawClient:
    """A client to the partition's leader, once that broker serves it: Metadata can name the leader
    before the broker has taken the leadership (it answers NOT_LEADER_OR_FOLLOWER meanwhile, seen on
    the gate's loaded 2 cores), so wait for its ListOffsets to succeed."""
    client = raw_client(cluster.state.leader(topic, partition))
    _topic_md(client, topic)
    version = client.max_version("ListOffsets")
    answers: list[dict[str, Any]] = []

    def served() -> bool:
        answers.append(list_offsets(client, version, topic, partition, LATEST))
        return answers[-1]["ErrorCode"] == 0

    wait_until(served, 30, lambda: f"{topic}-{partition} served by its leader: ListOffsets answered "
                                   f"{errors.describe(answers[-1]['ErrorCode']) if answers else 'nothing'}")
    return client


def _partition(t: dict[str, Any], index: int) -> dict[str, Any]:
    return next(p for p in t["Partitions"] if p["PartitionIndex"] == index)


def _produce(client: RawClient, topic: str, topic_id: uuid.UUID, partition: int, records: bytes) -> dict[str, Any]:
    v = client.max_version("Produce")
    key = {"TopicId": topic_id} if v >= 13 else {"Name": topic}
    body = {
        "TransactionalId": None,
        "Acks": -1,
        # acks=all waits on the followers' fetchers; the gate runs these tests beside two kcts runs
        # on 2 cores, where a new topic's followers have been seen to need more than 10 s.
        "TimeoutMs": 30000,
        "TopicData": [{**key, "PartitionData": [{"Index": partition, "Records": records}]}],
    }
    resp = client.send("Produce", v, body, timeout=45)
    (t,) = resp["Responses"]
    (p,) = t["PartitionResponses"]
    return p


# Answers that say the partition lost its leader or its followers while the Produce waited.
_LEADERSHIP_LOST = {
    errors.LEADER_NOT_AVAILABLE,
    errors.NOT_LEADER_OR_FOLLOWER,
    errors.REQUEST_TIMED_OUT,
    errors.NOT_ENOUGH_REPLICAS,
    errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    errors.FENCED_LEADER_EPOCH,
}


@dataclass
class _Written:
    topic: str
    metadata: dict[str, Any]
    leader: RawClient
    leader_epoch: int
    answers: list[dict[str, Any]]


def _written_topic(
    raw_client: RawClientFactory,
    cluster: Any,
    topic_factory: Callable[..., str],
    batches: list[bytes],
    config: dict[str, str] | None = None,
    attempts: int = 3,
) -> _Written:
    """A new one-partition topic with `batches` appended by one leader, in one leader epoch.

    The codec checks below assert exact offsets and the epoch stamped into each batch, so they need the
    leadership to hold while they write. On the gate's loaded 2 cores it once did not: the controller
    stalled, fenced the leader (3 s session) 15 s into an acks=all Produce, and the Produce was answered
    NOT_LEADER_OR_FOLLOWER (CI, 2026-11-25). That refuses the premise, not the codec, so a new topic is
    written; the answers of every attempt are the failure's evidence.
    """
    seen: list[str] = []
    for _ in range(attempts):
        topic = topic_factory(partitions=1, replication_factor=_rf(cluster), config=config)
        metadata = _topic_md(raw_client(), topic)
        leader = _leader(raw_client, cluster, topic)
        leader_epoch = _partition(_topic_md(leader, topic), 0)["LeaderEpoch"]
        answers = [_produce(leader, topic, metadata["TopicId"], 0, batch) for batch in batches]
        codes = [a["ErrorCode"] for a in answers]
        if not _LEADERSHIP_LOST & set(codes):
            return _Written(topic, metadata, leader, leader_epoch, answers)
        seen.append(f"{topic} (leader {leader}, epoch {leader_epoch}): {[errors.describe(c) for c in codes]}")
    pytest.fail(f"no topic kept its leader through {len(batches)} Produce(s) in {attempts} attempts: {seen}")


def _fetch(
    client: RawClient, topic: str, topic_id: uuid.UUID, partition: int, offset: int, version: int, **extra: Any
) -> dict[str, Any]:
    key = {"TopicId": topic_id} if version >= 13 else {"Topic": topic}
    body = {
        "MaxWaitMs": 500,
        "MinBytes": 1,
        "MaxBytes": 1 << 20,
        "Topics": [
            {
                **key,
                "Partitions": [{"Partition": partition, "FetchOffset": offset, "PartitionMaxBytes": 1 << 20, **extra}],
            }
        ],
    }
    resp = client.send("Fetch", version, body)
    assert resp["ErrorCode"] == 0, errors.describe(resp["ErrorCode"])
    (t,) = resp["Responses"]
    (p,) = t["Partitions"]
    return p


def _retry(call: Callable[[], dict[str, Any]], retriable: set[int], what: str, timeout: float = 30.0) -> dict[str, Any]:
    """Repeat a coordinator call while it answers a transient error (loading, not coordinator yet)."""
    deadline = time.monotonic() + timeout
    while True:
        resp = call()
        code = resp.get("ErrorCode", 0)
        if code not in retriable or time.monotonic() > deadline:
            return resp
        time.sleep(0.2)


_COORDINATOR_LOADING = {errors.COORDINATOR_LOAD_IN_PROGRESS, errors.COORDINATOR_NOT_AVAILABLE, errors.NOT_COORDINATOR}


def _coordinator(client: RawClient, key: str, key_type: int) -> int:
    v = client.max_version("FindCoordinator")

    def ask() -> dict[str, Any]:
        keys = {"CoordinatorKeys": [key]} if v >= 4 else {"Key": key}
        resp = client.send("FindCoordinator", v, {"KeyType": key_type, **keys})
        return resp["Coordinators"][0] if v >= 4 else resp

    c = _retry(ask, _COORDINATOR_LOADING, f"FindCoordinator {key}")
    assert c["ErrorCode"] == 0, errors.describe(c["ErrorCode"])
    return int(c["NodeId"])


def test_api_versions_cover_the_spec(raw_client: RawClientFactory) -> None:
    client = raw_client()
    resp = client.api_versions_response
    assert resp["ErrorCode"] == 0
    for key, (lo, hi) in client.broker_versions.items():
        api = client.specs.api(key)  # every API the broker offers is in the spec of its version
        # The top version is in the spec; the bottom may lie below it: 4.x still advertises
        # Produce v0-2 (for old librdkafka, which checks the range) while its spec starts at v3.
        assert hi in api.valid_versions, f"{api.name} v{hi} not in spec {api.valid_versions}"
        assert max(lo, api.valid_versions.low) <= hi
    assert client.max_version("TxnOffsetCommit") >= 5
    # v0 request: no ClientSoftwareName; the response header is v0 at every version (KIP-511).
    assert client.send("ApiVersions", 0)["ErrorCode"] == 0


def test_metadata_v13_topic_ids_and_leader_epochs(
    cluster: Any, raw_client: RawClientFactory, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=3, replication_factor=_rf(cluster))
    client = raw_client()
    md = _metadata(client, [topic], version=13)
    assert md["ErrorCode"] == 0
    assert {b["NodeId"] for b in md["Brokers"]} == set(cluster.broker_ids)
    (t,) = md["Topics"]
    assert t["Name"] == topic and t["TopicId"] != ZERO_UUID and not t["IsInternal"]
    assert sorted(p["PartitionIndex"] for p in t["Partitions"]) == [0, 1, 2]
    for p in t["Partitions"]:
        assert p["ErrorCode"] == 0
        assert p["LeaderEpoch"] >= 0
        assert p["LeaderId"] == cluster.state.leader(topic, p["PartitionIndex"])
        assert len(p["ReplicaNodes"]) == _rf(cluster) and set(p["IsrNodes"]) <= set(p["ReplicaNodes"])
    # The same topic asked for by ID only (v10+): name and partitions come back.
    by_id = client.send("Metadata", 13, {"Topics": [{"TopicId": t["TopicId"], "Name": None}]})
    assert by_id["Topics"][0]["Name"] == topic
    assert by_id["Topics"][0]["Partitions"] == t["Partitions"]
    # An unknown topic ID is refused as such.
    unknown = client.send("Metadata", 13, {"Topics": [{"TopicId": uuid.uuid4(), "Name": None}]})
    assert unknown["Topics"][0]["ErrorCode"] == errors.UNKNOWN_TOPIC_ID


def test_produce_then_fetch_same_records(
    cluster: Any, raw_client: RawClientFactory, topic_factory: Callable[..., str]
) -> None:
    sent = [WireRecord(f"value-{i}".encode(), f"key-{i}".encode(), [("h", bytes([i]))]) for i in range(5)]
    w = _written_topic(raw_client, cluster, topic_factory, [encode_batch(sent, producer_id=-1)])
    (p,) = w.answers
    assert p["ErrorCode"] == 0, errors.describe(p["ErrorCode"])
    assert p["BaseOffset"] == 0

    for version in sorted({w.leader.max_version("Fetch"), 12}):
        fp = _fetch(w.leader, w.topic, w.metadata["TopicId"], 0, 0, version)
        assert fp["ErrorCode"] == 0, errors.describe(fp["ErrorCode"])
        assert fp["HighWatermark"] == 5
        batches = parse_batches(fp["Records"])  # CRC32C verified
        assert len(batches) == 1 and batches[0].crc_valid
        b = batches[0]
        # The leader stamps its epoch into the batch at append (outside the CRC).
        assert b.partition_leader_epoch == w.leader_epoch
        assert [(r.offset, r.key, r.value, r.headers) for r in b.records] == [
            (i, s.key, s.value, s.headers) for i, s in enumerate(sent)
        ]


def test_batches_the_broker_compressed_with_gzip(
    cluster: Any, raw_client: RawClientFactory, topic_factory: Callable[..., str]
) -> None:
    # compression.type=gzip makes the broker recompress what it is sent, with Java's GZIPOutputStream.
    values = [f"record-{i}".encode() * 20 for i in range(10)]
    w = _written_topic(
        raw_client, cluster, topic_factory, [encode_batch(values), encode_batch(values, compression="gzip")],
        config={"compression.type": "gzip"},
    )
    assert [a["ErrorCode"] for a in w.answers] == [0, 0]
    fp = _fetch(w.leader, w.topic, w.metadata["TopicId"], 0, 0, w.leader.max_version("Fetch"))
    batches = parse_batches(fp["Records"])
    assert [b.compression for b in batches] == ["gzip", "gzip"]
    assert [r.value for b in batches for r in b.records] == values + values
    assert [r.offset for b in batches for r in b.records] == list(range(20))


def test_fetch_with_stale_or_future_leader_epoch(
    cluster: Any, raw_client: RawClientFactory, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=1, replication_factor=_rf(cluster))
    t = _topic_md(raw_client(), topic)
    epoch = _partition(t, 0)["LeaderEpoch"]
    leader = _leader(raw_client, cluster, topic)
    v = leader.max_version("Fetch")
    future = _fetch(leader, topic, t["TopicId"], 0, 0, v, CurrentLeaderEpoch=epoch + 1)
    assert future["ErrorCode"] == errors.UNKNOWN_LEADER_EPOCH
    if epoch > 0:
        stale = _fetch(leader, topic, t["TopicId"], 0, 0, v, CurrentLeaderEpoch=epoch - 1)
        assert stale["ErrorCode"] == errors.FENCED_LEADER_EPOCH


def test_list_offsets_and_offsets_for_leader_epoch(
    cluster: Any, raw_client: RawClientFactory, topic_factory: Callable[..., str]
) -> None:
    w = _written_topic(raw_client, cluster, topic_factory, [encode_batch([b"a", b"b", b"c"])])
    assert w.answers[0]["ErrorCode"] == 0
    topic, leader, epoch = w.topic, w.leader, w.leader_epoch

    v = leader.max_version("ListOffsets")

    def list_offsets(timestamp: int, current_epoch: int = -1) -> dict[str, Any]:
        parts = [{"PartitionIndex": 0, "CurrentLeaderEpoch": current_epoch, "Timestamp": timestamp}]
        body = {
            "ReplicaId": -1,
            "IsolationLevel": 0,
            "Topics": [{"Name": topic, "Partitions": parts}],
            "TimeoutMs": 5000,
        }
        return leader.send("ListOffsets", v, body)["Topics"][0]["Partitions"][0]

    latest = list_offsets(LATEST, epoch)
    assert (latest["ErrorCode"], latest["Offset"], latest["LeaderEpoch"]) == (0, 3, epoch)
    earliest = list_offsets(EARLIEST)
    assert (earliest["ErrorCode"], earliest["Offset"]) == (0, 0)
    assert list_offsets(LATEST, epoch + 1)["ErrorCode"] == errors.UNKNOWN_LEADER_EPOCH

    ov = leader.max_version("OffsetForLeaderEpoch")

    def end_offset(leader_epoch: int, current_epoch: int) -> dict[str, Any]:
        parts = [{"Partition": 0, "CurrentLeaderEpoch": current_epoch, "LeaderEpoch": leader_epoch}]
        body = {"ReplicaId": -1, "Topics": [{"Topic": topic, "Partitions": parts}]}
        return leader.send("OffsetForLeaderEpoch", ov, body)["Topics"][0]["Partitions"][0]

    eo = end_offset(epoch, epoch)
    assert (eo["ErrorCode"], eo["LeaderEpoch"], eo["EndOffset"]) == (0, epoch, 3)
    assert end_offset(epoch, epoch + 1)["ErrorCode"] == errors.UNKNOWN_LEADER_EPOCH


def _java_hash(text: str) -> int:
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _group_partition(group: str, partitions: int) -> int:
    # GroupCoordinator partitionFor: Utils.abs(groupId.hashCode()) % offsets partitions.
    h = _java_hash(group)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def test_offset_commit_fetch_round_trips_leader_epoch(
    cluster: Any, raw_client: RawClientFactory, topic_factory: Callable[..., str], run_prefix: str
) -> None:
    topic = topic_factory(partitions=2, replication_factor=_rf(cluster))
    t = _topic_md(raw_client(), topic)
    group = f"{run_prefix}-proto-{uuid.uuid4().hex[:8]}"
    coord = raw_client(_coordinator(raw_client(), group, 0))
    _topic_md(coord, topic)  # the coordinator resolves topic IDs with its own metadata
    cv = coord.max_version("OffsetCommit")
    tkey = {"TopicId": t["TopicId"]} if cv >= 10 else {"Name": topic}
    commit = {
        "GroupId": group,
        "GenerationIdOrMemberEpoch": -1,
        "MemberId": "",
        "GroupInstanceId": None,
        "Topics": [
            {
                **tkey,
                "Partitions": [
                    {"PartitionIndex": 0, "CommittedOffset": 42, "CommittedLeaderEpoch": 7, "CommittedMetadata": "m0"},
                    {"PartitionIndex": 1, "CommittedOffset": 5, "CommittedLeaderEpoch": -1, "CommittedMetadata": None},
                ],
            }
        ],
    }
    resp = _retry(
        lambda: {"ErrorCode": coord.send("OffsetCommit", cv, commit)["Topics"][0]["Partitions"][0]["ErrorCode"]},
        _COORDINATOR_LOADING,
        "OffsetCommit",
    )
    assert resp["ErrorCode"] == 0, errors.describe(resp["ErrorCode"])

    fv = coord.max_version("OffsetFetch")
    fkey = {"TopicId": t["TopicId"]} if fv >= 10 else {"Name": topic}
    fetched = coord.send(
        "OffsetFetch",
        fv,
        {"Groups": [{"GroupId": group, "Topics": [{**fkey, "PartitionIndexes": [0, 1]}]}], "RequireStable": True},
    )
    (g,) = fetched["Groups"]
    assert g["ErrorCode"] == 0
    parts = {p["PartitionIndex"]: p for p in g["Topics"][0]["Partitions"]}
    assert (parts[0]["CommittedOffset"], parts[0]["CommittedLeaderEpoch"], parts[0]["Metadata"]) == (42, 7, "m0")
    assert (parts[1]["CommittedOffset"], parts[1]["CommittedLeaderEpoch"]) == (5, -1)
    # The same through an older, name-keyed version (v8, before topic IDs).
    old = coord.send(
        "OffsetFetch", 8, {"Groups": [{"GroupId": group, "Topics": [{"Name": topic, "PartitionIndexes": [0]}]}]}
    )
    assert old["Groups"][0]["Topics"][0]["Partitions"][0]["CommittedLeaderEpoch"] == 7

    # What the coordinator wrote to __consumer_offsets, read with the coordinator record schemas.
    offsets_md = _topic_md(coord, "__consumer_offsets")
    part = _group_partition(group, len(offsets_md["Partitions"]))
    owner = raw_client(_partition(offsets_md, part)["LeaderId"])
    fp = _fetch(owner, "__consumer_offsets", offsets_md["TopicId"], part, 0, owner.max_version("Fetch"))
    found = {}
    for batch in parse_batches(fp["Records"]):
        if batch.is_control:  # transaction markers share the partition
            continue
        for r in batch.records:
            if r.key is None:
                continue
            rec = decode_coordinator_record(owner.specs, "__consumer_offsets", r.key, r.value)
            if rec.key_schema == "OffsetCommitKey" and (rec.key["group"], rec.key["topic"]) == (group, topic):
                found[rec.key["partition"]] = (rec.value_version, rec.value)
    version, value = found[0]
    assert value is not None
    assert (value["offset"], value["leaderEpoch"], value["metadata"]) == (42, 7, "m0")
    if version >= 4:
        assert value["topicId"] == t["TopicId"]


def test_txn_offset_commit_v6_by_topic_id_and_v5_by_name(
    cluster: Any, raw_client: RawClientFactory, topic_factory: Callable[..., str], run_prefix: str
) -> None:
    client = raw_client()
    if client.max_version("TxnOffsetCommit") < 6:
        pytest.skip("broker has no TxnOffsetCommit v6 (KIP-1319)")
    topic = topic_factory(partitions=1, replication_factor=_rf(cluster))
    t = _topic_md(client, topic)
    group = f"{run_prefix}-txg-{uuid.uuid4().hex[:8]}"
    gcoord = raw_client(_coordinator(client, group, 0))
    _topic_md(gcoord, topic)  # the coordinator resolves topic IDs with its own metadata

    for version, tkey in ((6, {"TopicId": t["TopicId"]}), (5, {"Name": topic})):
        txn_id = f"{run_prefix}-tx-{uuid.uuid4().hex[:8]}"
        tcoord = raw_client(_coordinator(client, txn_id, 1))
        iv = tcoord.max_version("InitProducerId")
        init = _retry(
            lambda txn_id=txn_id, iv=iv, tcoord=tcoord: tcoord.send(
                "InitProducerId", iv, {"TransactionalId": txn_id, "TransactionTimeoutMs": 60000}
            ),
            _COORDINATOR_LOADING | {errors.CONCURRENT_TRANSACTIONS},
            "InitProducerId",
        )
        assert init["ErrorCode"] == 0, errors.describe(init["ErrorCode"])
        body = {
            "TransactionalId": txn_id,
            "GroupId": group,
            "ProducerId": init["ProducerId"],
            "ProducerEpoch": init["ProducerEpoch"],
            "Topics": [
                {
                    **tkey,
                    "Partitions": [
                        {
                            "PartitionIndex": 0,
                            "CommittedOffset": 10 + version,
                            "CommittedLeaderEpoch": 3,
                            "CommittedMetadata": None,
                        }
                    ],
                }
            ],
        }
        resp = _retry(
            lambda body=body, version=version: {
                "ErrorCode": gcoord.send("TxnOffsetCommit", version, body)["Topics"][0]["Partitions"][0]["ErrorCode"],
            },
            _COORDINATOR_LOADING | {errors.CONCURRENT_TRANSACTIONS},
            "TxnOffsetCommit",
        )
        assert resp["ErrorCode"] == 0, f"v{version}: {errors.describe(resp['ErrorCode'])}"
        raw = gcoord.last
        assert raw is not None
        # v6 answers keyed by TopicId with no Name on the wire; v5 by Name.
        assert set(raw.response["Topics"][0]) == {*tkey, "Partitions"}
        end = tcoord.send(
            "EndTxn",
            tcoord.max_version("EndTxn"),
            {
                "TransactionalId": txn_id,
                "ProducerId": init["ProducerId"],
                "ProducerEpoch": init["ProducerEpoch"],
                "Committed": True,
            },
        )
        assert end["ErrorCode"] == 0, errors.describe(end["ErrorCode"])

        fv = gcoord.max_version("OffsetFetch")
        fkey = {"TopicId": t["TopicId"]} if fv >= 10 else {"Name": topic}
        got = _retry(
            lambda fkey=fkey, fv=fv: gcoord.send(
                "OffsetFetch",
                fv,
                {"Groups": [{"GroupId": group, "Topics": [{**fkey, "PartitionIndexes": [0]}]}], "RequireStable": True},
            )["Groups"][0]["Topics"][0]["Partitions"][0],
            {errors.UNSTABLE_OFFSET_COMMIT},
            "OffsetFetch",
        )
        assert (got["CommittedOffset"], got["CommittedLeaderEpoch"]) == (10 + version, 3)


def test_unknown_topic_id_in_txn_offset_commit_v6(cluster: Any, raw_client: RawClientFactory, run_prefix: str) -> None:
    client = raw_client()
    if client.max_version("TxnOffsetCommit") < 6:
        pytest.skip("broker has no TxnOffsetCommit v6 (KIP-1319)")
    group = f"{run_prefix}-txu-{uuid.uuid4().hex[:8]}"
    txn_id = f"{run_prefix}-txu-{uuid.uuid4().hex[:8]}"
    tcoord = raw_client(_coordinator(client, txn_id, 1))
    init = _retry(
        lambda: tcoord.send(
            "InitProducerId",
            tcoord.max_version("InitProducerId"),
            {"TransactionalId": txn_id, "TransactionTimeoutMs": 60000},
        ),
        _COORDINATOR_LOADING,
        "InitProducerId",
    )
    assert init["ErrorCode"] == 0
    gcoord = raw_client(_coordinator(client, group, 0))
    body = {
        "TransactionalId": txn_id,
        "GroupId": group,
        "ProducerId": init["ProducerId"],
        "ProducerEpoch": init["ProducerEpoch"],
        "Topics": [
            {
                "TopicId": uuid.uuid4(),
                "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 1, "CommittedMetadata": None}],
            }
        ],
    }
    resp = gcoord.send("TxnOffsetCommit", 6, body)
    assert resp["Topics"][0]["Partitions"][0]["ErrorCode"] == errors.UNKNOWN_TOPIC_ID
    # Leave no open transaction behind (its outcome does not matter here).
    tcoord.send(
        "EndTxn",
        tcoord.max_version("EndTxn"),
        {
            "TransactionalId": txn_id,
            "ProducerId": init["ProducerId"],
            "ProducerEpoch": init["ProducerEpoch"],
            "Committed": False,
        },
    )
