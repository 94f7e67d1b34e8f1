"""KIP-1319 and franz-go (kgo): the TxnOffsetCommit a GroupTransactSession sends, seen through the proxy.

franz-go commits offsets in a transaction only from a GroupTransactSession, a consume-transform-
produce loop as a group member; kcts runs one (harness/clients/go/copier.go) with bootstrap through
the protocol proxy, which records every TxnOffsetCommit. Judged with --go-client.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks import recorded
from harness.checks.kip1319 import (
    assert_client_sends,
    assert_copier_aborted_without_retry,
    assert_failed_topic_named,
    assert_injected,
    assert_offsets_fetched_back,
    assert_only_transient_retries,
    assert_retried_unchanged,
    assert_topic_ids_assigned,
    assert_transaction_outcome,
    assert_visible_to_read_committed,
)
from harness.scenarios import kip1319_clients as clients
from harness.scenarios.kip1319 import RequireV6, Unique

pytestmark = [pytest.mark.kip1319, pytest.mark.client_stack("franz-go"), pytest.mark.client_axis]


@pytest.mark.promise("kip1319.client.sends-v6")
def test_franz_go_commits_consumed_offsets_with_v6(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique,
    report_environment: Callable[[dict[str, str]], None],
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Topic ID resolution": a franz-go
    GroupTransactSession copying 20 records in transactions of at most 5 sends every TxnOffsetCommit
    at v6, keyed by the input topic's ID (retries of transient answers included); the group's
    committed offset is 20 and read_committed sees the 20 copied values, in order."""
    require_v6("franz-go's TxnOffsetCommit v6")
    run = clients.go_copy_20(cluster, topic_factory(), topic_factory(), unique("franz-go-copier"))
    recorded.save("kip1319-franz-go-v6-copy", run)
    report_environment(clients.client_matrix(run, "franz_go"))
    assert_transaction_outcome(run, "copied")
    assert_client_sends(run, 6)
    assert_only_transient_retries(run)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)


@pytest.mark.promise("kip1319.client.negotiates-lower-version")
def test_franz_go_sends_v5_when_the_broker_advertises_v5(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Compatibility > Version negotiation" ("Brokers that do not support v6 negotiate a
    lower version"): with the proxy capping TxnOffsetCommit at v5 in ApiVersions, a franz-go
    GroupTransactSession copying 10 records sends every TxnOffsetCommit at v5, naming its topic; the
    group's committed offset is 10 and read_committed sees the copied values."""
    require_v6("TxnOffsetCommit version negotiation below v6")
    run = clients.go_copy_capped(cluster, topic_factory(), topic_factory(), unique("franz-go-capped"))
    recorded.save("kip1319-franz-go-capped-v5", run)
    assert_injected(run, at_least=1)
    assert_transaction_outcome(run, "copied")
    assert_client_sends(run, 5)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)


@pytest.mark.promise("kip1319.client.retries-unknown-topic-id")
def test_franz_go_retries_unknown_topic_id_then_commits(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Error handling": UNKNOWN_TOPIC_ID is retriable.
    With the proxy answering the first two v6 commits with UNKNOWN_TOPIC_ID (100) for every
    partition, franz-go sends the same v6 request again, in the same transaction, until it is
    accepted; the copy of 10 records completes, OffsetFetch returns the offset, and read_committed
    sees the copied values."""
    require_v6("retry of UNKNOWN_TOPIC_ID on TxnOffsetCommit v6")
    run = clients.go_copy_retrying(cluster, topic_factory(), topic_factory(), unique("franz-go-retry"))
    recorded.save("kip1319-franz-go-retry-unknown-topic-id", run)
    assert_injected(run, exactly=2)
    assert_retried_unchanged(run, later_transactions=True)
    assert_transaction_outcome(run, "copied")
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)


@pytest.mark.promise("kip1319.client.fallback-v5-without-topic-id")
def test_franz_go_falls_back_to_v5_without_a_topic_id(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Fallback": when a topic of the offset map has no
    topic ID (the proxy answers Metadata with the zero ID for the input topic), the client sends v5
    naming the topic, no v6 at all; the copy of 10 records completes and the offset is committed."""
    require_v6("franz-go's v6-to-v5 fallback")
    run = clients.go_copy_without_topic_id(cluster, topic_factory(), topic_factory(), unique("franz-go-no-id"))
    recorded.save("kip1319-franz-go-fallback-v5", run)
    assert_topic_ids_assigned(run)
    assert_injected(run, at_least=1)
    assert_transaction_outcome(run, "copied")
    assert_client_sends(run, 5)
    assert_offsets_fetched_back(run)


@pytest.mark.parametrize("error", ["GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH"],
                         ids=["GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH"])
@pytest.mark.promise("kip1319.client.group-errors-abortable")
def test_franz_go_aborts_on_group_error(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, error: str
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Error handling": GROUP_ID_NOT_FOUND and
    STALE_MEMBER_EPOCH are abortable. With the proxy answering franz-go's first v6 commit with the
    error, that transaction aborts without another TxnOffsetCommit in it; the copier then redoes it,
    and read_committed sees each of the 10 values once (nothing of the aborted transaction)."""
    require_v6(f"{clients.error_label(error)} handling on TxnOffsetCommit v6")
    run = clients.go_copy_group_error(cluster, topic_factory(), topic_factory(), unique("franz-go-abort"), error)
    recorded.save(f"kip1319-franz-go-abort-{error}", run)
    assert_injected(run, exactly=1)
    assert_copier_aborted_without_retry(run)
    assert_transaction_outcome(run, "copied")
    assert_visible_to_read_committed(run)


@pytest.mark.promise("kip1319.client.response-mapped-by-topic-id")
def test_franz_go_maps_a_mixed_answer_to_its_topics_by_id(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Response mapping" ("the handler uses the topic ID
    to name mapping ... to correlate responses back to TopicPartition"): one transaction copies
    records of two topics; the proxy answers its v6 TxnOffsetCommit with UNKNOWN_TOPIC_ID for the
    second topic only. franz-go reports the failure for that topic, by name, and not the other; the
    copy completes. (Whether it retries within the transaction is
    test_franz_go_retries_unknown_topic_id_then_commits.)"""
    require_v6("franz-go's mapping of a mixed TxnOffsetCommit v6 answer")
    first, second, sink = topic_factory(), topic_factory(), topic_factory()
    run = clients.go_copy_mixed_outcome(cluster, first, second, sink, unique("franz-go-mixed"))
    recorded.save("kip1319-franz-go-mixed-outcome", run)
    assert_injected(run, exactly=1)
    assert_failed_topic_named(run, second, first)
    assert_transaction_outcome(run, "copied")
    assert_offsets_fetched_back(run)
