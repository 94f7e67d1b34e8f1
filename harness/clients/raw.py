"""Raw requests of the leader-epoch checks (KIP-320, KIP-359, KIP-1094), at exact versions.

Each builder sends one request through a `RawClient` and returns the partition-level answer (or
the whole exchange where the check needs more), so that checks see exactly what the broker said
to exactly what was sent. The KIP-359 and KIP-1094 suites use these too. Requests to a group or
transaction coordinator, and the wait for a coordinator to settle, live in
`harness.clients.transactions`; `offset_commit` and `offset_fetch` here are built on them.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar, cast

from harness.clients import transactions
from harness.clients.transactions import COORDINATOR_TRANSIENT, generation_field, settle
from harness.cluster.base import Cluster
from harness.errors import SetupError, TargetRefused
from harness.protocol import errors
from harness.protocol.auth import from_client_config
from harness.protocol.client import Exchange, RawClient
from harness.protocol.exceptions import RequestTimeout
from harness.protocol.records import RecordBatch, parse_batches
from harness.protocol.sentinels import CONSUMER_REPLICA_ID, NO_EPOCH
from harness.waiting import asked_again

T = TypeVar("T")

FETCH_MAX_WAIT_MS = 0  # the MaxWaitMs of `fetch` unless the target's profile sets one: answer at once


class TargetClient(RawClient):
    """A RawClient that a RawConnector made to a broker of the target under test. It also carries what
    the target's profile asks of the harness's own requests: the MaxWaitMs of `fetch`
    (`TargetSpec.fetch_max_wait_ms`)."""

    fetch_max_wait_ms: int = FETCH_MAX_WAIT_MS


class RawConnector:
    """`raw(broker_id=None, **RawClient.connect options)` -> a RawClient to that broker (default: the
    first), kept open until `close()`: a TargetClient, with what the target's profile asks of `fetch`.
    A wait that asks again and again takes `reconnect=True`: an attempt that timed out closes its
    connection, and the next goes out on a new one.

    Without `user` it takes the cluster's probe address: a local SASL cluster's credential-free
    harness listener, or an external target's own listener with the run's credentials. With `user`
    it connects as that user of a local SASL cluster, on the SASL listener, for authorization checks.
    """

    def __init__(self, cluster: Cluster, user: str | None = None) -> None:
        self.cluster = cluster
        self.user = user
        self._made: list[RawClient] = []

    def __call__(self, broker_id: int | None = None, **options: Any) -> TargetClient:
        broker = self.cluster.broker_ids[0] if broker_id is None else broker_id
        options.setdefault("timeout", 20.0)
        if self.user is not None:
            config = self.cluster.client_config(user=self.user)
            if config.get("sasl.username") != self.user:
                raise SetupError(f"a raw client as user {self.user!r} needs a cluster with that SASL user")
            host, port = self.cluster.broker_address(broker)
        else:
            host, port = self.cluster.probe_address(broker)
            config = self.cluster.client_config()
        if (host, port) == self.cluster.broker_address(broker):
            options.setdefault("transport", from_client_config(config))
        target = self.cluster.target
        # connect makes an instance of the class it is called on
        client = cast(TargetClient, TargetClient.connect(host, port, spec=target.protocol_specs, **options))
        client.fetch_max_wait_ms = target.fetch_max_wait_ms
        self._made.append(client)
        return client

    def close(self) -> None:
        for c in self._made:
            c.close()
        self._made.clear()

    def __enter__(self) -> RawConnector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def again_on_timeout(read: Callable[[], T], tries: int = 3) -> T:
    """`read()`, asked again while it times out, `tries` times in all; on a reconnecting client each
    time on a new connection. For reads the harness takes a verdict's evidence from, under load: a
    write that timed out may have landed, and a broker that hangs up has answered (both raise)."""
    for _ in range(tries - 1):
        try:
            return read()
        except RequestTimeout:
            continue
    return read()


def versions(client: RawClient, api: str, lowest: int = 0) -> list[int]:
    """Every version of `api` from `lowest` that both the broker and our spec speak."""
    a = client.specs.api(api)
    top = client.max_version(api)  # negotiates; a broker without the API raises ApiNotOffered
    lo, hi = client.broker_versions[a.key]
    return [v for v in range(max(lo, lowest, a.valid_versions.low), top + 1) if v <= hi]


def metadata(client: RawClient, topic: str, version: int | None = None) -> dict[str, Any]:
    """The topic's entry of a Metadata answer (TopicId, Partitions with LeaderId and LeaderEpoch)."""
    v = client.max_version("Metadata") if version is None else version
    resp = client.send("Metadata", v, {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False})
    (t,) = resp["Topics"]
    assert t["ErrorCode"] == 0, f"Metadata for {topic} at {client.port}: {errors.describe(t['ErrorCode'])}"
    return t


def partition_metadata(client: RawClient, topic: str, partition: int = 0) -> dict[str, Any]:
    return next(p for p in metadata(client, topic)["Partitions"] if p["PartitionIndex"] == partition)


def topic_id(client: RawClient, topic: str) -> uuid.UUID:
    return metadata(client, topic)["TopicId"]


def fetch(
    client: RawClient,
    version: int,
    topic: str,
    tid: uuid.UUID,
    partition: int,
    offset: int,
    current_epoch: int = NO_EPOCH,
    isolation: int = 0,
) -> dict[str, Any]:
    """One consumer Fetch of one partition; returns its partition answer (Records as bytes).

    MinBytes 0 and MaxWaitMs 0: the leader answers at once with what it holds. A client made by a
    RawConnector asks the wait its target's profile sets instead (`fetch_max_wait_ms`; Nisshi 0.8.1
    answers a wait of 0 with no topics at all). An answer without the partition asked is the
    target's refusal to serve the read (TargetRefused, the answer as evidence), not a verdict on what
    the check judges of the partition's answer."""
    key = {"TopicId": tid} if version >= 13 else {"Topic": topic}
    part = {"Partition": partition, "FetchOffset": offset, "PartitionMaxBytes": 1 << 20}
    if version >= 9:
        part["CurrentLeaderEpoch"] = current_epoch
    body = {
        "ReplicaId": CONSUMER_REPLICA_ID,
        "MaxWaitMs": client.fetch_max_wait_ms if isinstance(client, TargetClient) else FETCH_MAX_WAIT_MS,
        "MinBytes": 0,
        "MaxBytes": 4 << 20,
        "IsolationLevel": isolation,
        "SessionId": 0,
        "SessionEpoch": -1,
        "Topics": [{**key, "Partitions": [part]}],
        "ForgottenTopicsData": [],
        "RackId": "",
    }
    resp = client.send("Fetch", version, body)
    assert resp.get("ErrorCode", 0) == 0, f"Fetch v{version}: top-level {errors.describe(resp['ErrorCode'])}"
    return fetched_partition(resp, version, topic, partition, body)


def fetched_partition(resp: dict[str, Any], version: int, topic: str, partition: int,
                      asked: dict[str, Any]) -> dict[str, Any]:
    """The answer for `partition` in a Fetch `resp` (the only partition `asked`); TargetRefused where
    the target left it out."""
    # The request names a partition "Partition", the answer "PartitionIndex" (FetchResponse.json)
    found = [p for t in resp.get("Responses") or [] for p in t.get("Partitions") or []
             if p["PartitionIndex"] == partition]
    if not found:
        raise TargetRefused(f"the target answered a Fetch v{version} of {topic}-{partition} without that partition, "
                            f"so no read of it could be judged: asked {asked}, answered {resp}")
    return found[0]


# How long the harness's own reads of the target's state (the log, its edges) go on asking while the
# target answers with a retriable error or with nothing below its high watermark: both are answers the
# protocol allows (a leader moving, a Fetch that returns before MaxWaitMs with fewer batches, KIP-74),
# and a client asks again. The Java producer's default request.timeout.ms.
READ_RETRY_S = 30.0


def until_served(ask: Callable[[], dict[str, Any]], what: str, timeout: float = READ_RETRY_S) -> dict[str, Any]:
    """`ask()` (a partition answer), asked again while its ErrorCode is retriable, within `timeout`; the
    first other answer, or the last one when the error persisted (its caller judges or refuses it)."""
    answer, _ = asked_again(ask, lambda a: errors.is_retriable(a.get("ErrorCode", 0)), timeout)
    return answer


def read_log(
    client: RawClient, topic: str, tid: uuid.UUID, partition: int = 0, start: int = 0
) -> tuple[list[RecordBatch], int]:
    """Every batch of the partition from `start` up to the high watermark, and the high watermark.

    A retriable error and an answer with no batch below the high watermark are asked again (within
    `READ_RETRY_S`): neither says what the log holds. What persists past that is the target's
    refusal to be read (TargetRefused, the last answer as evidence)."""
    version = client.max_version("Fetch")
    batches: list[RecordBatch] = []
    offset, hw = start, None
    deadline = time.monotonic() + READ_RETRY_S
    while hw is None or offset < hw:
        p = until_served(lambda o=offset: fetch(client, version, topic, tid, partition, o),
                         f"Fetch of {topic}-{partition}")
        if p["ErrorCode"] != 0:
            raise TargetRefused(f"reading {topic}-{partition} at {offset}: {errors.describe(p['ErrorCode'])}, "
                                f"still after {READ_RETRY_S:.0f}s")
        hw = p["HighWatermark"]
        got = [b for b in parse_batches(p["Records"]) if b.last_offset >= offset]
        if not got:
            if offset >= hw:
                break
            if time.monotonic() >= deadline:
                raise TargetRefused(f"reading {topic}-{partition}: no batch from offset {offset} below the high "
                                    f"watermark {hw} within {READ_RETRY_S:.0f}s of Fetches")
            time.sleep(0.1)  # a client's fetch backoff after an empty answer
            continue
        batches.extend(got)
        offset = got[-1].next_offset
    return batches, hw or 0


LIST_OFFSETS_TIMEOUT_VERSION = 10  # ListOffsets TimeoutMs (KIP-1075, Apache Kafka 4.0)


def list_offsets(
    client: RawClient, version: int, topic: str, partition: int, timestamp: int, current_epoch: int = NO_EPOCH
) -> dict[str, Any]:
    part = {"PartitionIndex": partition, "CurrentLeaderEpoch": current_epoch, "Timestamp": timestamp}
    body = {
        "ReplicaId": CONSUMER_REPLICA_ID,
        "IsolationLevel": 0,
        "Topics": [{"Name": topic, "Partitions": [part]}],
    }
    if version >= LIST_OFFSETS_TIMEOUT_VERSION:  # a field releases before 4.0 do not know at all
        body["TimeoutMs"] = 5000
    return client.send("ListOffsets", version, body)["Topics"][0]["Partitions"][0]


def offsets_for_leader_epoch(
    client: RawClient, version: int, topic: str, partition: int, leader_epoch: int, current_epoch: int = NO_EPOCH
) -> dict[str, Any]:
    part = {"Partition": partition, "CurrentLeaderEpoch": current_epoch, "LeaderEpoch": leader_epoch}
    body = {"ReplicaId": CONSUMER_REPLICA_ID, "Topics": [{"Topic": topic, "Partitions": [part]}]}
    return client.send("OffsetForLeaderEpoch", version, body)["Topics"][0]["Partitions"][0]


def produce(
    client: RawClient, version: int, topic: str, tid: uuid.UUID, partition: int, records: bytes, acks: int = -1,
    epoch: int | None = None, transactional_id: str | None = None,
) -> Exchange:
    """One Produce of `records`; `epoch` is KIP-359's CurrentLeaderEpoch, for a schema that has it;
    `transactional_id` names the transaction a transactional batch belongs to (v3+)."""
    key = {"TopicId": tid} if version >= 13 else {"Name": topic}
    part = {"Index": partition, "Records": records, **({} if epoch is None else {"CurrentLeaderEpoch": epoch})}
    body = {"TransactionalId": transactional_id, "Acks": acks, "TimeoutMs": 10000,
            "TopicData": [{**key, "PartitionData": [part]}]}
    return client.exchange("Produce", version, body)


def offset_commit(
    client: RawClient, version: int, group: str, topic: str, tid: uuid.UUID, partition: int, offset: int, epoch: int,
    metadata: str | None = None, resend: bool = False,
) -> int:
    """A commit outside any generation (a standalone group, as admin tools do); the partition's error code.

    `resend`: the commit prepares a scene (its answer is a premise, no check's verdict) and is sent
    again after a timeout where `client` reconnects (`transactions.settle`'s `resend_on`): the same
    offset, epoch and metadata committed twice leave the group as one commit does."""
    key = {"TopicId": tid} if version >= 10 else {"Name": topic}
    part = {"PartitionIndex": partition, "CommittedOffset": offset, "CommittedLeaderEpoch": epoch,
            "CommittedMetadata": metadata}
    body = {"GroupId": group, generation_field(client, "OffsetCommit"): -1, "MemberId": "", "GroupInstanceId": None,
            "Topics": [{**key, "Partitions": [part]}]}

    ex = settle(lambda: client.exchange("OffsetCommit", version, body), COORDINATOR_TRANSIENT,
                f"OffsetCommit v{version}", resend_on=(lambda: client) if resend else None)
    assert isinstance(ex, Exchange)
    return ex.response["Topics"][0]["Partitions"][0]["ErrorCode"]


def offset_fetch(
    client: RawClient, version: int, group: str, topic: str, tid: uuid.UUID, partition: int
) -> dict[str, Any]:
    """The committed {offset, epoch, metadata, error} of one partition, asked with OffsetFetch `version` (v5+).

    From v7 it asks for stable offsets (RequireStable); the callers read a transactional commit
    only after its transaction is complete, so older versions see the same.
    """
    resp = transactions.offset_fetch(client, version, group, topic, tid, [partition]).response
    top = resp["Groups"][0] if version >= 8 else resp
    p = top["Topics"][0]["Partitions"][0] if top["Topics"] else {"ErrorCode": top["ErrorCode"]}
    return {"offset": p.get("CommittedOffset"), "epoch": p.get("CommittedLeaderEpoch"), "metadata": p.get("Metadata"),
            "error": p["ErrorCode"] or top["ErrorCode"]}
