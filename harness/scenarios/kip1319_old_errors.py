"""KIP-1319 errors that must not change: an unknown topic name on v0-v5, and a classic group's stale
generation on v6.

- v0-v5 name topics, so a name no broker knows is UNKNOWN_TOPIC_OR_PARTITION as before; v6's
  UNKNOWN_TOPIC_ID ("The topic ID cannot be resolved", prior behaviour "N/A (topic names used)") has
  no place there. Each version the coordinator speaks commits, in a transaction of its own that is
  aborted, partition 0 of a name that was never created and of a real topic.
- v6's GenerationIdOrMemberEpoch is "the generation of the group if using the classic group
  protocol": a member of a classic group (JoinGroup and SyncGroup, rejoined once, so at generation
  2) commits with generation 1 and with 2 at v6 and at v5 (and v3, v4), each aborted. The stale
  generation is ILLEGAL_GENERATION at every version; STALE_MEMBER_EPOCH is the consumer protocol's.
"""

from __future__ import annotations

from harness.clients import transactions as tx
from harness.clients.raw import RawConnector
from harness.clients.transactions import COORDINATOR_TRANSIENT, settle
from harness.cluster.base import Cluster
from harness.errors import ClusterError
from harness.histories.kip1319 import ClassicGenerationAnswers, UnknownNameAnswers
from harness.histories.observations import Body, ObservedExchange
from harness.protocol import errors
from harness.protocol.client import Exchange, RawClient
from harness.scenarios.kip1319 import (
    COORDINATOR,
    TXN_OFFSET_COMMIT,
    Unique,
    _v6_and_v5,
    exchange_record,
    group_coordinator,
)

FIRST_TXN_V2 = 5  # TxnOffsetCommit v5 (KIP-890): the coordinator adds the group to the transaction itself
PROTOCOL = "kcts"  # a classic group of a protocol type of its own: no coordinator reads its metadata


def _commit_names(
    raw: RawConnector, unique: Unique, coordinator: RawClient, version: int, group: str, names: list[str],
) -> ObservedExchange:
    txn = tx.begin(raw, unique("txn"), reconnect=True)  # its steps are setup: sent again after a timeout
    if version < FIRST_TXN_V2:
        txn.add_group(group)
    topics = [{"Name": n, "Partitions": [tx.partition(0, 10)]} for n in names]
    answer = exchange_record(tx.txn_offset_commit(coordinator, version, txn, group, topics), coordinator, COORDINATOR)
    txn.end(commit=False, version=min(4, txn.coordinator.max_version("EndTxn")) if version < FIRST_TXN_V2 else None)
    return answer


def unknown_topic_name_answers(cluster: Cluster, topic: str, unique: Unique) -> UnknownNameAnswers:
    """A target without transactions raises `NotSupported`."""
    with RawConnector(cluster) as raw:
        tx.require_transactions(raw())
        group = unique("group")
        missing = unique("never-created-topic")
        coordinator = group_coordinator(raw, group)
        low, high = coordinator.broker_versions[coordinator.specs.api(TXN_OFFSET_COMMIT).key]
        exchanges = {f"v{v}": _commit_names(raw, unique, coordinator, v, group, [missing, topic])
                     for v in range(low, min(high, FIRST_TXN_V2) + 1)}
        return UnknownNameAnswers(group, missing, topic, exchanges)


def _classic_member(raw: RawConnector, group: str) -> tuple[str, int, tuple[ObservedExchange, ...]]:
    """A member of a classic group, synced at its second generation."""
    c = group_coordinator(raw, group)
    seen: list[ObservedExchange] = []

    def send(api: str, body: Body, accept: frozenset[int] = frozenset({0})) -> Body:
        v = c.max_version(api)
        ex = settle(lambda: c.exchange(api, v, body), COORDINATOR_TRANSIENT, f"{api} {group}")
        assert isinstance(ex, Exchange)
        seen.append(exchange_record(ex, c, COORDINATOR))
        if ex.response["ErrorCode"] not in accept:
            raise ClusterError(f"{api} of {group}: {errors.describe(ex.response['ErrorCode'])}\n{ex.dump()}")
        return ex.response

    def join(member: str) -> Body:
        return send("JoinGroup", {
            "GroupId": group, "SessionTimeoutMs": 30000, "RebalanceTimeoutMs": 10000, "MemberId": member,
            "GroupInstanceId": None, "ProtocolType": PROTOCOL, "Protocols": [{"Name": PROTOCOL, "Metadata": b""}],
            "Reason": None,
        }, frozenset({0, errors.MEMBER_ID_REQUIRED}))

    def sync(member: str, generation: int) -> None:
        send("SyncGroup", {
            "GroupId": group, "GenerationId": generation, "MemberId": member, "GroupInstanceId": None,
            "ProtocolType": PROTOCOL, "ProtocolName": PROTOCOL,
            "Assignments": [{"MemberId": member, "Assignment": b""}],
        })

    first = join("")
    member = first["MemberId"]
    joined = join(member) if first["ErrorCode"] == errors.MEMBER_ID_REQUIRED else first
    sync(member, joined["GenerationId"])
    # A rejoin of the only member completes a rebalance at once: the generation moves on by one.
    again = join(member)
    sync(member, again["GenerationId"])
    return member, again["GenerationId"], tuple(seen)


def classic_generation_answers(cluster: Cluster, topic: str, unique: Unique) -> ClassicGenerationAnswers:
    with RawConnector(cluster) as raw:
        topic_id = tx.topic_ids(raw(), [topic])[topic]
        group = unique("classic-group")
        member, generation, joins = _classic_member(raw, group)
        stale = _v6_and_v5(raw, unique, topic, topic_id, group, generation - 1, member)
        current = _v6_and_v5(raw, unique, topic, topic_id, group, generation, member)
        return ClassicGenerationAnswers(group, member, generation, joins, stale, current)
