"""KIP-1319 in the clients: which TxnOffsetCommit version a producer sends, for every client stack judged.

Each check drives one situation (harness/scenarios/kip1319_clients.py) on each stack that can be
driven through it (`clients.STACKS`): the Java producer (the first KIP-1319 release, or in a Java
client-only run the run's own kafka-clients), franz-go with --go-client, and librdkafka of the run's
confluent-kafka release, with bootstrap through the protocol proxy, which records every
TxnOffsetCommit and applies the situation's fault. librdkafka sends v3 at most: the first check
states that as its known gap; the situations that need a v6 from it leave it out.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.client_premises import require_commits_accepted, require_topic_ids
from harness.checks.kip1319 import (
    OlderVersionSent,
    assert_client_sends,
    assert_client_sends_v6,
    assert_injected,
    assert_metadata_wait_bounded,
    assert_offsets_fetched_back,
    assert_only_transient_retries,
    assert_transaction_outcome,
    assert_visible_to_read_committed,
)
from harness.histories import store
from harness.scenarios import kip1319_clients as clients
from harness.scenarios.kip1319 import RequireV6, Unique
from harness.verdicts import known_gap, require_scene

pytestmark = [pytest.mark.kip1319, pytest.mark.client_axis]


@pytest.mark.parametrize("client", clients.STACKS["copy"])
@pytest.mark.promise("kip1319.client.sends-v6")
def test_client_commits_consumed_offsets_with_v6(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, client: str,
    report_environment: Callable[[dict[str, str]], None],
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Topic ID resolution" and "Compatibility > Version
    negotiation": a client committing the offsets it consumed in a transaction, against a broker that
    advertises v6, sends every TxnOffsetCommit at v6 keyed by the input topic's ID (retries of
    transient answers included); the transactions commit, OffsetFetch returns the offsets and
    read_committed sees what they wrote. Premise: the target has a topic ID for the input topic (else
    "target refused the premise": without one a client falls back to v5). The Java and franz-go
    copiers copy 20 records in transactions of at most 5; librdkafka commits one offset with one
    record. The versions the client used go to the client matrix (junit testsuite properties and the
    Allure environment)."""
    require_v6("a client's TxnOffsetCommit v6")
    run = clients.copy(cluster, client, topic_factory, unique(f"{client}-copy"))
    store.save(f"kip1319-{client}-v6-copy", run)
    report_environment(clients.client_matrix(run, client))
    require_topic_ids(run)
    require_commits_accepted(run)
    assert_transaction_outcome(run, run.completed)
    assert_visible_to_read_committed(run)
    try:
        assert_client_sends_v6(run)
    except OlderVersionSent as exc:
        if client in clients.GAPS:
            known_gap(clients.GAPS[client], clients.gap_version(client, run)).found(exc)
        raise
    assert_client_sends(run, 6)
    assert_only_transient_retries(run)
    assert_offsets_fetched_back(run)


@pytest.mark.parametrize("client", clients.STACKS["capped"])
@pytest.mark.promise("kip1319.client.negotiates-lower-version")
def test_client_sends_v5_when_the_broker_advertises_v5(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, client: str
) -> None:
    """KIP-1319 "Compatibility > Version negotiation" ("Brokers that do not support v6 negotiate a
    lower version"): with the proxy capping TxnOffsetCommit at v5 in ApiVersions, the client sends
    every TxnOffsetCommit at v5, naming its topics; the transaction commits the offsets it was given
    and read_committed sees what it wrote."""
    require_v6("TxnOffsetCommit version negotiation below v6")
    run = clients.capped(cluster, client, topic_factory, unique(f"{client}-capped"))
    store.save(f"kip1319-{client}-capped-v5", run)
    assert_injected(run, at_least=1)
    assert_transaction_outcome(run, run.completed)
    assert_client_sends(run, 5)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)


@pytest.mark.parametrize("client", clients.STACKS["without_topic_id"])
@pytest.mark.promise("kip1319.client.fallback-v5-without-topic-id")
def test_client_falls_back_to_v5_for_the_whole_request_without_a_topic_id(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, client: str
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Fallback": when any topic of the offset map has
    no topic ID (the proxy answers Metadata with the zero ID for it), the client sends v5 for the
    whole request: every TxnOffsetCommit is v5 and names every topic, no v6 at all; the transaction
    commits the offsets and read_committed sees what it wrote."""
    require_v6("the client's v6-to-v5 fallback")
    run = clients.without_topic_id(cluster, client, topic_factory, unique(f"{client}-fallback"))
    store.save(f"kip1319-{client}-fallback-v5", run)
    require_topic_ids(run)
    assert_injected(run, at_least=1)
    assert_transaction_outcome(run, run.completed)
    assert_client_sends(run, 5)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)


@pytest.mark.parametrize("client", clients.STACKS["bounded_wait"])
@pytest.mark.promise("kip1319.client.topic-id-wait-bounded")
def test_client_waits_for_a_topic_id_no_longer_than_max_block_ms(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique, client: str
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Topic ID resolution": when sendOffsetsToTransaction
    is called and the broker supports v6, the producer "waits for a refresh (bounded by max.block.ms)"
    of the offset map's topics before building the request. The producer (max.block.ms 5000) commits
    the offset of a topic it has no metadata for while the proxy answers every Metadata of that topic
    with the zero topic ID. Timed by the driver around the call, sendOffsetsToTransaction ends within
    max.block.ms + 1 s (harness.checks.kip1319.BLOCK_MARGIN_MS); then it sends v5 for the whole
    request ("Fallback") and the transaction commits, or it fails with max.block.ms's
    TimeoutException. A run in which no Metadata answer had the ID withheld judged nothing."""
    require_v6("the bounded wait for topic IDs before TxnOffsetCommit v6")
    run = clients.bounded_wait(cluster, client, topic_factory, unique(f"{client}-bounded-wait"))
    store.save(f"kip1319-{client}-bounded-metadata-wait", run)
    require_scene(run.injected is not None and run.injected.fired >= 1,
                  f"the proxy withheld no topic ID from a Metadata answer to the producer: {run.proxy}")
    require_topic_ids(run)
    assert_metadata_wait_bounded(run)
    if run.outcome() == "committed":
        assert_offsets_fetched_back(run)
