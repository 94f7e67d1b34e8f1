"""Raw requests of the leader-epoch checks (KIP-320, KIP-359, KIP-1094), at exact versions.

Each builder sends one request through a `RawClient` and returns the partition-level answer (or
the whole exchange where the check needs more), so that checks see exactly what the broker said
to exactly what was sent. On a client a `RawConnector` made, a Fetch, ListOffsets or
OffsetsForLeaderEpoch answer that a client would ask again (a leader moving, per the broker's own
Metadata; a Fetch served short of the high watermark) is asked again, and only that: one place,
`as_a_client_asks`, decides it, and the answer judged carries those it replaced.

The KIP-359 and KIP-1094 suites use these too. Requests to a group or transaction coordinator, and
the wait for a coordinator to settle, live in `harness.clients.transactions`; `offset_commit` and
`offset_fetch` here are built on them.
"""

from __future__ import annotations

import struct
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
from harness.protocol.exceptions import ProtocolError, RequestTimeout
from harness.protocol.records import RecordBatch, parse_batches
from harness.protocol.sentinels import CONSUMER_REPLICA_ID, NO_EPOCH
from harness.waiting import asked_again

T = TypeVar("T")

FETCH_MAX_WAIT_MS = 0  # the MaxWaitMs of `fetch` unless the target's profile sets one: answer at once


class TargetClient(RawClient):
    """A RawClient that a RawConnector made to a broker of the target under test. It also carries what
    the target's profile asks of the harness's own requests: the MaxWaitMs of `fetch`
    (`TargetSpec.fetch_max_wait_ms`), and the id of the broker it was made for, whose own Metadata
    says whether a leader-moving answer came from the partition's leader (`as_a_client_asks`)."""

    fetch_max_wait_ms: int = FETCH_MAX_WAIT_MS
    broker_id: int | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # (api, topic, partition, why) whose answer a client would ask again and which persisted through
        # a whole READ_RETRY_S on this client: later asks of the kind take the answer as it comes
        # (`as_a_client_asks`), so a target that keeps it costs the bound once, not once per probe.
        self.persisted: set[tuple[str, str, int, str]] = set()


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
        client.broker_id = broker
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


# -- a partition answer a client would ask again ---------------------------------------------------
# How long the harness's own requests (its reads of the target's state, and the probes a check judges)
# go on asking while the target answers as it may while a leader moves, or with nothing below its high
# watermark: both are answers the protocol allows (a leader moving; a Fetch that returns before MaxWaitMs
# with fewer batches, KIP-74), and a client asks again. The Java producer's default request.timeout.ms.
READ_RETRY_S = 30.0
# Between two asks: a client's retry.backoff.ms (100 ms by default, in the Java client and librdkafka).
RETRY_BACKOFF_S = 0.1
# The protocol guide ("Partitioning and bootstrapping"): "If we get an appropriate error, refresh the
# metadata and try again"; both are retriable (Error Codes). FENCED_LEADER_EPOCH and
# UNKNOWN_LEADER_EPOCH are retriable too, but they are the subject of the epoch checks: never asked again.
LEADER_MOVING = frozenset({errors.NOT_LEADER_OR_FOLLOWER, errors.LEADER_NOT_AVAILABLE})
# The key of a partition answer (`as_a_client_asks`) holding the answers it replaced, oldest first: the
# evidence that the answer judged came after others a client asks again. Not a field of any schema.
REPLACED = "ReplacedAnswers"


def _leads(client: TargetClient, topic: str, partition: int) -> bool:
    """Whether the broker `client` was made for names itself the partition's leader in its own Metadata.
    A Metadata that fails to say (an error, no answer) says nothing: the answer it was asked about stands."""
    try:
        return bool(partition_metadata(client, topic, partition)["LeaderId"] == client.broker_id)
    except (AssertionError, StopIteration, KeyError, ProtocolError):
        return False


def entries_reach(records: bytes | None, offset: int) -> bool:
    """Whether a Fetch answer's `records` hold a whole entry ending at or after `offset`: a record batch
    (its base offset plus lastOffsetDelta), or a down-converted magic 0/1 message (its offset; a
    compressed wrapper's is its last inner message's). Read from the entries' headers alone, as
    `records.count_entries` does, so that a Fetch below v4 is read too; a cut last entry is not one."""
    buf, pos = records or b"", 0
    while len(buf) - pos >= _ENTRY_HEAD:
        base, length = _OFFSET_LENGTH.unpack_from(buf, pos)
        if pos + 12 + length > len(buf):
            return False
        magic = buf[pos + 16]
        last = base + _DELTA.unpack_from(buf, pos + 23)[0] if magic >= 2 and length >= 15 else base
        if last >= offset:
            return True
        pos += 12 + length
    return False


_OFFSET_LENGTH = struct.Struct(">qi")  # every entry: its (base) offset and the length of the rest
_DELTA = struct.Struct(">i")  # a v2 batch's lastOffsetDelta, 23 bytes in
_ENTRY_HEAD = 27  # up to the end of lastOffsetDelta; a magic 0/1 message is longer than that too


def fetched_short(answer: dict[str, Any], fetch_offset: int, isolation: int = 0) -> bool:
    """A served Fetch answer with no entry at or after `fetch_offset` while the partition holds records
    there: `fetch_offset` below the high watermark (below the LastStableOffset for read_committed, which
    is served no further), and the answer names no other replica to read from (KIP-392's
    PreferredReadReplica). A broker may answer so (a read that did not complete within MaxWaitMs,
    KIP-1018; fewer batches than asked, KIP-74), and a client fetches the same offset again."""
    if answer.get("ErrorCode", 0) != 0 or answer.get("PreferredReadReplica", -1) >= 0:
        return False
    end = answer.get("HighWatermark", -1)
    stable = answer.get("LastStableOffset", -1)
    if isolation and stable is not None and stable >= 0:
        end = min(end, stable)
    return bool(fetch_offset < end and not entries_reach(answer.get("Records"), fetch_offset))


def as_a_client_asks(
    client: RawClient, api: str, topic: str, partition: int, ask: Callable[[], dict[str, Any]],
    fetch_offset: int | None = None, isolation: int = 0,
) -> dict[str, Any]:
    """`ask()` (one partition answer of `api`), asked again as a client asks again, on a client a
    RawConnector made (a plain RawClient is asked once: it does nothing behind the caller's back).

    Asked again, within READ_RETRY_S and RETRY_BACKOFF_S apart, while the answer is
    - NOT_LEADER_OR_FOLLOWER or LEADER_NOT_AVAILABLE and the broker's own Metadata names it the
      partition's leader (protocol guide, "Partitioning and bootstrapping": "If we get an appropriate
      error, refresh the metadata and try again"); where it names another leader, the answer stands at
      once (a follower owes NOT_LEADER_OR_FOLLOWER, and the probes of followers judge it);
    - for a Fetch from `fetch_offset`: served with nothing at or after it below the high watermark
      (`fetched_short`: KIP-74, KIP-1018).
    FENCED_LEADER_EPOCH and UNKNOWN_LEADER_EPOCH are never asked again: the checks judge them.

    Returns the last answer, with the answers it replaced under `REPLACED` where there were any. An
    answer that persisted through the bound is returned as it stands, for its check to judge (a FAIL of
    its promise, or a scene's refusal); the client then takes that kind of answer for that partition
    as it comes (`TargetClient.persisted`)."""
    if not isinstance(client, TargetClient) or client.broker_id is None:
        return ask()
    why: list[str] = []  # the reason the latest answer would be asked again, "" for none

    def again(answer: dict[str, Any]) -> bool:
        code = answer.get("ErrorCode", 0)
        if code in LEADER_MOVING:
            reason = f"{errors.error_name(code)} from its leader" if _leads(client, topic, partition) else ""
        elif fetch_offset is not None:
            reason = "served short" if fetched_short(answer, fetch_offset, isolation) else ""
        else:
            reason = ""
        why.append(reason)
        return bool(reason) and (api, topic, partition, reason) not in client.persisted

    answer, replaced = asked_again(ask, again, READ_RETRY_S, RETRY_BACKOFF_S)
    if why and why[-1] and replaced:
        client.persisted.add((api, topic, partition, why[-1]))
    return {**answer, REPLACED: replaced} if replaced else answer


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
    """One consumer Fetch of one partition; returns its partition answer (Records as bytes), asked
    again as a client asks again (`as_a_client_asks`: a leader moving, an answer short of the high
    watermark).

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

    def ask() -> dict[str, Any]:
        resp = client.send("Fetch", version, body)
        assert resp.get("ErrorCode", 0) == 0, f"Fetch v{version}: top-level {errors.describe(resp['ErrorCode'])}"
        return fetched_partition(resp, version, topic, partition, body)

    return as_a_client_asks(client, "Fetch", topic, partition, ask, fetch_offset=offset,
                            isolation=isolation if version >= 4 else 0)


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
            time.sleep(RETRY_BACKOFF_S)  # a client's fetch backoff after an empty answer
            continue
        batches.extend(got)
        offset = got[-1].next_offset
    return batches, hw or 0


LIST_OFFSETS_TIMEOUT_VERSION = 10  # ListOffsets TimeoutMs (KIP-1075, Apache Kafka 4.0)


def list_offsets(
    client: RawClient, version: int, topic: str, partition: int, timestamp: int, current_epoch: int = NO_EPOCH,
    replica_id: int = CONSUMER_REPLICA_ID,
) -> dict[str, Any]:
    """One ListOffsets of one partition; its partition answer, asked again as a client asks again while
    a leader moves (`as_a_client_asks`). `replica_id`: a consumer's by default; DEBUGGING_REPLICA_ID
    asks the replica's own log end (any replica answers it)."""
    part = {"PartitionIndex": partition, "CurrentLeaderEpoch": current_epoch, "Timestamp": timestamp}
    body = {
        "ReplicaId": replica_id,
        "IsolationLevel": 0,
        "Topics": [{"Name": topic, "Partitions": [part]}],
    }
    if version >= LIST_OFFSETS_TIMEOUT_VERSION:  # a field releases before 4.0 do not know at all
        body["TimeoutMs"] = 5000
    return as_a_client_asks(client, "ListOffsets", topic, partition,
                            lambda: client.send("ListOffsets", version, body)["Topics"][0]["Partitions"][0])


def offsets_for_leader_epoch(
    client: RawClient, version: int, topic: str, partition: int, leader_epoch: int, current_epoch: int = NO_EPOCH
) -> dict[str, Any]:
    """One consumer OffsetsForLeaderEpoch of one partition; its partition answer, asked again as a client
    asks again while a leader moves (`as_a_client_asks`)."""
    part = {"Partition": partition, "CurrentLeaderEpoch": current_epoch, "LeaderEpoch": leader_epoch}
    body = {"ReplicaId": CONSUMER_REPLICA_ID, "Topics": [{"Topic": topic, "Partitions": [part]}]}
    return as_a_client_asks(client, "OffsetForLeaderEpoch", topic, partition,
                            lambda: client.send("OffsetForLeaderEpoch", version, body)["Topics"][0]["Partitions"][0])


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
