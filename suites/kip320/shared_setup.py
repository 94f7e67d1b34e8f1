"""Setup that the module-wide scenarios of the leader-epoch suites share: their topics, and fault control.

A scenario built once per module (a history of elections, a run of producers through failovers)
cannot use the per-test `topic_factory` and `fault_cluster`; these are their module-scope twins.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from confluent_kafka.admin import AdminClient

from fixtures.topics import RunNames
from harness.clients.admin import create_topic, topic_name
from harness.cluster.base import Cluster
from harness.errors import KctsError


def module_topic(
    request: pytest.FixtureRequest, cluster: Cluster, admin: AdminClient, names: RunNames,
    what: str, replication_factor: int, config: dict[str, str] | None = None,
) -> str:
    """A one-partition topic for a module's scenario; a target that refuses it skips the module's checks."""
    name = topic_name(names.prefix, f"{request.module.__name__.rsplit('.', 1)[-1]}-{what}")
    names.topics.append(name)
    try:
        create_topic(cluster, admin, name, 1, replication_factor, config)
    except KctsError as exc:
        pytest.skip(f"TARGET_REFUSED: {exc}")
    return name


@contextmanager
def fault_control(cluster: Cluster) -> Iterator[Cluster]:
    """Skip on targets without node control; every node runs again at exit."""
    if not cluster.has_fault_control:
        pytest.skip(f"needs fault control; the target is {cluster.backend}")
    try:
        yield cluster
    finally:
        for b in cluster.broker_ids:
            cluster.resume_node(b)
            cluster.start_node(b)
