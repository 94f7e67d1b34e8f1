"""KIP-1319 version negotiation without Transaction V2: a cluster formatted with transaction.version=1.

The cluster is the target's version, one broker, formatted for this module (see conftest). It
still advertises TxnOffsetCommit up to its software's max; what it finalizes decides what a
client may use.
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks.kip1319 import assert_client_sends, assert_transaction_outcome, assert_transaction_version_finalized
from harness.histories import store
from harness.scenarios import kip1319
from harness.scenarios import kip1319_clients as clients

pytestmark = pytest.mark.kip1319


@pytest.mark.promise("kip1319.txn-v2.finalized-level")
def test_transaction_version_1_is_reported_as_finalized(tv1_cluster: Cluster) -> None:
    """KIP-1319 "Compatibility > Version negotiation" rests on the finalized transaction.version
    (KIP-890): a cluster formatted with transaction.version=1 reports it in ApiVersions as finalized
    at level 1 (min and max), while the broker software supports a higher level."""
    features = kip1319.features(tv1_cluster)
    store.save("kip1319-tv1-features", features)
    assert_transaction_version_finalized(features, 1)


@pytest.mark.promise("kip1319.client.v4-without-transaction-v2")
def test_java_client_uses_v4_without_transaction_v2(tv1_cluster: Cluster) -> None:
    """KIP-1319 "Compatibility > Version negotiation": v0-4 require no Transaction V2, v5 and v6
    require it. On a transaction.version=1 cluster the Java client sends TxnOffsetCommit v4 (naming
    its topic; retries of transient answers included), whatever max the broker advertises, and the
    transaction commits."""
    run = clients.tv1_java_commit(tv1_cluster)
    store.save("kip1319-tv1-java-v4", run)
    assert_transaction_outcome(run, "committed")
    assert_client_sends(run, 4)
