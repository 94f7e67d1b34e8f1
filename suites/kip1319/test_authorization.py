"""KIP-1319 error precedence with authorization: TxnOffsetCommit v6 on a SASL + StandardAuthorizer cluster.

User `alice` may write her transactional ids and read her groups and one topic (`allowed`); she
has no ACL on the other topic (`denied`). The cluster is the target's version, one broker, built
for this module (see conftest).
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks.kip1319 import assert_error_precedence
from harness.histories import store
from harness.scenarios import kip1319

pytestmark = pytest.mark.kip1319


@pytest.mark.promise("kip1319.v6.authorization-after-resolution")
def test_unauthorized_topic_fails_every_partition_even_missing_ones(
    acls: kip1319.AclSetup, sasl_cluster: Cluster, require_v6: kip1319.RequireV6
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", second rule: a known topic
    the client may not read gets TOPIC_AUTHORIZATION_FAILED (29) for every partition, including a
    partition that does not exist (authorization is checked before partition validation, so that
    partition is not UNKNOWN_TOPIC_OR_PARTITION)."""
    require_v6("TOPIC_AUTHORIZATION_FAILED on TxnOffsetCommit v6", sasl_cluster)
    commit = kip1319.unauthorized_commit(sasl_cluster, acls)
    store.save("kip1319-unauthorized-topic", commit)
    assert_error_precedence(commit)


@pytest.mark.promise(
    "kip1319.v6.unknown-topic-id",
    "kip1319.v6.authorization-after-resolution",
    "kip1319.v6.missing-partition-only",
)
def test_mixed_request_answers_each_topic_on_its_own(
    acls: kip1319.AclSetup, sasl_cluster: Cluster, require_v6: kip1319.RequireV6
) -> None:
    """KIP-1319 "Proposed Changes > Broker-Side > Topic ID resolution", all three rules in one
    request: the authorized topic commits its existing partition (0) and gets
    UNKNOWN_TOPIC_OR_PARTITION (3) for its missing one only; the unknown TopicId gets
    UNKNOWN_TOPIC_ID (100) for each of its partitions; the unauthorized topic gets
    TOPIC_AUTHORIZATION_FAILED (29). No topic's error leaks into another's."""
    require_v6("per-topic errors on TxnOffsetCommit v6", sasl_cluster)
    commit = kip1319.mixed_commit(sasl_cluster, acls)
    store.save("kip1319-mixed-request", commit)
    assert_error_precedence(commit)
