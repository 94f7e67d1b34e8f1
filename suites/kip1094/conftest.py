"""Fixtures of the KIP-1094 checks: raw connections, and two logs built once per module.

- `two_epochs`: 20 records appended in one epoch, 20 in the next (the leader moved between).
- `transactions`: three committed transactions over three epochs; the last one's data is
  appended in one epoch and its COMMIT marker in the next (the leader moved between the two).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.checks.epoch_history import describe_log
from harness.clients import raw as rr
from harness.clients.admin import QUIET
from harness.clients.history import produce
from harness.cluster.base import Cluster
from harness.nemesis.leadership import move_leader
from harness.waiting import wait_until
from suites.kip1094.logs import Log, read_log, with_commits


@pytest.fixture(scope="module")
def two_epochs(
    request: pytest.FixtureRequest, cluster: Cluster, admin: AdminClient, run_names: RunNames
) -> Iterator[Log]:
    topic = module_topic(request, cluster, admin, run_names, "two-epochs", 3)
    raw = rr.RawConnector(cluster)
    try:
        writer = Producer({**cluster.client_config(), **QUIET, "acks": "all"})
        produce(writer, topic, [f"first-epoch-{i}".encode() for i in range(20)])
        move_leader(cluster, raw(cluster.running_brokers()[0]), admin, topic)
        produce(writer, topic, [f"second-epoch-{i}".encode() for i in range(20)])
        yield read_log(cluster, raw, topic)
    finally:
        raw.close()


@pytest.fixture(scope="module")
def transactions(
    request: pytest.FixtureRequest, cluster: Cluster, admin: AdminClient, run_names: RunNames
) -> Iterator[Log]:
    topic = module_topic(request, cluster, admin, run_names, "transactions", 3)
    raw = rr.RawConnector(cluster)
    mover = raw(cluster.running_brokers()[0])
    txn = Producer({**cluster.client_config(), **QUIET,
                    "transactional.id": run_names.transactional_id("kip1094-transactions")})
    try:
        txn.init_transactions(30)
        for i, move_before_commit in enumerate((False, False, True)):
            txn.begin_transaction()
            produce(txn, topic, [f"txn{i}-{n}".encode() for n in range(10)])
            if move_before_commit:
                move_leader(cluster, mover, admin, topic)
            txn.commit_transaction(30)
            if i == 0:
                move_leader(cluster, mover, admin, topic)
        # The coordinator writes COMMIT markers after commit_transaction returns.
        yield wait_until(
            lambda: with_commits(read_log(cluster, raw, topic), 3), 30,
            lambda: f"three COMMIT markers in {topic}: {describe_log(read_log(cluster, raw, topic).batches)}",
        )
    finally:
        raw.close()
