"""KIP-1319 in the Java producer: version choice, fallback, retry and abort, observed through the proxy.

The client is the Java producer of the first KIP-1319 release (`kip1319.FIRST_KIP1319_CLIENT`), or
in a Java client-only run the run's own kafka-clients (`--java-clients`), run by small drivers
(harness/clients/java/Kip1319*.java) with bootstrap through the protocol proxy in front of the
target (harness/scenarios/kip1319_clients.py). The proxy records every TxnOffsetCommit exchange;
the checks read that recording, the driver's events, OffsetFetch and a read_committed consumer.
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks import recorded
from harness.checks.kip1319 import (
    assert_aborted_without_retry,
    assert_client_sends,
    assert_injected,
    assert_mixed_answer_retried,
    assert_nothing_visible,
    assert_offsets_fetched_back,
    assert_only_transient_retries,
    assert_retried_unchanged,
    assert_topic_ids_assigned,
    assert_transaction_outcome,
    assert_visible_to_read_committed,
)
from harness.scenarios import kip1319_clients as clients
from harness.scenarios.kip1319 import RequireV6, Unique

# The Java column of the client axis: in a Java client-only run the checks drive the run's
# kafka-clients release (clients.java_release); a release before KIP-1319 is not supported.
pytestmark = [pytest.mark.kip1319, pytest.mark.client_stack("java"), pytest.mark.client_axis]


@pytest.mark.promise("kip1319.client.sends-v6")
def test_java_client_commits_consumed_offsets_with_v6(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Topic ID resolution": a consume-transform-produce
    loop (consumer-protocol group member, sendOffsetsToTransaction with the consumer's group
    metadata, 4 transactions of 5 records) sends every TxnOffsetCommit at v6, keyed by the input
    topic's ID (retries of transient answers included); the group's committed offset is 20 and
    read_committed sees the 20 copied values."""
    require_v6("the Java client's TxnOffsetCommit v6")
    run = clients.java_copy_20(cluster, topic_factory(), topic_factory(), unique("copier"))
    recorded.save("kip1319-java-v6-copy", run)
    assert_transaction_outcome(run, "copied")
    assert_client_sends(run, 6)
    assert_only_transient_retries(run)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)


@pytest.mark.promise("kip1319.client.negotiates-lower-version")
def test_java_client_sends_v5_when_the_broker_advertises_v5(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Compatibility > Version negotiation" ("Brokers that do not support v6 negotiate a
    lower version"): with the proxy capping TxnOffsetCommit at v5 in ApiVersions, the client sends
    v5 (every attempt), naming its topics, and the transaction commits the offsets it was given."""
    require_v6("TxnOffsetCommit version negotiation below v6")
    run = clients.java_commit_capped(cluster, topic_factory(), topic_factory(), unique("capped"))
    recorded.save("kip1319-java-capped-v5", run)
    assert_injected(run, at_least=1)
    assert_transaction_outcome(run, "committed")
    assert_client_sends(run, 5)
    assert_offsets_fetched_back(run)


@pytest.mark.promise("kip1319.client.fallback-v5-without-topic-id")
def test_java_client_falls_back_to_v5_for_the_whole_request_without_a_topic_id(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Fallback": when any topic of the offset map has
    no topic ID (the proxy answers Metadata with the zero ID for one of two topics), the client
    sends v5 for the whole request: every TxnOffsetCommit is v5 and names both topics, no v6 at all;
    the transaction commits both offsets."""
    require_v6("the Java client's v6-to-v5 fallback")
    with_id, without_id, sink = topic_factory(), topic_factory(), topic_factory()
    run = clients.java_commit_without_topic_id(cluster, with_id, without_id, sink, unique("fallback"))
    recorded.save("kip1319-java-fallback-v5", run)
    assert_topic_ids_assigned(run)
    assert_injected(run, at_least=1)
    assert_transaction_outcome(run, "committed")
    assert_client_sends(run, 5)
    assert_offsets_fetched_back(run)


@pytest.mark.promise("kip1319.client.retries-unknown-topic-id")
def test_java_client_retries_unknown_topic_id_then_commits(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Error handling": UNKNOWN_TOPIC_ID is retriable.
    With the proxy answering the first two v6 commits with UNKNOWN_TOPIC_ID (100) for every
    partition, the client sends the same v6 request again until it is accepted,
    the transaction commits, OffsetFetch returns the offsets and epochs it was given, and
    read_committed sees the transaction's records."""
    require_v6("retry of UNKNOWN_TOPIC_ID on TxnOffsetCommit v6")
    first, second, sink = topic_factory(), topic_factory(), topic_factory()
    run = clients.java_commit_retrying(cluster, first, second, sink, unique("retry"))
    recorded.save("kip1319-java-retry-unknown-topic-id", run)
    assert_transaction_outcome(run, "committed")
    assert_injected(run, exactly=2)
    assert_retried_unchanged(run)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)


@pytest.mark.promise("kip1319.client.response-mapped-by-topic-id", "kip1319.client.retries-unknown-topic-id")
def test_java_client_retries_a_mixed_answer_until_the_failed_topic_commits(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Response mapping" ("the handler uses the topic ID
    to name mapping ... to correlate responses back to TopicPartition") and "Error handling" (the
    failed partition "stays in pendingTxnOffsetCommits and the handler re-enqueues the request"):
    with the proxy answering the first two v6 commits with UNKNOWN_TOPIC_ID for one of the two
    topics only, the client re-enqueues the request (the committed topic may come again, unchanged)
    until the failed topic is accepted, the transaction commits, and OffsetFetch returns both
    topics' offsets and epochs."""
    require_v6("retry of a mixed TxnOffsetCommit v6 answer")
    first, second, sink = topic_factory(), topic_factory(), topic_factory()
    run = clients.java_commit_mixed_outcome(cluster, first, second, sink, unique("mixed"))
    recorded.save("kip1319-java-mixed-outcome", run)
    second_id = next(a["topic_id"] for a in run.asked if a["topic"] == second)
    assert_transaction_outcome(run, "committed")
    assert_injected(run, exactly=2)
    assert_mixed_answer_retried(run, second_id)
    assert_offsets_fetched_back(run)


@pytest.mark.parametrize("error", ["GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH"],
                         ids=["GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH"])
@pytest.mark.promise("kip1319.client.group-errors-abortable")
def test_java_client_aborts_on_group_error(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, error: str
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Error handling": GROUP_ID_NOT_FOUND and
    STALE_MEMBER_EPOCH are abortable. With the proxy answering the first v6 commit with the error,
    the client does not retry it (one TxnOffsetCommit), sendOffsetsToTransaction fails, the
    application aborts, and nothing of the transaction becomes visible: read_committed sees none
    of its records and the group has no committed offset."""
    require_v6(f"{clients.error_label(error)} handling on TxnOffsetCommit v6")
    run = clients.java_commit_group_error(cluster, topic_factory(), topic_factory(), unique("abort"), error)
    recorded.save(f"kip1319-java-abort-{error}", run)
    assert_injected(run, exactly=1)
    assert_aborted_without_retry(run)
    assert_nothing_visible(run)
