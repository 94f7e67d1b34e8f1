"""Fixtures of the KIP-320 checks: partitions with an epoch lineage, and one watched unclean election,
each built once per module.

A lineage (several elections, writes in each epoch) costs seconds to several restarts; the checks
that judge it only read, so each module builds it once and every check reads the same record.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fixtures.cluster import UNCLEAN, Cluster, fault_control
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.scenarios import kip320
from harness.scenarios.kip320 import EpochLineage
from harness.scenarios.repeated_unclean import RepeatedUnclean, two_unclean_elections_watched
from harness.scenarios.truncation import TruncationHistory, judged_stacks, unclean_election_watched

UNCLEAN_TOPIC = {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}


@pytest.fixture(scope="module")
def leader_moves(request: pytest.FixtureRequest, cluster: Cluster) -> EpochLineage:
    """A 3-replica partition whose leader moved three times by reassignment, 5 records in each epoch."""
    return kip320.leader_moves(cluster, module_topic(request, "moves", 3))


@pytest.fixture(scope="module")
def nemesis_lineage(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[EpochLineage]:
    """A 2-replica partition through a clean stop, a crash, a failback and a forced unclean election."""
    with fault_control(cluster, UNCLEAN):
        yield kip320.nemesis_lineage(cluster, module_topic(request, "nemesis", 2, UNCLEAN_TOPIC))


@pytest.fixture(params=["leader-moves", pytest.param("nemesis", marks=pytest.mark.needs_fault_control)])
def lineage(request: pytest.FixtureRequest) -> EpochLineage:
    """Each lineage in turn: the checks that judge a log's epochs run on both."""
    return request.getfixturevalue("leader_moves" if request.param == "leader-moves" else "nemesis_lineage")


@pytest.fixture(scope="module")
def truncation(
    request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames
) -> Iterator[TruncationHistory]:
    """One forced unclean election watched by every consumer of the truncation checks (see the scenario)."""
    with fault_control(cluster, UNCLEAN):
        topic = module_topic(request, "truncation", 2, UNCLEAN_TOPIC)
        groups = {client: run_names.group(f"kip320-truncation-{client}") for client in judged_stacks()}
        yield unclean_election_watched(cluster, topic, groups)


@pytest.fixture(scope="module")
def repeated(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[RepeatedUnclean]:
    """Two forced unclean elections, the second back to a leader that never saw the first's epoch (see
    the scenario)."""
    with fault_control(cluster, UNCLEAN):
        yield two_unclean_elections_watched(cluster, module_topic(request, "repeated", 2, UNCLEAN_TOPIC))
