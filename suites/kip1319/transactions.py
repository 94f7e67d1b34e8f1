"""Transactional offset commits spoken with the raw client: each step one request, nothing hidden.

The order is what a Transaction V2 client sends: FindCoordinator, InitProducerId, TxnOffsetCommit
(v5+ adds the offsets partition to the transaction implicitly, KIP-890), EndTxn. Coordinator
start-up answers (loading, not coordinator yet, a previous transaction still completing) are
waited out with `wait_until`; any other answer is returned for the check to judge.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.clients.raw import generation_field
from harness.errors import Unrecoverable
from harness.protocol import errors
from harness.protocol.client import Exchange, RawClient
from harness.protocol.exceptions import DecodeError, EncodeError
from harness.waiting import wait_until

Connect = Callable[..., RawClient]
GROUP_KEY, TRANSACTION_KEY = 0, 1
COORDINATOR_STARTING = frozenset(
    {errors.COORDINATOR_LOAD_IN_PROGRESS, errors.COORDINATOR_NOT_AVAILABLE, errors.NOT_COORDINATOR}
)
TRANSACTION_BUSY = COORDINATOR_STARTING | {errors.CONCURRENT_TRANSACTIONS}


def until_settled(
    call: Callable[[], Exchange], transient: frozenset[int], what: str, timeout: float = 30.0
) -> Exchange:
    """Repeat `call` while any error code it answers is transient; return the first settled exchange."""
    last: list[Exchange] = []

    def attempt() -> Exchange | None:
        try:
            ex = call()
        except (EncodeError, DecodeError) as exc:
            # A request the codec cannot write, or an answer it cannot read: waiting will not help.
            raise Unrecoverable(f"{what}: {exc}") from exc
        last[:] = [ex]
        return None if transient & set(error_codes(ex.response)) else ex

    return wait_until(attempt, timeout, lambda: f"{what}: last exchange\n{last[0].dump() if last else 'none'}")


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


def find_coordinator(client: RawClient, key: str, key_type: int) -> int:
    v = client.max_version("FindCoordinator")
    body = {"KeyType": key_type, "CoordinatorKeys": [key]} if v >= 4 else {"KeyType": key_type, "Key": key}
    ex = until_settled(
        lambda: client.exchange("FindCoordinator", v, body), COORDINATOR_STARTING, f"coordinator of {key}"
    )
    found = ex.response["Coordinators"][0] if v >= 4 else ex.response
    assert found["ErrorCode"] == 0, f"FindCoordinator {key!r} failed:\n{ex.dump()}"
    return int(found["NodeId"])


@dataclass
class Transaction:
    """A producer id and epoch granted by the transaction coordinator of `transactional_id`."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    coordinator: RawClient

    def end(self, commit: bool) -> Exchange:
        c = self.coordinator
        body = {
            "TransactionalId": self.transactional_id,
            "ProducerId": self.producer_id,
            "ProducerEpoch": self.producer_epoch,
            "Committed": commit,
        }
        ex = until_settled(lambda: c.exchange("EndTxn", c.max_version("EndTxn"), body), COORDINATOR_STARTING, "EndTxn")
        assert ex.response["ErrorCode"] == 0, f"EndTxn(commit={commit}) failed:\n{ex.dump()}"
        return ex


def begin(connect: Connect, transactional_id: str, **connect_kwargs: Any) -> Transaction:
    """InitProducerId at the transaction coordinator (found through any broker)."""
    node = find_coordinator(connect(**connect_kwargs), transactional_id, TRANSACTION_KEY)
    c = connect(node, **connect_kwargs)
    body = {"TransactionalId": transactional_id, "TransactionTimeoutMs": 60000}
    ex = until_settled(
        lambda: c.exchange("InitProducerId", c.max_version("InitProducerId"), body), TRANSACTION_BUSY, "InitProducerId"
    )
    assert ex.response["ErrorCode"] == 0, f"InitProducerId failed:\n{ex.dump()}"
    return Transaction(transactional_id, ex.response["ProducerId"], ex.response["ProducerEpoch"], c)


def partition(index: int, offset: int, leader_epoch: int = -1, metadata: str | None = None) -> dict[str, Any]:
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
    generation = generation_field(group_coordinator, "TxnOffsetCommit")
    body = {
        "TransactionalId": txn.transactional_id,
        "GroupId": group,
        "ProducerId": txn.producer_id,
        "ProducerEpoch": txn.producer_epoch,
        generation: generation_or_epoch,
        "MemberId": member_id,
        "GroupInstanceId": None,
        "Topics": topics,
    }
    return until_settled(
        lambda: group_coordinator.exchange("TxnOffsetCommit", version, body), TRANSACTION_BUSY, "TxnOffsetCommit"
    )


def partition_errors(ex: Exchange) -> dict[tuple[Any, int], int]:
    """{(topic key, partition): error code} of a TxnOffsetCommit response (key: TopicId or Name)."""
    out: dict[tuple[Any, int], int] = {}
    for t in ex.response["Topics"]:
        key = t["TopicId"] if "TopicId" in t else t["Name"]
        for p in t["Partitions"]:
            out[(key, p["PartitionIndex"])] = p["ErrorCode"]
    return out


def committed_offsets(
    group_coordinator: RawClient, group: str, topic: str, topic_id: uuid.UUID, partitions: list[int]
) -> dict[int, dict[str, Any]]:
    """OffsetFetch (require_stable) of a group's offsets for one topic: {partition: entry}."""
    c = group_coordinator
    v = c.max_version("OffsetFetch")
    key = {"TopicId": topic_id} if v >= 10 else {"Name": topic}
    body = {"Groups": [{"GroupId": group, "Topics": [{**key, "PartitionIndexes": partitions}]}], "RequireStable": True}
    ex = until_settled(
        lambda: c.exchange("OffsetFetch", v, body),
        COORDINATOR_STARTING | {errors.UNSTABLE_OFFSET_COMMIT},
        f"OffsetFetch {group}",
    )
    (g,) = ex.response["Groups"]
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
