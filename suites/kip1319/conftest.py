"""Fixtures of the KIP-1319 checks: raw connections, the proxy, and the extra clusters some checks need.

The extra clusters (SASL + StandardAuthorizer, transaction.version=1, a broker without KIP-1319)
are one-broker local clusters of their own, started once per module that asks for them and
closed at the module's end. Their node logs go to the run's `nodes/<name>/` and into the
evidence of failing tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fixtures.topics import RunNames
from harness import verdicts
from harness.clients.admin import admin_client, create_topic, topic_name
from harness.clients.raw import RawConnector, spec_version
from harness.cluster.base import Cluster
from harness.cluster.local import LocalCluster, LocalClusterSpec, SaslConfig
from harness.kafka.dist import KafkaDistribution, resolve
from harness.proxy import Proxy
from harness.pytest_plugin import evidence, run_dir

# The Java client under test: the first release with the KIP-1319 producer.
CLIENT_VERSION = "4.4.0"
# A release without KIP-1319 (TxnOffsetCommit v5 max), for the checks that compare against one.
PRE_KIP_VERSION = "4.3.1"
TRANSACTION_VERSION = "transaction.version"


@pytest.fixture
def unique(run_names: RunNames) -> Callable[[str], str]:
    """`unique("txn")` -> a fresh name for a transactional id or group of this test.

    Names carry the run prefix and are deleted as groups at the end of a run on an external
    target (a transactional id that is no group is simply not found there).
    """
    return run_names.group


@pytest.fixture
def proxy_for() -> Iterator[Callable[[Cluster], Proxy]]:
    """`proxy_for(cluster)` -> a started proxy in front of it; stopped at teardown, its errors raised."""
    made: list[Proxy] = []

    def make(cluster: Cluster) -> Proxy:
        proxy = Proxy.for_cluster(cluster, spec_version(cluster)).start()
        made.append(proxy)
        return proxy

    yield make
    for proxy in made:
        proxy.stop()
    for proxy in made:
        proxy.check()


@pytest.fixture(scope="session")
def client_dist() -> KafkaDistribution:
    """The Kafka jars whose Java client is under test (kafka-tools may be older, see dist.py)."""
    return resolve(CLIENT_VERSION)


def make_topic(cluster: Cluster, hint: str, partitions: int = 1) -> str:
    """A ready topic on `cluster` (any of the fixtures' clusters), replicated on every broker up to 3."""
    name = topic_name("kcts", hint)
    with admin_client(cluster) as admin:
        return create_topic(cluster, admin, name, partitions, min(3, len(cluster.broker_ids)))


def _module_cluster(
    request: pytest.FixtureRequest, cluster: Cluster, name: str, **spec: Any
) -> Iterator[LocalCluster]:
    if cluster.backend != "local":
        pytest.skip(f"needs a local {name} cluster beside the target; the target is {cluster.backend}")
    config = request.config
    spec.setdefault("version", cluster.version)
    local = LocalCluster(LocalClusterSpec(brokers=1, log_dir=run_dir(config) / "nodes" / name, **spec))
    with local:
        evidence(config).add_logs(local.log_paths)
        yield local


@pytest.fixture(scope="module")
def sasl_cluster(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[LocalCluster]:
    """The target's version with SASL/PLAIN and the StandardAuthorizer (admin: super user, alice: no ACLs)."""
    yield from _module_cluster(request, cluster, "sasl", sasl=SaslConfig())


@pytest.fixture(scope="module")
def tv1_cluster(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[LocalCluster]:
    """The target's version, formatted with transaction.version=1 (no Transaction V2)."""
    target = RawConnector(cluster)
    try:
        client = target()
        supported = {f["Name"]: f for f in client.api_versions_response.get("SupportedFeatures") or []}
    finally:
        target.close()
    feature = supported.get(TRANSACTION_VERSION)
    if feature is None or feature["MaxVersion"] < 1:
        verdicts.not_supported(
            f"the {TRANSACTION_VERSION} feature (KIP-890)",
            f"{client.host}:{client.port} supports features {sorted(supported)}",
        )
    yield from _module_cluster(request, cluster, "tv1", features={TRANSACTION_VERSION: 1})


@pytest.fixture(scope="module")
def pre_kip_cluster(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[Cluster]:
    """A broker of a release without KIP-1319: the session's own when it is that release already."""
    if cluster.backend == "local" and cluster.version == PRE_KIP_VERSION:
        yield cluster
        return
    yield from _module_cluster(request, cluster, f"kafka-{PRE_KIP_VERSION}", version=PRE_KIP_VERSION)
