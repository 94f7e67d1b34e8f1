"""KIP-1319 error precedence with authorization: TxnOffsetCommit v6 on a SASL + StandardAuthorizer cluster.

User `alice` may write her transactional ids and read her groups and one topic (`allowed`); she
has no ACL on the other topic (`denied`). The cluster is the target's version, one broker, built
for this module (see conftest).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from harness.clients.admin import admin_client
from harness.clients.raw import RawConnector
from harness.cluster.base import Cluster
from harness.cluster.local import LocalCluster
from harness.protocol import errors
from harness.protocol.client import Exchange
from harness.waiting import wait_until
from suites.kip1319 import transactions as tx
from suites.kip1319.conftest import make_topic
from suites.kip1319.target import require_v6

pytestmark = pytest.mark.kip1319

USER = "alice"
TXN_PREFIX = "kcts-alice-txn-"
GROUP_PREFIX = "kcts-alice-group-"


@pytest.fixture(scope="module", autouse=True)
def _target_has_v6(cluster: Cluster) -> None:
    """Decide "not supported" from the target before a SASL cluster is started for nothing."""
    target = RawConnector(cluster)
    try:
        require_v6(target(), "TxnOffsetCommit v6 authorization checks")
    finally:
        target.close()


@dataclass
class Acls:
    allowed: str
    allowed_id: uuid.UUID
    denied: str
    denied_id: uuid.UUID
    bindings: list[AclBinding]


@pytest.fixture(scope="module")
def acls(sasl_cluster: LocalCluster) -> Acls:
    """Topics and alice's ACLs, once per module; ready when the broker's authorizer lists them all."""
    allowed = make_topic(sasl_cluster, "allowed", partitions=2)
    denied = make_topic(sasl_cluster, "denied", partitions=2)
    principal = f"User:{USER}"
    allow = AclPermissionType.ALLOW
    bindings = [
        AclBinding(ResourceType.TRANSACTIONAL_ID, TXN_PREFIX, ResourcePatternType.PREFIXED, principal, "*",
                   AclOperation.WRITE, allow),
        AclBinding(ResourceType.GROUP, GROUP_PREFIX, ResourcePatternType.PREFIXED, principal, "*",
                   AclOperation.READ, allow),
        AclBinding(ResourceType.TOPIC, allowed, ResourcePatternType.LITERAL, principal, "*", AclOperation.READ, allow),
    ]
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, principal, None,
                                  AclOperation.ANY, AclPermissionType.ANY)
    seen: list[object] = []
    with admin_client(sasl_cluster) as admin:
        for future in admin.create_acls(bindings).values():
            future.result(30)

        def listed() -> bool:
            seen[:] = admin.describe_acls(everything).result(10)
            return set(seen) >= set(bindings)

        wait_until(listed, 30, lambda: f"ACLs of {principal} listed by the broker: {seen}")
    probe = RawConnector(sasl_cluster)
    try:
        ids = tx.topic_ids(probe(), [allowed, denied])
    finally:
        probe.close()
    return Acls(allowed, ids[allowed], denied, ids[denied], bindings)


@pytest.fixture
def alice(sasl_cluster: LocalCluster) -> Iterator[RawConnector]:
    connector = RawConnector(sasl_cluster, user=USER)
    yield connector
    connector.close()


def _commit_as_alice(alice: RawConnector, topics: list[dict[str, object]]) -> Exchange:
    group = GROUP_PREFIX + uuid.uuid4().hex[:10]
    txn = tx.begin(alice, TXN_PREFIX + uuid.uuid4().hex[:10])
    coordinator = alice(tx.find_coordinator(alice(), group, tx.GROUP_KEY))
    ex = tx.txn_offset_commit(coordinator, 6, txn, group, topics)
    txn.end(commit=False)
    return ex


def test_unauthorized_topic_fails_every_partition_even_missing_ones(
    acls: Acls, alice: RawConnector
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", second rule: a known topic
    the client may not read gets TOPIC_AUTHORIZATION_FAILED (29) for every partition, including a
    partition that does not exist (authorization is checked before partition validation, so that
    partition is not UNKNOWN_TOPIC_OR_PARTITION)."""
    require_v6(alice(), "TOPIC_AUTHORIZATION_FAILED on TxnOffsetCommit v6")
    ex = _commit_as_alice(
        alice, [{"TopicId": acls.denied_id, "Partitions": [tx.partition(p, 5) for p in (0, 1, 7)]}]
    )
    denied = errors.TOPIC_AUTHORIZATION_FAILED
    expected = {(acls.denied_id, 0): denied, (acls.denied_id, 1): denied, (acls.denied_id, 7): denied}
    assert tx.partition_errors(ex) == expected, f"ACLs of {USER}: {acls.bindings}\n{ex.dump()}"


def test_mixed_request_answers_each_topic_on_its_own(acls: Acls, alice: RawConnector) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", all three rules in one
    request: the authorized topic commits its existing partition (0) and gets
    UNKNOWN_TOPIC_OR_PARTITION (3) for its missing one only; the unknown TopicId gets
    UNKNOWN_TOPIC_ID (100) for each of its partitions; the unauthorized topic gets
    TOPIC_AUTHORIZATION_FAILED (29). No topic's error leaks into another's."""
    require_v6(alice(), "per-topic errors on TxnOffsetCommit v6")
    unknown = uuid.uuid4()
    ex = _commit_as_alice(
        alice,
        [
            {"TopicId": acls.allowed_id, "Partitions": [tx.partition(0, 5), tx.partition(9, 5)]},
            {"TopicId": unknown, "Partitions": [tx.partition(0, 5), tx.partition(1, 5)]},
            {"TopicId": acls.denied_id, "Partitions": [tx.partition(0, 5)]},
        ],
    )
    expected = {
        (acls.allowed_id, 0): errors.NONE,
        (acls.allowed_id, 9): errors.UNKNOWN_TOPIC_OR_PARTITION,
        (unknown, 0): errors.UNKNOWN_TOPIC_ID,
        (unknown, 1): errors.UNKNOWN_TOPIC_ID,
        (acls.denied_id, 0): errors.TOPIC_AUTHORIZATION_FAILED,
    }
    assert tx.partition_errors(ex) == expected, f"ACLs of {USER}: {acls.bindings}\n{ex.dump()}"
