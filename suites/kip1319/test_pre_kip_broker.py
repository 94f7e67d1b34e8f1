"""KIP-1319 against a broker without it: what the Java client negotiates and what the broker persists.

The broker is Apache Kafka 4.3.1 (conftest.PRE_KIP_VERSION), one broker started for this module,
or the session's cluster when the run targets that release.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Producer

from harness.clients.admin import QUIET
from harness.clients.raw import RawConnector
from harness.cluster.base import Cluster
from harness.kafka.dist import KafkaDistribution
from harness.protocol.types import ZERO_UUID
from harness.proxy import Proxy
from suites.kip1319 import transactions as tx
from suites.kip1319.conftest import PRE_KIP_VERSION, make_topic
from suites.kip1319.java_clients import run_copier
from suites.kip1319.offsets_log import persisted_offsets
from suites.kip1319.read_committed import committed_values
from suites.kip1319.target import advertised, describe_advertised

pytestmark = pytest.mark.kip1319


@pytest.fixture
def old(pre_kip_cluster: Cluster) -> Iterator[RawConnector]:
    connector = RawConnector(pre_kip_cluster)
    yield connector
    connector.close()


def test_pre_kip_broker_advertises_txn_offset_commit_v5(old: RawConnector) -> None:
    """KIP-1319 "Public Interfaces" (validVersions 0-6 is the change): Apache Kafka 4.3.1, released
    before the KIP, advertises TxnOffsetCommit up to v5 (Transaction V2, KIP-890) and not v6."""
    client = old()
    found = advertised(client)
    assert found is not None and found[1] == 5, f"Kafka {PRE_KIP_VERSION}: {describe_advertised(client)}"


def test_pre_kip_broker_persists_the_zero_topic_id(old: RawConnector) -> None:
    """KIP-1319 "Compatibility > Rolling upgrades": the OffsetCommitValue v4 topicId tagged field
    is populated with ZERO_UUID by old brokers. A committed v5 TxnOffsetCommit on 4.3.1 writes an
    OffsetCommitValue to __consumer_offsets whose topicId is the zero UUID (decoded with the
    coordinator's record schema), with the committed offset and leader epoch."""
    client = old()
    cluster = old.cluster
    topic = make_topic(cluster, "pre-kip-persisted")
    group = f"kcts-pre-kip-{uuid.uuid4().hex[:10]}"
    txn = tx.begin(old, f"kcts-pre-kip-txn-{uuid.uuid4().hex[:10]}")
    version = min(5, client.max_version("TxnOffsetCommit"))
    coordinator = old(tx.find_coordinator(client, group, tx.GROUP_KEY))
    topics = [{"Name": topic, "Partitions": [tx.partition(0, 21, 2)]}]
    ex = tx.txn_offset_commit(coordinator, version, txn, group, topics)
    assert tx.partition_errors(ex) == {(topic, 0): 0}, ex.dump()
    txn.end(commit=True)

    persisted = persisted_offsets(old, group, topic)
    assert 0 in persisted, f"no OffsetCommit record for {group}/{topic}-0; commit:\n{ex.dump()}"
    record = persisted[0]
    assert record.value is not None and (record.value["offset"], record.value["leaderEpoch"]) == (21, 2), record
    assert record.value.get("topicId", ZERO_UUID) == ZERO_UUID, (
        f"OffsetCommitValue v{record.value_version} written by Kafka {PRE_KIP_VERSION}: {record.value}"
    )


def test_java_client_sends_v5_to_a_broker_without_v6(
    pre_kip_cluster: Cluster, old: RawConnector, proxy_for: Callable[[Cluster], Proxy],
    client_dist: KafkaDistribution,
) -> None:
    """KIP-1319 "Compatibility > Backward compatibility": brokers that do not support v6 negotiate
    a lower version. The KIP-1319 Java client, copying 10 records in transactions of 5 as a
    consumer-protocol group member, sends every TxnOffsetCommit to 4.3.1 at v5 naming the topic,
    and the copy commits: the group's offset is 10 and read_committed sees the 10 values."""
    source, sink = make_topic(pre_kip_cluster, "pre-kip-source"), make_topic(pre_kip_cluster, "pre-kip-sink")
    values = [f"old-{i}".encode() for i in range(10)]
    producer = Producer({**pre_kip_cluster.client_config(), **QUIET})
    for v in values:
        producer.produce(source, v, partition=0)
    assert producer.flush(30) == 0
    proxy = proxy_for(pre_kip_cluster)
    group = f"kcts-pre-kip-copier-{uuid.uuid4().hex[:10]}"

    run_copier(client_dist, proxy.bootstrap_servers, source, sink, group, messages=len(values))

    commits = proxy.recording.exchanges("TxnOffsetCommit")
    evidence = f"{describe_advertised(old())}\n{proxy.recording.summary('TxnOffsetCommit')}"
    assert commits and {e.version for e in commits} == {5}, evidence
    assert all([t["Name"] for t in (e.request or {})["Topics"]] == [source] for e in commits), evidence
    topic_id = tx.topic_ids(old(), [source])[source]
    coordinator = old(tx.find_coordinator(old(), group, tx.GROUP_KEY))
    assert tx.committed_offsets(coordinator, group, source, topic_id, [0])[0]["CommittedOffset"] == 10, evidence
    assert committed_values(pre_kip_cluster.client_config(), sink) == values
