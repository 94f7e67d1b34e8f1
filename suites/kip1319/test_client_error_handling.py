"""KIP-1319 in the clients: what a producer does with the errors of a v6 TxnOffsetCommit, for every stack judged.

Each check drives one situation (harness/scenarios/kip1319_clients.py) on each stack that can be
driven through it (`clients.STACKS`): the Java producer (Kip1319Txn, one transaction) and franz-go
with --go-client (a GroupTransactSession copier), with bootstrap through the protocol proxy, which
answers the v6 commits with the situation's error. Where the two kinds of driver show the promise
differently (a copier redoes an aborted transaction), the check reads which kind made the run. A
client sends v6 only with the topic IDs its Metadata gives: where the target has none, every check
is "target refused the premise" (harness.checks.client_premises.require_topic_ids).
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.client_premises import require_commits_accepted, require_topic_ids
from harness.checks.kip1319 import (
    assert_group_error_aborted,
    assert_injected,
    assert_mixed_answer_mapped,
    assert_offsets_fetched_back,
    assert_retried_unchanged,
    assert_transaction_outcome,
    assert_visible_to_read_committed,
)
from harness.histories import store
from harness.scenarios import kip1319_clients as clients
from harness.scenarios.kip1319 import RequireV6, Unique

pytestmark = [pytest.mark.kip1319, pytest.mark.client_axis]

GROUP_ERRORS = ["GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH"]
# The Java producer keeps the failed partition pending and re-enqueues the request within the
# transaction: its mixed answer also shows the retry of UNKNOWN_TOPIC_ID (franz-go's does not retry).
MIXED = [pytest.param(c, marks=pytest.mark.promise("kip1319.client.retries-unknown-topic-id"))
         if c == clients.JAVA else c for c in clients.STACKS["mixed"]]


@pytest.mark.parametrize("client", clients.STACKS["retrying"])
@pytest.mark.promise("kip1319.client.retries-unknown-topic-id")
def test_client_retries_unknown_topic_id_then_commits(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, client: str
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Error handling": UNKNOWN_TOPIC_ID is retriable.
    With the proxy answering the first two v6 commits with UNKNOWN_TOPIC_ID (100) for every
    partition, the client sends the same v6 request again, in the same transaction, until it is
    accepted; the transaction commits, OffsetFetch returns the offsets and epochs it was given, and
    read_committed sees what it wrote."""
    require_v6("retry of UNKNOWN_TOPIC_ID on TxnOffsetCommit v6")
    run = clients.retrying(cluster, client, topic_factory, unique(f"{client}-retry"))
    store.save(f"kip1319-{client}-retry-unknown-topic-id", run)
    require_topic_ids(run)
    require_commits_accepted(run)
    assert_injected(run, exactly=2)
    assert_retried_unchanged(run, later_transactions=run.copier)
    assert_transaction_outcome(run, run.completed)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)


@pytest.mark.parametrize("client", MIXED)
@pytest.mark.promise("kip1319.client.response-mapped-by-topic-id")
def test_client_maps_a_mixed_answer_to_its_topics_by_id(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, client: str
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Response mapping" ("the handler uses the topic ID
    to name mapping ... to correlate responses back to TopicPartition"): one transaction commits
    offsets of two topics; the proxy answers its v6 TxnOffsetCommit with UNKNOWN_TOPIC_ID for the
    second topic only. The client correlates each answer with its topic: a producer that retries
    re-enqueues the request (the committed topic may come again, unchanged) until the failed topic is
    accepted ("Error handling": the failed partition "stays in pendingTxnOffsetCommits"); a copier
    that ends the transaction reports the failure for that topic, by name, and not the other. The
    transaction commits in the end and OffsetFetch returns both topics' offsets."""
    require_v6("the mapping of a mixed TxnOffsetCommit v6 answer")
    run = clients.mixed(cluster, client, topic_factory, unique(f"{client}-mixed"))
    store.save(f"kip1319-{client}-mixed-outcome", run)
    require_topic_ids(run)
    require_commits_accepted(run)
    assert_injected(run)
    assert_mixed_answer_mapped(run)
    assert_transaction_outcome(run, run.completed)
    assert_offsets_fetched_back(run)


@pytest.mark.parametrize("error", GROUP_ERRORS)
@pytest.mark.parametrize("client", clients.STACKS["group_error"])
@pytest.mark.promise("kip1319.client.group-errors-abortable")
def test_client_aborts_on_group_error(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, client: str, error: str
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Error handling": GROUP_ID_NOT_FOUND and
    STALE_MEMBER_EPOCH are abortable. With the proxy answering the first v6 commit with the error,
    the client sends no other TxnOffsetCommit in that transaction and the application aborts it;
    nothing of it becomes visible (a copier redoes it, and read_committed sees each value once)."""
    require_v6(f"{clients.error_label(error)} handling on TxnOffsetCommit v6")
    run = clients.group_error(cluster, client, topic_factory, unique(f"{client}-abort"), error)
    store.save(f"kip1319-{client}-abort-{error}", run)
    require_topic_ids(run)
    assert_injected(run, exactly=1)
    assert_group_error_aborted(run)
