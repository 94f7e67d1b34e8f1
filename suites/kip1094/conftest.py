"""Fixtures of the KIP-1094 checks: two logs built once per module (see harness.scenarios.kip1094).

- `two_epochs`: 20 records appended in one epoch, 20 in the next (the leader moved between).
- `transactions`: three committed transactions over three epochs; the last one's data is
  appended in one epoch and its COMMIT marker in the next (the leader moved between the two).
- `aborted_last`: a committed transaction, then an aborted one whose ABORT marker ends the log, in
  a later epoch than every data record (the leader moved between the aborted data and the abort).
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.scenarios import kip1094
from harness.scenarios.kip1094 import Log


@pytest.fixture(scope="module")
def two_epochs(request: pytest.FixtureRequest, cluster: Cluster) -> Log:
    return kip1094.two_epochs(cluster, module_topic(request, "two-epochs", 3))


@pytest.fixture(scope="module")
def transactions(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> Log:
    topic = module_topic(request, "transactions", 3)
    return kip1094.transactions(cluster, topic, run_names.transactional_id("kip1094-transactions"))


@pytest.fixture(scope="module")
def aborted_last(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> Log:
    topic = module_topic(request, "aborted-last", 3)
    return kip1094.aborted_last(cluster, topic, run_names.transactional_id("kip1094-aborted-last"))
