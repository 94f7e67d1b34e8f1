"""KIP-320: who may ask OffsetsForLeaderEpoch, now that consumers ask it (on a SASL side cluster)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fixtures.cluster import Cluster
from fixtures.side_clusters import side_cluster
from harness.checks import recorded
from harness.checks.epoch_fencing import assert_offsets_for_epoch_authorized_by_describe
from harness.scenarios import kip1319
from harness.scenarios.kip320 import offsets_for_epoch_authorization

pytestmark = pytest.mark.kip320


@pytest.fixture(scope="module")
def sasl_cluster(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[Cluster]:
    """The target's version with SASL/PLAIN and the StandardAuthorizer (admin: super user, alice: ACLs)."""
    with side_cluster(request, cluster, "sasl-kip320", sasl=True) as side:
        yield side


@pytest.mark.promise("kip320.ofle.authorized-by-describe")
def test_offsets_for_leader_epoch_is_answered_to_whoever_may_describe_the_topic(sasl_cluster: Cluster) -> None:
    """KIP-320 "Consumer Handling" (the consumer checks for truncation "using the OffsetForLeaderEpoch
    API", which was an inter-broker API until then): alice, who may read (so describe) one topic and
    nothing of another, asks the leader with the consumer's ReplicaId -1, the debug id -2 and a
    broker's id: the first topic is answered with its epoch and end offset as a consumer, and refused
    no authorization with the other ids (a broker without followers may refuse a follower's request
    otherwise); the second topic gets TOPIC_AUTHORIZATION_FAILED each time."""
    acls = kip1319.acl_setup(sasl_cluster)
    run = offsets_for_epoch_authorization(sasl_cluster, acls)
    recorded.save("kip320-offsets-for-epoch-authorization", run)
    assert_offsets_for_epoch_authorized_by_describe(run.answers, run.user)
