"""Fixtures of the KIP-359 checks: raw connections, and one run of idempotent producers through failovers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient

from fixtures.module_scope import fault_control, module_topic
from fixtures.topics import RunNames
from harness.cluster.base import Cluster
from suites.kip359.failover_writes import FailoverWrites, run_failover_writes


@pytest.fixture(scope="module")
def failover_writes(
    request: pytest.FixtureRequest, cluster: Cluster, admin: AdminClient, run_names: RunNames
) -> Iterator[FailoverWrites]:
    """Idempotent confluent-kafka and Java producers writing one partition through a crash, a clean
    stop and a pause of its leader (see failover_writes)."""
    with fault_control(cluster):
        topic = module_topic(request, cluster, admin, run_names, "failovers", 3, {"min.insync.replicas": "2"})
        yield run_failover_writes(cluster, topic)
