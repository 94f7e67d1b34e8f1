"""Transactions spoken on the wire, one request each (harness.clients.transactions), and what the
broker answers about them: a read_committed Fetch, and the offsets an aborted transaction leaves.

`read_committed_log`, on a 1-partition topic, through the partition's leader:
1. 2 plain records (offsets 0-1);
2. transaction A (its own transactional id): AddPartitionsToTxn, 3 records, EndTxn abort; the scene
   waits until A's ABORT marker is in the log, so that what follows lands after it;
3. transaction B: AddPartitionsToTxn, 3 records, left open;
4. 2 plain records after B's;
5. Fetch from offset 0 at every version from v4 (the first with IsolationLevel, LastStableOffset and
   AbortedTransactions), read_committed (1) and read_uncommitted (0); then B is aborted.
The producer ids and the first offsets come from InitProducerId and the Produce answers, not from
the Fetch answers being judged. Each transaction takes the pre-KIP-890 path (the producer adds its
partitions, EndTxn v4 at most), which every broker with transactions speaks.

`aborted_offset_commits`: a plain OffsetCommit sets a baseline; then, at each TxnOffsetCommit
version the group coordinator advertises, a transaction commits another offset and is aborted,
and every OffsetFetch version (from v1) reads the group back; last, a committed transaction at
the top version shows that the coordinator keeps a transactional commit at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.cluster.base import Cluster
from harness.errors import TargetRefused
from harness.histories.offset_commits import CommitRead, SentCommit
from harness.histories.transactions_on_the_wire import (
    AbortedCommits,
    BaselineCommit,
    IsolatedFetch,
    ProducedRange,
    ReadCommittedLog,
    TxnCommitRound,
    TxnRead,
)
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.exceptions import CorruptRecordError
from harness.protocol.records import encode_batch, parse_batches
from harness.protocol.sentinels import NO_EPOCH
from harness.scenarios.premises import require_transactions
from harness.waiting import Owed, wait_until

TV1_PRODUCE = 11  # the last Produce version before KIP-890's implicit AddPartitionsToTxn (v12)
TV1_END_TXN = 4  # the last EndTxn before KIP-890's Transaction V2
TV2_TXN_OFFSET_COMMIT = 5  # KIP-890: from v5 the group coordinator adds itself to the transaction
FIRST_WITH_ISOLATION = 4  # Fetch v4 (KIP-98): IsolationLevel, LastStableOffset, AbortedTransactions
READ_COMMITTED, READ_UNCOMMITTED = 1, 0
RECORDS = 3


def _produce(client: RawClient, topic: str, tid: uuid.UUID, tag: str, n: int,
             txn: tx.Transaction | None = None) -> ProducedRange:
    """`n` records acknowledged by all replicas, transactional if `txn`."""
    batch = encode_batch(
        [f"{tag}-{i}".encode() for i in range(n)],
        transactional=txn is not None,
        **({"producer_id": txn.producer_id, "producer_epoch": txn.producer_epoch, "base_sequence": 0} if txn else {}),
    )
    v = min(TV1_PRODUCE, client.max_version("Produce"))
    ex = rr.produce(client, v, topic, tid, 0, batch, acks=-1, transactional_id=txn.transactional_id if txn else None)
    p = ex.response["Responses"][0]["PartitionResponses"][0]
    if p["ErrorCode"]:
        raise TargetRefused(f"Produce v{v} of '{tag}' ({n} records{', transactional' if txn else ''}) to {topic}: "
                            f"{errors.describe(p['ErrorCode'])}")
    return ProducedRange(p["BaseOffset"], p["BaseOffset"] + n - 1, txn.producer_id if txn else -1)


def read_committed_log(cluster: Cluster, topic: str, transactional_id: Callable[[str], str]) -> ReadCommittedLog:
    # "Not supported" where the target has no transactions; a FAIL on a release known to have them.
    require_transactions(cluster)
    with rr.RawConnector(cluster) as raw:
        p = rr.partition_metadata(raw(cluster.state.running_brokers()[0]), topic)
        client = raw(p["LeaderId"])
        tid = rr.topic_id(client, topic)
        before = _produce(client, topic, tid, "before", 2)

        # The transactions' steps are setup, sent again after a timeout under load (transactions.begin).
        a = tx.begin(raw, transactional_id("read-committed-aborted"), reconnect=True)
        a.add_partitions(topic, [0])
        aborted = _produce(client, topic, tid, "aborted", RECORDS, a)
        a.end(False, min(TV1_END_TXN, a.coordinator.max_version("EndTxn")))

        # Its own connection, made again after an attempt that timed out under load (which closes it):
        # retried on the closed one, the wait would fail until its deadline.
        reader = raw(p["LeaderId"], reconnect=True)

        def abort_marker_written() -> bool:
            got = rr.fetch(reader, reader.max_version("Fetch"), topic, tid, 0, aborted.last + 1)
            try:
                batches = parse_batches(got["Records"])
            except CorruptRecordError as exc:
                # A batch that fails its own CRC will not mend (librdkafka's mock writes its markers
                # with CRC 0): the scene's log is the target's to write right.
                raise TargetRefused(f"the target wrote {topic}-0 with a batch kcts cannot read: {exc}") from exc
            return any(b.control_type() == "ABORT" and b.producer_id == a.producer_id for b in batches)

        # The coordinator writes the marker after EndTxn returns; B must start after it.
        wait_until(abort_marker_written, 30, lambda: f"no ABORT marker of producer {a.producer_id} in {topic}-0 "
                                                      f"after offset {aborted.last}", owed=Owed.PREMISE)
        b = tx.begin(raw, transactional_id("read-committed-open"), reconnect=True)
        b.add_partitions(topic, [0])
        opened = _produce(client, topic, tid, "open", RECORDS, b)
        after = _produce(client, topic, tid, "after", 2)
        try:
            answers = [
                IsolatedFetch(v, iso, rr.fetch(client, v, topic, tid, 0, 0, current_epoch=NO_EPOCH, isolation=iso))
                for v in rr.versions(client, "Fetch", FIRST_WITH_ISOLATION)
                for iso in (READ_COMMITTED, READ_UNCOMMITTED)
            ]
        finally:
            # Nothing left open past the module: an open transaction holds the partition's LSO.
            b.end(False, min(TV1_END_TXN, b.coordinator.max_version("EndTxn")))
        return ReadCommittedLog(topic, p["LeaderId"], before, aborted, opened, after, after.last + 1, answers)


def read_commit(client: RawClient, version: int, group: str, topic: str, tid: uuid.UUID) -> CommitRead:
    """Partition 0's commit at any OffsetFetch version from v1 (epoch None below v5, which has no
    CommittedLeaderEpoch)."""
    resp = tx.offset_fetch(client, version, group, topic, tid, [0]).response
    top = resp["Groups"][0] if version >= 8 else resp
    p = top["Topics"][0]["Partitions"][0] if top["Topics"] else {}
    return CommitRead(p.get("CommittedOffset"), p.get("CommittedLeaderEpoch"),
                      p.get("ErrorCode", 0) or top.get("ErrorCode", 0), p.get("Metadata"))


def _txn_round(raw: rr.RawConnector, gcoord: RawClient, version: int, txn_id: str, group: str, topic: str,
               tid: uuid.UUID, sent: SentCommit, commit: bool, reads: list[int]) -> TxnCommitRound:
    txn = tx.begin(raw, txn_id, reconnect=True)  # its steps are setup: sent again after a timeout
    # Before KIP-890's v5 the producer adds the group to its transaction itself, and ends it at v4.
    legacy = version < TV2_TXN_OFFSET_COMMIT
    if legacy:
        txn.add_group(group)
    key = {"TopicId": tid} if version >= 6 else {"Name": topic}
    part = tx.partition(0, sent.offset, sent.epoch, sent.metadata)
    # UNKNOWN_TOPIC_ID or UNKNOWN_TOPIC_OR_PARTITION for this topic, which exists, is asked again as a
    # client retries it (KIP-1319 "Producer-Side": "treated as a retriable error"); what persists stays.
    ex, _ = tx.txn_offset_commit_settled(gcoord, version, txn, group, [{**key, "Partitions": [part]}],
                                         lambda _topic, _partition, code: code in tx.TOPIC_RETRIABLE)
    code = ex.response["Topics"][0]["Partitions"][0]["ErrorCode"]
    txn.end(commit, min(TV1_END_TXN, txn.coordinator.max_version("EndTxn")) if legacy else None)
    reads_after = [TxnRead(fv, read_commit(gcoord, fv, group, topic, tid)) for fv in reads]
    return TxnCommitRound(version, sent, code, reads_after)


def aborted_offset_commits(cluster: Cluster, topic: str, group: str,
                           transactional_id: Callable[[str], str]) -> AbortedCommits:
    require_transactions(cluster)
    with rr.RawConnector(cluster) as raw:
        # Reconnecting: the coordinator lookup (FindCoordinator) is asked again after a timeout.
        any_broker = raw(cluster.state.running_brokers()[0], reconnect=True)
        tid = rr.topic_id(any_broker, topic)
        # Reconnecting for the baseline commit, a premise sent again after a timeout; the judged
        # TxnOffsetCommits and reads on it are not.
        gcoord = raw(tx.coordinator_id(any_broker, group, tx.GROUP_KEY), reconnect=True)
        # Newest first: RequireStable (v7+) waits out an ended transaction's markers.
        reads = sorted(rr.versions(gcoord, "OffsetFetch", 1), reverse=True)
        # The baseline at the leader's own epoch, the one a consumer's last record carries: every broker
        # takes it (librdkafka's mock refuses any other, which the committed-epoch checks judge).
        epoch = rr.partition_metadata(any_broker, topic)["LeaderEpoch"]
        sent = SentCommit(10, epoch, "kcts baseline")
        code = rr.offset_commit(gcoord, gcoord.max_version("OffsetCommit"), group, topic, tid, 0, sent.offset,
                                sent.epoch, sent.metadata, resend=True)
        baseline = BaselineCommit(sent, code, read_commit(gcoord, reads[0], group, topic, tid))
        rounds = []
        for v in rr.versions(gcoord, "TxnOffsetCommit", 0):
            # CommittedLeaderEpoch is v2+: below it the field is absent and must stay at its default.
            sent = SentCommit(100 + v, 20 + v if v >= 2 else NO_EPOCH, f"kcts aborted v{v}")
            rounds.append(_txn_round(raw, gcoord, v, transactional_id(f"aborted-commit-{v}"), group, topic, tid, sent,
                                     False, reads))
        top = gcoord.max_version("TxnOffsetCommit")
        sent = SentCommit(500, 9, "kcts committed")
        committed = _txn_round(raw, gcoord, top, transactional_id("committed-commit"), group, topic, tid, sent, True,
                               reads[:1])
        return AbortedCommits(topic, group, baseline, rounds, committed)
