"""Coordinator and transactional requests spoken with the raw client: each step one request, nothing hidden.

One home for everything that asks a group or transaction coordinator: FindCoordinator, the
Transaction V2 steps (InitProducerId, TxnOffsetCommit, EndTxn; from TxnOffsetCommit v5 the group
coordinator adds the offsets partition to the transaction itself, KIP-890), OffsetFetch of what a
group committed, and ConsumerGroupHeartbeat (KIP-848) for a member of a consumer-protocol group.

Coordinator start-up answers (loading, not available, not the coordinator yet; and for
transactional requests a previous transaction still completing) are waited out with `settle`,
built on `harness.waiting.wait_until`; any other answer is returned for the caller to judge. An
exchange that cannot be encoded, sent or decoded is `Unrecoverable`: waiting would not help.
The one exception is a setup request that timed out under load on a reconnecting client (see
`settle`'s `resend_on`): FindCoordinator, and a `Transaction`'s own steps when `begin` was given
`reconnect=True`. A request whose answer a check judges (TxnOffsetCommit, OffsetFetch read back)
is never sent again here.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from harness.clients import txn_refusal
from harness.errors import NotSupported, Unrecoverable
from harness.protocol import errors
from harness.protocol.client import Exchange, RawClient
from harness.protocol.exceptions import ProtocolError, RequestTimeout
from harness.waiting import Owed, asked_again, wait_until

Connect = Callable[..., RawClient]  # a RawConnector: `connect(broker_id=None, **options)`
GROUP_KEY, TRANSACTION_KEY = 0, 1  # FindCoordinator KeyType
# A coordinator that is starting, moving or loading its state: the same request succeeds later.
COORDINATOR_TRANSIENT = frozenset(
    {errors.COORDINATOR_LOAD_IN_PROGRESS, errors.COORDINATOR_NOT_AVAILABLE, errors.NOT_COORDINATOR}
)
# ... and, for transactional requests, a previous transaction of the same id still completing.
TRANSACTION_TRANSIENT = COORDINATOR_TRANSIENT | {errors.CONCURRENT_TRANSACTIONS}
# KIP-1319, "Proposed Changes > Producer-Side": "UNKNOWN_TOPIC_ID is treated as a retriable error
# consistent with UNKNOWN_TOPIC_OR_PARTITION". A coordinator resolves topic IDs "via the metadata
# cache", which may lag a topic made a moment ago: a partition of a topic that exists is sent again,
# as the Java producer does, within `TOPIC_RETRY_S`.
TOPIC_RETRIABLE = frozenset({errors.UNKNOWN_TOPIC_ID, errors.UNKNOWN_TOPIC_OR_PARTITION})
# The Java producer's default request.timeout.ms: the bound within which a retriable partition error
# must clear before the answer is judged as it stands.
TOPIC_RETRY_S = 30.0
RETRY_BACKOFF_S = 0.1  # the Java producer's default retry.backoff.ms between those retries
# The coordinator is elsewhere now (its broker was fenced, its partition's leader moved): asking the
# same broker again never helps, a client finds the coordinator again (as Kafka's producer does).
COORDINATOR_MOVED = frozenset({errors.NOT_COORDINATOR, errors.COORDINATOR_NOT_AVAILABLE})

Answer = Exchange | dict[str, Any]
# `settle`'s opt-in to send a timed-out setup request again: the client its next attempt goes out on.
ResendOn = Callable[[], RawClient]


# What a transaction needs of a broker: a producer id, its partitions and offsets added, its end.
TRANSACTION_APIS = ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "TxnOffsetCommit")


def require_transactions(client: RawClient) -> None:
    """Raise `NotSupported` (with what the broker advertised of them) where it lacks any API a
    transaction needs; such a target cannot be judged on what transactions promise."""
    if not client.broker_versions:
        client.negotiate()
    keys = {a: client.specs.api(a).key for a in TRANSACTION_APIS}
    missing = [a for a, k in keys.items() if k not in client.broker_versions]
    if missing:
        offered = ", ".join(f"{a} v{client.broker_versions[k][0]}-{client.broker_versions[k][1]}"
                            for a, k in keys.items() if k in client.broker_versions) or "none of them"
        raise NotSupported("transactions", f"{client.host}:{client.port} advertises no {', '.join(missing)} in "
                           f"ApiVersions; of the transaction APIs it offers {offered}")


def settle(
    call: Callable[[], Answer], transient: Collection[int], what: str, timeout: float = 30.0, *,
    resend_on: ResendOn | None = None, owed: Owed = Owed.PREMISE,
) -> Answer:
    """Repeat `call` while any ErrorCode it answers is in `transient`; return its first other answer.

    `call` returns an `Exchange` (its response is read) or a decoded body. An answer that cannot
    be had at all (a request the codec cannot write, a lost connection, bytes it cannot read) ends
    the wait at once as `Unrecoverable`; the timeout's message shows the last answer.

    `resend_on` opts a setup request in (one preparing a scene, whose answer no check judges): it
    names the client the next attempt goes out on, and where that client reconnects
    (`RawClient.connect(reconnect=True)`) a `RequestTimeout` is waited out like a transient answer,
    the next attempt on a new connection. Without it, or on a client that does not reconnect (every
    later attempt would fail on the closed connection), a timeout is `Unrecoverable` at once. A
    request whose answer a check judges is never opted in: a write that timed out may have landed,
    and sent again it may be answered otherwise.

    A transient answer that never clears is the target's conduct, not the harness's: by default the
    target's refusal of the scene's premise; `owed=Owed.PROMISE` where the settled answer is what a
    promise owes (a commit read back), so that it FAILs with the last answer.
    """
    last: list[Answer] = []
    timed_out: list[RequestTimeout] = []  # a timeout after the last answer, if any

    def attempt() -> Answer | None:
        try:
            answer = call()
        except RequestTimeout as exc:
            if resend_on is None or not resend_on().reconnecting:
                raise Unrecoverable(f"{what}: {exc}") from exc
            timed_out[:] = [exc]
            return None
        except ProtocolError as exc:
            raise Unrecoverable(f"{what}: {exc}") from exc
        last[:] = [answer]
        timed_out.clear()
        body = answer.response if isinstance(answer, Exchange) else answer
        return None if set(transient) & set(error_codes(body)) else answer

    def describe() -> str:
        then = f"\nthen: {timed_out[0]}" if timed_out else ""
        if not last:
            return f"{what}: no answer{then}"
        answer = last[0]
        return f"{what}: last answer\n{answer.dump() if isinstance(answer, Exchange) else answer}{then}"

    return wait_until(attempt, timeout, describe, interval=0.2, owed=owed)


def error_codes(body: Any) -> list[int]:
    """Every ErrorCode of a decoded body, depth first."""
    found: list[int] = []
    if isinstance(body, dict):
        for k, v in body.items():
            if k == "ErrorCode":
                found.append(v)
            else:
                found.extend(error_codes(v))
    elif isinstance(body, list):
        for item in body:
            found.extend(error_codes(item))
    return found


def coordinator_id(client: RawClient, key: str, key_type: int) -> int:
    """The node id coordinating a group (`GROUP_KEY`) or a transactional id (`TRANSACTION_KEY`)."""
    v = client.max_version("FindCoordinator")
    body = {"KeyType": key_type, "CoordinatorKeys": [key]} if v >= 4 else {"KeyType": key_type, "Key": key}
    # A read: asked again after a timeout (on a reconnecting client) it changes nothing.
    ex = settle(lambda: client.exchange("FindCoordinator", v, body), COORDINATOR_TRANSIENT, f"coordinator of {key}",
                resend_on=lambda: client)
    assert isinstance(ex, Exchange)
    found = ex.response["Coordinators"][0] if v >= 4 else ex.response
    assert found["ErrorCode"] == 0, f"FindCoordinator {key!r} failed:\n{ex.dump()}"
    return int(found["NodeId"])


def generation_field(client: RawClient, api: str) -> str:
    """The name of the generation / member epoch field in this spec set's request of `api`.

    KIP-848 and KIP-1319 renamed GenerationId to GenerationIdOrMemberEpoch (the same wire
    field); the specs of older releases still use the old name.
    """
    fields = client.specs.api(api).request.struct.field_names()
    return "GenerationIdOrMemberEpoch" if "GenerationIdOrMemberEpoch" in fields else "GenerationId"


def _exchange(call: Callable[[], Exchange], transient: Collection[int], what: str,
              owed: Owed = Owed.PREMISE) -> Exchange:
    ex = settle(call, transient, what, owed=owed)
    assert isinstance(ex, Exchange)
    return ex


def _following(find: Callable[[], RawClient], first: RawClient, call: Callable[[RawClient], Answer],
               transient: Collection[int], what: str, resend: bool = False) -> tuple[Answer, RawClient]:
    """`settle` of `call` at a coordinator, found again (`find`) whenever an answer says it moved;
    the settled answer and the coordinator that gave it. `resend`: a setup request, sent again after
    a timeout where the coordinator's client reconnects (`settle`'s `resend_on`)."""
    at = [first]

    def attempt() -> Answer:
        answer = call(at[0])
        body = answer.response if isinstance(answer, Exchange) else answer
        if COORDINATOR_MOVED & set(error_codes(body)):
            try:
                at[0] = find()
            except (AssertionError, ProtocolError, OSError):
                pass  # no coordinator to be found yet: the next attempt asks again
        return answer

    return settle(attempt, transient, what, resend_on=(lambda: at[0]) if resend else None), at[0]


@dataclass
class Transaction:
    """A producer id and epoch granted by the transaction coordinator of `transactional_id`; `find`
    finds that coordinator again when it moves.

    Its steps (InitProducerId in `begin`, AddOffsetsToTxn, AddPartitionsToTxn, EndTxn) prepare a
    scene, and no check judges their answers: each is sent again after a timeout where `begin` was
    given `reconnect=True` (`settle`'s `resend_on`); each step says why sending it twice is safe."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    coordinator: RawClient
    find: Callable[[], RawClient] | None = None

    def _settle(self, call: Callable[[RawClient], Answer], transient: Collection[int], what: str) -> Answer:
        if self.find is None:
            return settle(lambda: call(self.coordinator), transient, what, resend_on=lambda: self.coordinator)
        answer, self.coordinator = _following(self.find, self.coordinator, call, transient, what, resend=True)
        return answer

    @property
    def producer(self) -> dict[str, Any]:
        """The fields that name this producer in a transactional request."""
        return {"TransactionalId": self.transactional_id, "ProducerId": self.producer_id,
                "ProducerEpoch": self.producer_epoch}

    def add_group(self, group: str) -> None:
        """AddOffsetsToTxn (v3 at most): before KIP-890's Transaction V2 (TxnOffsetCommit v5) the producer
        adds the group to its transaction itself; fails unless the coordinator accepts it.
        Sent again after a timeout: it adds the group's offsets partition as AddPartitionsToTxn does."""
        added = self._settle(lambda c: c.send("AddOffsetsToTxn", min(3, c.max_version("AddOffsetsToTxn")),
                                              {**self.producer, "GroupId": group}),
                             TRANSACTION_TRANSIENT, "AddOffsetsToTxn")
        assert isinstance(added, dict)
        assert added["ErrorCode"] == 0, f"AddOffsetsToTxn: {errors.describe(added['ErrorCode'])}"

    def add_partitions(self, topic: str, partitions: list[int]) -> None:
        """AddPartitionsToTxn (v3 at most, the last version a producer sends: v4+ batch transactions for
        brokers): before KIP-890's Transaction V2 the producer adds each partition it writes to
        itself; fails unless the coordinator accepts every one.

        Sent again after a timeout: a first one that landed left the transaction Ongoing with these
        partitions, and Kafka's coordinator answers a request adding no new partition NONE at once
        (while the first is still being written, CONCURRENT_TRANSACTIONS, waited out)."""
        v = min(3, self.coordinator.max_version("AddPartitionsToTxn"))
        body = {"V3AndBelowTransactionalId": self.transactional_id, "V3AndBelowProducerId": self.producer_id,
                "V3AndBelowProducerEpoch": self.producer_epoch,
                "V3AndBelowTopics": [{"Name": topic, "Partitions": partitions}]}

        def attempt(c: RawClient) -> dict[str, Any]:
            resp = c.send("AddPartitionsToTxn", v, body)
            # The per-partition codes are PartitionErrorCode: read as ErrorCode so that `settle` waits
            # out a previous transaction of this id still completing.
            codes = [p["PartitionErrorCode"] for t in resp["ResultsByTopicV3AndBelow"] for p in t["ResultsByPartition"]]
            return {"ErrorCode": next((e for e in codes if e), 0), "response": resp}

        added = self._settle(attempt, TRANSACTION_TRANSIENT, f"AddPartitionsToTxn v{v}")
        assert isinstance(added, dict)
        assert added["ErrorCode"] == 0, f"AddPartitionsToTxn v{v} {topic} {partitions}: {added['response']}"

    def end(self, commit: bool, version: int | None = None) -> Exchange:
        """EndTxn at `version` (default the coordinator's highest); fails unless the coordinator accepts it.

        Sent again after a timeout, since it ends the same transaction the same way and nothing
        else: a first EndTxn that landed left the transaction in PrepareCommit/Abort (Kafka's
        coordinator answers the same request CONCURRENT_TRANSACTIONS, waited out here) or
        CompleteCommit/Abort (answered NONE). Before Transaction V2 the request's epoch is still the
        transaction's; from v5 (KIP-890) the first EndTxn bumped it by one, and the coordinator takes
        the epoch before the bump as a retry of that EndTxn. No check judges EndTxn's answer."""
        v = self.coordinator.max_version("EndTxn") if version is None else version
        body = {**self.producer, "Committed": commit}
        ex = self._settle(lambda c: c.exchange("EndTxn", v, body), TRANSACTION_TRANSIENT, "EndTxn")
        assert isinstance(ex, Exchange)
        assert ex.response["ErrorCode"] == 0, f"EndTxn v{v} (commit={commit}) failed:\n{ex.dump()}"
        return ex


def begin(connect: Connect, transactional_id: str, **connect_options: Any) -> Transaction:
    """InitProducerId at the transaction coordinator of `transactional_id` (found through any broker);
    an error answered is the target's refusal of the transaction (TargetRefused, harness.clients.txn_refusal).

    `connect_options` go to every client it makes: with `reconnect=True` the coordinator lookups and
    the transaction's steps are sent again after a timeout under load (see `Transaction`). So is
    InitProducerId: a first one that landed bumped the epoch to one the harness never learned, the
    one sent again bumps it once more, and the transaction uses only the grant it was answered; the
    lost epoch fenced nothing (the transactional id is the scene's, nothing was written under it)."""
    def find() -> RawClient:
        return connect(coordinator_id(connect(**connect_options), transactional_id, TRANSACTION_KEY), **connect_options)

    body = {"TransactionalId": transactional_id, "TransactionTimeoutMs": 60000}
    ex, c = _following(find, find(), lambda c: c.exchange("InitProducerId", c.max_version("InitProducerId"), body),
                       TRANSACTION_TRANSIENT, "InitProducerId", resend=True)
    assert isinstance(ex, Exchange)
    txn_refusal.check_answer(ex.response, transactional_id, ex.dump())
    return Transaction(transactional_id, ex.response["ProducerId"], ex.response["ProducerEpoch"], c, find)


def partition(index: int, offset: int, leader_epoch: int = -1, metadata: str | None = None) -> dict[str, Any]:
    """One partition entry of a TxnOffsetCommit request."""
    return {
        "PartitionIndex": index,
        "CommittedOffset": offset,
        "CommittedLeaderEpoch": leader_epoch,
        "CommittedMetadata": metadata,
    }


def txn_offset_commit(
    group_coordinator: RawClient,
    version: int,
    txn: Transaction,
    group: str,
    topics: list[dict[str, Any]],
    generation_or_epoch: int = -1,
    member_id: str = "",
) -> Exchange:
    """One TxnOffsetCommit; `topics` are keyed by TopicId (v6) or Name (v0-5) as the caller chose."""
    body = {
        "TransactionalId": txn.transactional_id,
        "GroupId": group,
        "ProducerId": txn.producer_id,
        "ProducerEpoch": txn.producer_epoch,
        generation_field(group_coordinator, "TxnOffsetCommit"): generation_or_epoch,
        "MemberId": member_id,
        "GroupInstanceId": None,
        "Topics": topics,
    }
    return _exchange(
        lambda: group_coordinator.exchange("TxnOffsetCommit", version, body), TRANSACTION_TRANSIENT,
        f"TxnOffsetCommit v{version}",
    )


def txn_offset_commit_settled(
    group_coordinator: RawClient,
    version: int,
    txn: Transaction,
    group: str,
    topics: list[dict[str, Any]],
    retriable: Callable[[Any, int, int], bool],
    generation_or_epoch: int = -1,
    member_id: str = "",
) -> tuple[Exchange, tuple[Exchange, ...]]:
    """`txn_offset_commit`, sent again in the same transaction while any partition's answer is one a
    client retries (`retriable(topic key, partition, code)`; see `TOPIC_RETRIABLE`), for at most
    `TOPIC_RETRY_S`: (the last answer, the earlier ones it replaced). The check judges the last; an
    error that persisted past the bound stays in it, and the replaced answers are its evidence."""
    return asked_again(
        lambda: txn_offset_commit(group_coordinator, version, txn, group, topics, generation_or_epoch, member_id),
        lambda ex: any(retriable(k[0], k[1], code) for k, code in partition_errors(ex).items()),
        TOPIC_RETRY_S, RETRY_BACKOFF_S)


def partition_errors(ex: Exchange) -> dict[tuple[Any, int], int]:
    """{(topic key, partition): error code} of a TxnOffsetCommit response (key: TopicId or Name)."""
    out: dict[tuple[Any, int], int] = {}
    for t in ex.response["Topics"]:
        key = t["TopicId"] if "TopicId" in t else t["Name"]
        for p in t["Partitions"]:
            out[(key, p["PartitionIndex"])] = p["ErrorCode"]
    return out


def offset_fetch(
    client: RawClient, version: int, group: str, topic: str, topic_id: uuid.UUID, partitions: list[int],
    owed: Owed = Owed.PREMISE,
) -> Exchange:
    """One OffsetFetch (v5+) of a group's offsets for partitions of one topic, by TopicId from v10.

    From v7 it asks for stable offsets (RequireStable), waited out while a transaction on them is
    still completing; older versions read what is there.
    """
    if version >= 8:
        key = {"TopicId": topic_id} if version >= 10 else {"Name": topic}
        body: dict[str, Any] = {"Groups": [{"GroupId": group, "Topics": [{**key, "PartitionIndexes": partitions}]}]}
    else:
        body = {"GroupId": group, "Topics": [{"Name": topic, "PartitionIndexes": partitions}]}
    if version >= 7:
        body["RequireStable"] = True
    return _exchange(
        lambda: client.exchange("OffsetFetch", version, body), COORDINATOR_TRANSIENT | {errors.UNSTABLE_OFFSET_COMMIT},
        f"OffsetFetch v{version} {group}", owed,
    )


def committed_offsets(
    group_coordinator: RawClient, group: str, topic: str, topic_id: uuid.UUID, partitions: list[int]
) -> dict[int, dict[str, Any]]:
    """OffsetFetch (stable, highest version) of a group's offsets for one topic: {partition: entry}.

    What a commit left is what its promise owes: offsets that stay unstable (a transaction on them
    the target never completes) FAIL that promise with the last answer."""
    ex = offset_fetch(group_coordinator, group_coordinator.max_version("OffsetFetch"), group, topic, topic_id,
                      partitions, Owed.PROMISE)
    groups = ex.response.get("Groups")
    g = groups[0] if groups is not None else ex.response
    if g["ErrorCode"] == errors.GROUP_ID_NOT_FOUND:
        # A group that never committed may not exist at all (kfake says so; Kafka answers with
        # no offsets): either way nothing is committed for it.
        return {}
    assert g["ErrorCode"] == 0, f"OffsetFetch failed:\n{ex.dump()}"
    return {p["PartitionIndex"]: p for t in g["Topics"] for p in t["Partitions"]}


def topic_ids(client: RawClient, names: list[str]) -> dict[str, uuid.UUID]:
    """Topic IDs by name, from a Metadata request (v10+ carries them)."""
    v = client.max_version("Metadata")
    md = client.send("Metadata", v, {"Topics": [{"Name": n} for n in names], "AllowAutoTopicCreation": False})
    bad = [t for t in md["Topics"] if t["ErrorCode"]]
    assert not bad, f"Metadata for {names}: {[(t['Name'], errors.describe(t['ErrorCode'])) for t in bad]}"
    return {t["Name"]: t["TopicId"] for t in md["Topics"]}


def consumer_protocol_probe(client: RawClient, group: str) -> Exchange:
    """One ConsumerGroupHeartbeat (KIP-848) leaving `group` (epoch -1) as a member it never had, to any
    broker: it joins nothing and creates nothing. Apache Kafka 3.7 to 3.9 list the API in ApiVersions
    yet answer it UNSUPPORTED_VERSION while the new group coordinator is off, their default
    (`KafkaApis.handleConsumerGroupHeartbeat`); a broker that serves the protocol answers
    GROUP_ID_NOT_FOUND, UNKNOWN_MEMBER_ID or NOT_COORDINATOR."""
    return client.exchange("ConsumerGroupHeartbeat", client.max_version("ConsumerGroupHeartbeat"),
                           consumer_protocol_probe_body(group, uuid.uuid4().hex[:22]))


def consumer_protocol_probe_body(group: str, member_id: str) -> dict[str, Any]:
    """The probe's fields, those of every version (v0 has no SubscribedTopicRegex; the codec refuses a
    field its version lacks, and every field left out is null or -1 by default)."""
    return {"GroupId": group, "MemberId": member_id, "MemberEpoch": -1, "InstanceId": None, "RackId": None,
            "RebalanceTimeoutMs": -1, "SubscribedTopicNames": None, "ServerAssignor": None, "TopicPartitions": None}


def consumer_group_heartbeat(
    group_coordinator: RawClient, group: str, member_id: str, member_epoch: int, topics: list[str]
) -> Exchange:
    """One ConsumerGroupHeartbeat (KIP-848) of a member subscribed to `topics`; epoch 0 joins."""
    body = {
        "GroupId": group, "MemberId": member_id, "MemberEpoch": member_epoch, "InstanceId": None, "RackId": None,
        "RebalanceTimeoutMs": 30000, "SubscribedTopicNames": topics, "SubscribedTopicRegex": None,
        "ServerAssignor": None, "TopicPartitions": [],
    }
    c = group_coordinator
    v = c.max_version("ConsumerGroupHeartbeat")
    return _exchange(lambda: c.exchange("ConsumerGroupHeartbeat", v, body), COORDINATOR_TRANSIENT,
                     f"ConsumerGroupHeartbeat {group}")
