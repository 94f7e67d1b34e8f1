"""Fixtures of the KIP-320 checks: raw connections, and partitions with an epoch history built once per module.

A history (several elections, writes in each epoch) costs seconds to several restarts; the checks
that judge it only read, so each module builds it once and every check reads the same record.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from fixtures.module_scope import fault_control, module_topic
from fixtures.topics import RunNames
from harness.clients import raw as rr
from harness.clients.admin import QUIET
from harness.clients.closing import close_producer
from harness.cluster.base import Cluster
from suites.kip320.histories import EpochHistory, build_leader_moves, build_nemesis_history
from suites.kip320.truncation_scenario import TruncationScenario, run_truncation_scenario

UNCLEAN_TOPIC = {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}


@pytest.fixture(scope="module")
def leader_moves(
    request: pytest.FixtureRequest, cluster: Cluster, admin: AdminClient, run_names: RunNames
) -> Iterator[EpochHistory]:
    """A 3-replica partition whose leader moved three times by reassignment, 5 records in each epoch."""
    topic = module_topic(request, cluster, admin, run_names, "moves", 3)
    raw = rr.RawConnector(cluster)
    producer = Producer({**cluster.client_config(), **QUIET, "acks": "all"})
    try:
        yield build_leader_moves(cluster, admin, raw, producer, topic)
    finally:
        close_producer(producer)
        raw.close()


@pytest.fixture(scope="module")
def nemesis_history(
    request: pytest.FixtureRequest, cluster: Cluster, admin: AdminClient, run_names: RunNames
) -> Iterator[EpochHistory]:
    """A 2-replica partition through a clean stop, a crash, a failback and a forced unclean election."""
    with fault_control(cluster):
        topic = module_topic(request, cluster, admin, run_names, "nemesis", 2, UNCLEAN_TOPIC)
        raw = rr.RawConnector(cluster)
        producer = Producer({**cluster.client_config(), **QUIET, "acks": "all"})
        divergent = Producer({**cluster.client_config(), **QUIET, "acks": "1", "enable.idempotence": False})
        try:
            yield build_nemesis_history(cluster, admin, raw, producer, divergent, topic)
        finally:
            close_producer(producer)
            close_producer(divergent)
            raw.close()


@pytest.fixture(params=["leader-moves", pytest.param("nemesis", marks=pytest.mark.needs_fault_control)])
def history(request: pytest.FixtureRequest) -> EpochHistory:
    """Each history in turn: the checks that judge a log's epochs run on both."""
    return request.getfixturevalue("leader_moves" if request.param == "leader-moves" else "nemesis_history")


@pytest.fixture(scope="module")
def truncation(
    request: pytest.FixtureRequest, cluster: Cluster, admin: AdminClient, run_names: RunNames
) -> Iterator[TruncationScenario]:
    """One forced unclean election watched by every consumer of the truncation checks (see the scenario)."""
    with fault_control(cluster):
        topic = module_topic(request, cluster, admin, run_names, "truncation", 2, UNCLEAN_TOPIC)
        groups = {client: run_names.group(f"kip320-truncation-{client}") for client in ("librdkafka", "java")}
        yield run_truncation_scenario(cluster, topic, groups)
