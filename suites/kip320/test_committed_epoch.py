"""KIP-320 committed leader epochs: OffsetCommit and TxnOffsetCommit store it, OffsetFetch returns it."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from fixtures.topics import RunNames, TopicFactory
from harness.checks import recorded
from harness.checks.committed_offsets import assert_commits_kept
from harness.clients import raw as rr
from harness.protocol import errors
from harness.protocol.client import RawClient

pytestmark = pytest.mark.kip320

FIRST_WITH_EPOCH = {"OffsetCommit": 6, "TxnOffsetCommit": 2, "OffsetFetch": 5}
TV2_TXN_OFFSET_COMMIT = 5  # KIP-890: from v5 the group coordinator adds itself to the transaction


def _txn_commit(
    raw: rr.RawConnector, any_broker: RawClient, version: int, txn_id: str, group: str, gcoord: RawClient,
    topic: str, tid: uuid.UUID, offset: int, epoch: int,
) -> int:
    """Commit (offset, epoch) in a transaction with TxnOffsetCommit `version`, then commit the
    transaction; the TxnOffsetCommit partition error code."""
    tcoord = raw(rr.coordinator(any_broker, txn_id, 1))
    init = rr.retry_while(
        lambda: tcoord.send("InitProducerId", tcoord.max_version("InitProducerId"),
                            {"TransactionalId": txn_id, "TransactionTimeoutMs": 60000}),
        rr.COORDINATOR_BUSY | {errors.CONCURRENT_TRANSACTIONS}, "InitProducerId",
    )
    assert init["ErrorCode"] == 0, f"InitProducerId: {errors.describe(init['ErrorCode'])}"
    producer = {"TransactionalId": txn_id, "ProducerId": init["ProducerId"], "ProducerEpoch": init["ProducerEpoch"]}
    # Before KIP-890's v5 the producer adds the group to its transaction itself, and ends it at v4.
    end_version = tcoord.max_version("EndTxn") if version >= TV2_TXN_OFFSET_COMMIT else min(4, tcoord.max_version(
        "EndTxn"))
    if version < TV2_TXN_OFFSET_COMMIT:
        added = rr.retry_while(
            lambda: tcoord.send("AddOffsetsToTxn", min(3, tcoord.max_version("AddOffsetsToTxn")),
                                {**producer, "GroupId": group}),
            rr.COORDINATOR_BUSY | {errors.CONCURRENT_TRANSACTIONS}, "AddOffsetsToTxn",
        )
        assert added["ErrorCode"] == 0, f"AddOffsetsToTxn: {errors.describe(added['ErrorCode'])}"
    key = {"TopicId": tid} if version >= 6 else {"Name": topic}
    part = {"PartitionIndex": 0, "CommittedOffset": offset, "CommittedLeaderEpoch": epoch, "CommittedMetadata": None}
    body = {**producer, "GroupId": group, rr.generation_field(gcoord, "TxnOffsetCommit"): -1, "MemberId": "",
            "GroupInstanceId": None, "Topics": [{**key, "Partitions": [part]}]}
    code = rr.retry_while(
        lambda: {"ErrorCode": gcoord.send("TxnOffsetCommit", version, body)["Topics"][0]["Partitions"][0]["ErrorCode"]},
        rr.COORDINATOR_BUSY | {errors.CONCURRENT_TRANSACTIONS}, f"TxnOffsetCommit v{version}",
    )["ErrorCode"]
    end = tcoord.send("EndTxn", end_version, {**producer, "Committed": code == 0})
    assert end["ErrorCode"] == 0, f"EndTxn v{end_version}: {errors.describe(end['ErrorCode'])}"
    return code


def test_committed_leader_epoch_is_kept_by_every_commit_and_fetch_version(
    topic_factory: TopicFactory, raw: rr.RawConnector, run_names: RunNames
) -> None:
    """Seed 000, "Protocol Changes / OffsetCommit, TxnOffsetCommit, OffsetFetch": the leader epoch
    committed with an offset, by OffsetCommit (v6+) or in a committed transaction by
    TxnOffsetCommit (v2+), is returned by OffsetFetch (v5+) with the offset. Each commit version
    writes its own (offset, epoch); every OffsetFetch version reads it back."""
    topic = topic_factory()
    any_broker = raw(raw.cluster.running_brokers()[0])
    tid = rr.topic_id(any_broker, topic)
    group = run_names.group("kip320-committed-epoch")
    gcoord = raw(rr.coordinator(any_broker, group, 0))
    # Newest first: RequireStable (v7+) waits out a transaction's markers, which land after EndTxn
    # returns; the versions without it then read the settled commit.
    reads = sorted(rr.versions(gcoord, "OffsetFetch", FIRST_WITH_EPOCH["OffsetFetch"]), reverse=True)
    rounds: list[dict[str, Any]] = []

    def read_back(commit: str, code: int, offset: int, epoch: int) -> None:
        assert code == 0, f"{commit} of ({offset}, epoch {epoch}) refused: {errors.describe(code)}"
        for fv in reads:
            rounds.append({"commit": commit, "read": f"OffsetFetch v{fv}", "sent": {"offset": offset, "epoch": epoch},
                           "got": rr.offset_fetch(gcoord, fv, group, topic, tid, 0)})

    for v in rr.versions(gcoord, "OffsetCommit", FIRST_WITH_EPOCH["OffsetCommit"]):
        offset, epoch = 100 + v, 10 + v
        read_back(f"OffsetCommit v{v}", rr.offset_commit(gcoord, v, group, topic, tid, 0, offset, epoch), offset, epoch)
    for v in rr.versions(gcoord, "TxnOffsetCommit", FIRST_WITH_EPOCH["TxnOffsetCommit"]):
        offset, epoch = 200 + v, 30 + v
        txn_id = run_names.transactional_id(f"kip320-committed-epoch-{v}")
        code = _txn_commit(raw, any_broker, v, txn_id, group, gcoord, topic, tid, offset, epoch)
        read_back(f"TxnOffsetCommit v{v}", code, offset, epoch)
    recorded.save("kip320-committed-epoch", {"rounds": rounds})
    assert_commits_kept(rounds)
