"""Transactions read on the wire: what a read_committed Fetch owes after an aborted and beside an open
transaction, and the offsets an aborted transaction leaves. One scene each per module, spoken with
the raw client (see harness.scenarios.read_committed)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.checks.read_committed import (
    assert_aborted_commit_leaves_offsets_unchanged,
    assert_read_committed_hides_aborted_and_open,
)
from harness.histories import store
from harness.histories.transactions_on_the_wire import AbortedCommits
from harness.scenarios.read_committed import aborted_offset_commits, read_committed_log

pytestmark = pytest.mark.kip1094


@pytest.fixture(scope="module")
def wire_topic(request: pytest.FixtureRequest) -> str:
    return module_topic(request, "wire-transactions", 3)


@pytest.mark.promise("kip1094.read-committed-hides-aborted-and-open")
def test_read_committed_fetch_names_the_aborted_transaction_and_stops_at_the_open_one(
    cluster: Cluster, run_names: RunNames, wire_topic: str
) -> None:
    """The KIP-1094 guide, "Control Records vs Data Records": a transaction's messages are "either fully
    committed or aborted", and control records are "not directly visible to applications"; what a
    read_committed consumer relies on for that is KIP-98's Fetch v4 answer (KIP-320's Fetch keeps its
    IsolationLevel). At every Fetch version from v4, a read_committed Fetch from offset 0 lists the
    aborted transaction (its producer id and first offset, from InitProducerId and Produce), gives
    LastStableOffset = the first offset of the open transaction below a HighWatermark past it, and
    returns no batch at or past the LastStableOffset."""
    log = read_committed_log(cluster, wire_topic, run_names.transactional_id)
    store.save("kip1094-read-committed-wire", log)
    assert_read_committed_hides_aborted_and_open(log)


@pytest.fixture(scope="module")
def aborted_commits(cluster: Cluster, run_names: RunNames, wire_topic: str) -> AbortedCommits:
    group = run_names.group("kip1094-aborted-commits")
    return aborted_offset_commits(cluster, wire_topic, group, run_names.transactional_id)


@pytest.mark.promise("kip1094.aborted-transaction-commits-no-offset")
def test_an_aborted_transaction_commits_no_offset(aborted_commits: AbortedCommits) -> None:
    """The KIP-1094 guide, "Committing Specific Offsets": "When a transaction is aborted, the
    corresponding offsets are not committed either." After a plain commit, a TxnOffsetCommit in a
    transaction that is then aborted, at every TxnOffsetCommit version the coordinator advertises
    (from v0, the pre-KIP-890 path below v5), leaves every OffsetFetch version (from v1) reading the
    plain commit's offset and epoch; a committed transaction at the top version does commit."""
    store.save("kip1094-aborted-commits", aborted_commits)
    assert_aborted_commit_leaves_offsets_unchanged(aborted_commits)
