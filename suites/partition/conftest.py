"""Fixtures of the partition checks: the zombie leader, made once per module and read by every check.

A zombie costs an ISR shrink (replica.lag.time.max.ms), a fencing (the broker session timeout) and
two client stacks watching; its checks only read the record, so the module builds it once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fixtures.cluster import UNCLEAN, Cluster, link_control
from fixtures.integrity import integrity_checker, integrity_dir, spark
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.scenarios.network_splits import ZombieLeader, zombie_leader

__all__ = ["integrity_checker", "integrity_dir", "replica_link_cluster", "spark", "zombie"]

UNCLEAN_TOPIC = {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}


REPLICAS = "replicas with logs of their own (a leader or follower cut off from the others while its log goes on)"


@pytest.fixture
def replica_link_cluster(cluster: Cluster) -> Iterator[Cluster]:
    """`link_cluster` for scenes whose promise is about replicas with logs of their own (a follower
    falling out of the ISR, a cut-off leader's log): "not supported" on a target without them."""
    with link_control(cluster, REPLICAS):
        yield cluster


@pytest.fixture(scope="module")
def zombie(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> Iterator[ZombieLeader]:
    """A leader alone in its ISR, cut off from the controller and its follower while clients reach it,
    replaced by an unclean election, then reconnected (see the scenario)."""
    with link_control(cluster, UNCLEAN):
        topic = module_topic(request, "zombie", 2, UNCLEAN_TOPIC)
        groups = {client: run_names.group(f"partition-zombie-{client}") for client in ("librdkafka", "java")}
        yield zombie_leader(cluster, topic, groups)
