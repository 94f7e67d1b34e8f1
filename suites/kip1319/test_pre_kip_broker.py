"""KIP-1319 against a broker without it: what the Java client negotiates and what the broker persists.

The broker is Apache Kafka 4.3.1 (`kip1319.PRE_KIP_RELEASE`), one broker started for this module,
or the session's cluster when the run targets that release.
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks.kip1319 import (
    assert_client_sends,
    assert_commit_accepted,
    assert_offsets_fetched_back,
    assert_persisted_zero_topic_id,
    assert_tops_out_at_v5,
    assert_transaction_outcome,
    assert_visible_to_read_committed,
)
from harness.histories import store
from harness.scenarios import kip1319
from harness.scenarios import kip1319_clients as clients

pytestmark = pytest.mark.kip1319


@pytest.mark.promise("kip1319.old-broker.advertises-v5")
def test_pre_kip_broker_advertises_txn_offset_commit_v5(pre_kip_cluster: Cluster) -> None:
    """KIP-1319 "Public Interfaces" (validVersions 0-6 is the change): Apache Kafka 4.3.1, released
    before the KIP, advertises TxnOffsetCommit up to v5 (Transaction V2, KIP-890) and not v6."""
    advertised = kip1319.advertised(pre_kip_cluster)
    store.save("kip1319-pre-kip-advertised", advertised)
    assert_tops_out_at_v5(advertised, kip1319.PRE_KIP_RELEASE)


@pytest.mark.promise("kip1319.old-broker.zero-topic-id")
def test_pre_kip_broker_persists_the_zero_topic_id(pre_kip_cluster: Cluster) -> None:
    """KIP-1319 "Compatibility > Rolling upgrades": the OffsetCommitValue v4 topicId tagged field
    is populated with ZERO_UUID by old brokers. A committed v5 TxnOffsetCommit on 4.3.1 writes an
    OffsetCommitValue to __consumer_offsets whose topicId is the zero UUID (decoded with the
    coordinator's record schema), with the committed offset and leader epoch."""
    persisted = kip1319.pre_kip_persisted_commit(pre_kip_cluster)
    store.save("kip1319-pre-kip-persisted", persisted)
    assert_commit_accepted(persisted.commit)
    if persisted.unreadable:
        pytest.skip(persisted.unreadable)
    assert_persisted_zero_topic_id(persisted, kip1319.PRE_KIP_RELEASE)


@pytest.mark.promise("kip1319.client.negotiates-lower-version")
def test_java_client_sends_v5_to_a_broker_without_v6(pre_kip_cluster: Cluster) -> None:
    """KIP-1319 "Compatibility > Backward compatibility": brokers that do not support v6 negotiate
    a lower version. The KIP-1319 Java client, copying 10 records in transactions of 5 as a
    consumer-protocol group member, sends every TxnOffsetCommit to 4.3.1 at v5 naming the topic,
    and the copy commits: the group's offset is 10 and read_committed sees the 10 values."""
    run = clients.pre_kip_java_copy(pre_kip_cluster)
    store.save("kip1319-pre-kip-java-copy", run)
    assert_transaction_outcome(run, "copied")
    assert_client_sends(run, 5)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)
