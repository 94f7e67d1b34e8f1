"""KIP-1319 in the Java producer: version choice, fallback, retry and abort, observed through the proxy.

The client is the Java producer of the first KIP-1319 release (conftest.CLIENT_VERSION), run by
small drivers (harness/clients/java/Kip1319*.java) with bootstrap through the protocol proxy in
front of the target. The proxy records every TxnOffsetCommit exchange; the assertions read that
recording, the driver's events, OffsetFetch and a read_committed consumer.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import Producer

from fixtures.topics import TopicFactory
from harness.clients.raw import RawConnector
from harness.cluster.base import Cluster
from harness.kafka.dist import KafkaDistribution
from harness.protocol import errors
from harness.protocol.types import ZERO_UUID
from harness.proxy import CapVersion, Exchange, Proxy, ReplaceErrors, StripTopicIds
from suites.kip1319 import transactions as tx
from suites.kip1319.java_clients import Offset, events, outcome, run_copier, run_transaction
from suites.kip1319.read_committed import committed_values
from suites.kip1319.target import require_v6

pytestmark = pytest.mark.kip1319

ProxyFor = Callable[[Cluster], Proxy]
Unique = Callable[[str], str]
TXN_OFFSET_COMMIT = "TxnOffsetCommit"
# Answers the client retries on its own (a transaction still completing, a coordinator moving).
TRANSIENT = {errors.NONE, errors.CONCURRENT_TRANSACTIONS, *tx.COORDINATOR_STARTING}


def _topic_keys(exchange: Exchange) -> list[object]:
    """How a recorded TxnOffsetCommit named its topics: TopicId (v6) or Name (v0-5)."""
    return [t.get("TopicId", t.get("Name")) for t in (exchange.request or {}).get("Topics", [])]


def _recorded(proxy: Proxy) -> str:
    return proxy.recording.dump(TXN_OFFSET_COMMIT) or proxy.recording.summary()


def test_java_client_commits_consumed_offsets_with_v6(
    cluster: Cluster, raw: RawConnector, topic_factory: TopicFactory, proxy_for: ProxyFor,
    client_dist: KafkaDistribution, unique: Unique, producer_factory: Callable[..., Producer],
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Topic ID resolution": a consume-transform-produce
    loop (consumer-protocol group member, sendOffsetsToTransaction with the consumer's group
    metadata, 4 transactions of 5 records) sends every TxnOffsetCommit at v6, keyed by the input
    topic's ID (retries of transient answers included); the group's committed offset is 20 and
    read_committed sees the 20 copied values."""
    require_v6(raw(), "the Java client's TxnOffsetCommit v6")
    source, sink = topic_factory(), topic_factory()
    topic_id = tx.topic_ids(raw(), [source])[source]
    values = [f"copy-{i:02d}".encode() for i in range(20)]
    producer = producer_factory()
    for v in values:
        producer.produce(source, v, partition=0)
    assert producer.flush(30) == 0
    group = unique("copier")
    proxy = proxy_for(cluster)

    run_copier(client_dist, proxy.bootstrap_servers, source, sink, group, messages=20)

    commits = proxy.recording.exchanges(TXN_OFFSET_COMMIT)
    assert commits and {e.version for e in commits} == {6}, f"expected only v6:\n{_recorded(proxy)}"
    assert all(_topic_keys(e) == [topic_id] for e in commits), f"expected TopicId {topic_id}:\n{_recorded(proxy)}"
    answered = [set(e.error_codes) for e in commits]
    assert answered[-1] == {0} and all(a <= TRANSIENT for a in answered), _recorded(proxy)
    coordinator = raw(tx.find_coordinator(raw(), group, tx.GROUP_KEY))
    committed = tx.committed_offsets(coordinator, group, source, topic_id, [0])[0]
    assert committed["CommittedOffset"] == 20, f"group {group} committed {committed}\n{_recorded(proxy)}"
    assert committed_values(cluster.client_config(), sink) == values


def test_java_client_sends_v5_when_the_broker_advertises_v5(
    cluster: Cluster, raw: RawConnector, topic_factory: TopicFactory, proxy_for: ProxyFor,
    client_dist: KafkaDistribution, unique: Unique,
) -> None:
    """KIP-1319 "Compatibility > Version negotiation" ("Brokers that do not support v6 negotiate a
    lower version"): with the proxy capping TxnOffsetCommit at v5 in ApiVersions, the client sends
    v5 (every attempt), naming its topics, and the transaction commits the offsets it was given."""
    require_v6(raw(), "TxnOffsetCommit version negotiation below v6")
    source, sink = topic_factory(), topic_factory()
    proxy = proxy_for(cluster)
    cap = proxy.add(CapVersion(TXN_OFFSET_COMMIT, max_version=5))
    group = unique("capped")

    driver = run_transaction(client_dist, proxy.bootstrap_servers, sink, group, [Offset(source, 0, 11, 0)])

    assert outcome(driver) == "committed", driver.describe()
    assert cap.fired >= 1, f"no ApiVersions response was capped: {proxy.describe()}"
    commits = proxy.recording.exchanges(TXN_OFFSET_COMMIT)
    assert commits and {e.version for e in commits} == {5}, _recorded(proxy)
    assert all(_topic_keys(e) == [source] for e in commits), _recorded(proxy)
    coordinator = raw(tx.find_coordinator(raw(), group, tx.GROUP_KEY))
    topic_id = tx.topic_ids(raw(), [source])[source]
    assert tx.committed_offsets(coordinator, group, source, topic_id, [0])[0]["CommittedOffset"] == 11


def test_java_client_falls_back_to_v5_for_the_whole_request_without_a_topic_id(
    cluster: Cluster, raw: RawConnector, topic_factory: TopicFactory, proxy_for: ProxyFor,
    client_dist: KafkaDistribution, unique: Unique,
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Fallback": when any topic of the offset map has
    no topic ID (the proxy answers Metadata with the zero ID for one of two topics), the client
    sends v5 for the whole request: every TxnOffsetCommit is v5 and names both topics, no v6 at all;
    the transaction commits both offsets."""
    require_v6(raw(), "the Java client's v6-to-v5 fallback")
    with_id, without_id, sink = topic_factory(), topic_factory(), topic_factory()
    proxy = proxy_for(cluster)
    strip = proxy.add(StripTopicIds(topics=frozenset({without_id})))
    group = unique("fallback")

    driver = run_transaction(
        client_dist, proxy.bootstrap_servers, sink, group, [Offset(with_id, 0, 5, 0), Offset(without_id, 0, 7)]
    )

    assert outcome(driver) == "committed", driver.describe()
    assert strip.fired >= 1, f"no Metadata response named {without_id}: {proxy.describe()}"
    commits = proxy.recording.exchanges(TXN_OFFSET_COMMIT)
    assert commits and {e.version for e in commits} == {5}, _recorded(proxy)
    assert all(sorted(map(str, _topic_keys(e))) == sorted([with_id, without_id]) for e in commits), _recorded(proxy)
    coordinator = raw(tx.find_coordinator(raw(), group, tx.GROUP_KEY))
    ids = tx.topic_ids(raw(), [with_id, without_id])
    assert ZERO_UUID not in ids.values()
    got = {t: tx.committed_offsets(coordinator, group, t, ids[t], [0])[0]["CommittedOffset"] for t in ids}
    assert got == {with_id: 5, without_id: 7}, f"committed {got}\n{_recorded(proxy)}"


def test_java_client_retries_unknown_topic_id_then_commits(
    cluster: Cluster, raw: RawConnector, topic_factory: TopicFactory, proxy_for: ProxyFor,
    client_dist: KafkaDistribution, unique: Unique,
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Error handling": UNKNOWN_TOPIC_ID is retriable.
    With the proxy answering the first two v6 commits with UNKNOWN_TOPIC_ID (100) for every
    partition, the client sends the same v6 request again until it is accepted,
    the transaction commits, OffsetFetch returns the offsets and epochs it was given, and
    read_committed sees the transaction's records."""
    require_v6(raw(), "retry of UNKNOWN_TOPIC_ID on TxnOffsetCommit v6")
    first, second, sink = topic_factory(), topic_factory(), topic_factory()
    proxy = proxy_for(cluster)
    inject = proxy.add(ReplaceErrors(TXN_OFFSET_COMMIT, error=errors.UNKNOWN_TOPIC_ID, count=2, versions=(6, 6)))
    group = unique("retry")

    driver = run_transaction(
        client_dist, proxy.bootstrap_servers, sink, group, [Offset(first, 0, 5, 0), Offset(second, 0, 9, 0)]
    )

    assert outcome(driver) == "committed", driver.describe()
    commits = proxy.recording.exchanges(TXN_OFFSET_COMMIT)
    assert inject.fired == 2, _recorded(proxy)
    answers = [(e.version, set(e.error_codes)) for e in commits]
    assert answers[:2] == [(6, {errors.UNKNOWN_TOPIC_ID})] * 2 and answers[-1] == (6, {0}), _recorded(proxy)
    assert all(v == 6 and codes <= TRANSIENT for v, codes in answers[2:]), _recorded(proxy)
    keys = {tuple(map(str, _topic_keys(e))) for e in commits}
    assert len(keys) == 1, f"the retries changed the request:\n{_recorded(proxy)}"
    coordinator = raw(tx.find_coordinator(raw(), group, tx.GROUP_KEY))
    ids = tx.topic_ids(raw(), [first, second])
    got = {
        t: (e["CommittedOffset"], e["CommittedLeaderEpoch"])
        for t in ids
        for e in tx.committed_offsets(coordinator, group, t, ids[t], [0]).values()
    }
    assert got == {first: (5, 0), second: (9, 0)}, f"committed {got}\n{_recorded(proxy)}"
    assert committed_values(cluster.client_config(), sink) == [f"txn-value-{i}".encode() for i in range(3)]


@pytest.mark.parametrize("error", [errors.GROUP_ID_NOT_FOUND, errors.STALE_MEMBER_EPOCH],
                         ids=["GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH"])
def test_java_client_aborts_on_group_error(
    cluster: Cluster, raw: RawConnector, topic_factory: TopicFactory, proxy_for: ProxyFor,
    client_dist: KafkaDistribution, unique: Unique, error: int,
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Error handling": GROUP_ID_NOT_FOUND and
    STALE_MEMBER_EPOCH are abortable. With the proxy answering the first v6 commit with the error,
    the client does not retry it (one TxnOffsetCommit), sendOffsetsToTransaction fails, the
    application aborts, and nothing of the transaction becomes visible: read_committed sees none
    of its records and the group has no committed offset."""
    require_v6(raw(), f"{errors.describe(error)} handling on TxnOffsetCommit v6")
    source, sink = topic_factory(), topic_factory()
    proxy = proxy_for(cluster)
    inject = proxy.add(ReplaceErrors(TXN_OFFSET_COMMIT, error=error, count=1, versions=(6, 6)))
    group = unique("abort")

    driver = run_transaction(client_dist, proxy.bootstrap_servers, sink, group, [Offset(source, 0, 5, 0)])

    assert outcome(driver) == "aborted", f"{driver.describe()}\n{_recorded(proxy)}"
    (failure,) = events(driver, "transaction_failed")
    assert inject.fired == 1 and [e.version for e in proxy.recording.exchanges(TXN_OFFSET_COMMIT)] == [6], (
        f"an abortable error must not be retried:\n{_recorded(proxy)}"
    )
    produced = events(driver, "produced")
    assert produced and produced[0]["offsets"], driver.describe()
    visible = committed_values(cluster.client_config(), sink)
    assert visible == [], f"aborted records visible to read_committed: {visible}; client said {failure}"
    coordinator = raw(tx.find_coordinator(raw(), group, tx.GROUP_KEY))
    topic_id = tx.topic_ids(raw(), [source])[source]
    committed = tx.committed_offsets(coordinator, group, source, topic_id, [0]).get(0, {"CommittedOffset": -1})
    assert committed["CommittedOffset"] == -1, f"aborted offset commit visible: {committed}; client said {failure}"
