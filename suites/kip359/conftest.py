"""Fixtures of the KIP-359 checks: one run of idempotent producers through failovers, per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fixtures.cluster import Cluster, failover_control
from fixtures.module_scope import module_topic
from harness.scenarios.kip359 import FailoverWrites, failover_writes


@pytest.fixture(name="failover_writes", scope="module")
def failover_writes_fixture(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[FailoverWrites]:
    """Idempotent confluent-kafka and Java producers writing one partition through a crash, a clean
    stop and a pause of its leader, or three leader moves on a target whose nodes are not the
    harness's (see harness.scenarios.kip359)."""
    with failover_control(cluster):
        topic = module_topic(request, "failovers", 3, {"min.insync.replicas": "2"})
        yield failover_writes(cluster, topic)
