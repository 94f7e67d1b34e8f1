"""KIP-1319 version negotiation without Transaction V2: a cluster formatted with transaction.version=1.

The cluster is the target's version, one broker, formatted for this module (see conftest). It
still advertises TxnOffsetCommit up to its software's max; what it finalizes decides what a
client may use.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from harness.clients.raw import RawConnector
from harness.cluster.base import Cluster
from harness.cluster.local import LocalCluster
from harness.kafka.dist import KafkaDistribution
from harness.proxy import Proxy
from suites.kip1319.conftest import make_topic
from suites.kip1319.java_clients import Offset, outcome, run_transaction
from suites.kip1319.target import describe_advertised

pytestmark = pytest.mark.kip1319

FEATURE = "transaction.version"


def _feature(entries: list[dict[str, object]] | None) -> dict[str, object] | None:
    return next((f for f in entries or [] if f["Name"] == FEATURE), None)


@pytest.fixture
def tv1_raw(tv1_cluster: LocalCluster) -> Iterator[RawConnector]:
    connector = RawConnector(tv1_cluster)
    yield connector
    connector.close()


def test_transaction_version_1_is_reported_as_finalized(tv1_raw: RawConnector) -> None:
    """KIP-1319 "Compatibility > Version negotiation" rests on the finalized transaction.version
    (KIP-890): a cluster formatted with transaction.version=1 reports it in ApiVersions as finalized
    at level 1 (min and max), while the broker software supports a higher level."""
    response = tv1_raw().api_versions_response
    finalized, supported = _feature(response.get("FinalizedFeatures")), _feature(response.get("SupportedFeatures"))
    evidence = f"finalized {response.get('FinalizedFeatures')}; supported {response.get('SupportedFeatures')}"
    assert finalized is not None and (finalized["MinVersionLevel"], finalized["MaxVersionLevel"]) == (1, 1), evidence
    assert supported is not None and int(supported["MaxVersion"]) >= 2, evidence


def test_java_client_uses_v4_without_transaction_v2(
    tv1_cluster: LocalCluster, tv1_raw: RawConnector, proxy_for: Callable[[Cluster], Proxy],
    client_dist: KafkaDistribution,
) -> None:
    """KIP-1319 "Compatibility > Version negotiation": v0-4 require no Transaction V2, v5 and v6
    require it. On a transaction.version=1 cluster the Java client sends TxnOffsetCommit v4 (naming
    its topic; retries of transient answers included), whatever max the broker advertises, and the
    transaction commits."""
    source, sink = make_topic(tv1_cluster, "tv1-source"), make_topic(tv1_cluster, "tv1-sink")
    proxy = proxy_for(tv1_cluster)

    group = f"kcts-tv1-group-{uuid.uuid4().hex[:10]}"

    driver = run_transaction(client_dist, proxy.bootstrap_servers, sink, group, [Offset(source, 0, 4, 0)])

    assert outcome(driver) == "committed", driver.describe()
    commits = proxy.recording.exchanges("TxnOffsetCommit")
    evidence = f"{describe_advertised(tv1_raw())}\n{proxy.recording.dump('TxnOffsetCommit')}"
    assert commits and {e.version for e in commits} == {4}, evidence
    assert [t["Name"] for t in (commits[0].request or {})["Topics"]] == [source], commits[0].dump()
