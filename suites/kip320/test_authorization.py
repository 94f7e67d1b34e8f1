"""KIP-320: who may ask OffsetsForLeaderEpoch, now that consumers ask it (on a SASL side cluster)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks.epoch_fencing import assert_offsets_for_epoch_authorized_by_describe
from harness.checks.ofle_grants import assert_cluster_action_still_authorizes, assert_describe_only_authorizes
from harness.histories import store
from harness.histories.ofle_grants import OffsetsForEpochGrants
from harness.scenarios import kip1319
from harness.scenarios.kip320 import offsets_for_epoch_authorization
from harness.scenarios.ofle_grants import offsets_for_epoch_grants

pytestmark = pytest.mark.kip320


@pytest.fixture(scope="module")
def sasl_cluster(sasl_side_cluster: Cluster) -> Cluster:
    """The session's SASL side cluster (fixtures.side_clusters.sasl_side_cluster)."""
    return sasl_side_cluster


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
    store.save("kip320-offsets-for-epoch-authorization", run)
    assert_offsets_for_epoch_authorized_by_describe(run.answers, run.user)


@pytest.fixture(scope="module")
def ofle_grants(sasl_cluster: Cluster) -> OffsetsForEpochGrants:
    """alice asks OffsetsForLeaderEpoch holding DESCRIBE only on one topic, then ClusterAction on the
    Cluster, then neither (see harness.scenarios.ofle_grants); built once for the two checks below."""
    run = offsets_for_epoch_grants(sasl_cluster)
    store.save("kip320-offsets-for-epoch-grants", run)
    return run


@pytest.mark.promise("kip320.ofle.authorized-by-describe")
def test_offsets_for_leader_epoch_is_answered_to_a_user_who_may_only_describe_the_topic(
    ofle_grants: OffsetsForEpochGrants,
) -> None:
    """KIP-320 "ACL Changes": OffsetsForLeaderEpoch will "require Describe access on the Topic resource"
    (and "Consumer Handling": the consumer now asks it). alice holds DESCRIBE and nothing else on one
    topic (the broker's own ACL listing shows it: READ would imply DESCRIBE and pass a broker that
    wants more) and nothing on another; asked with the consumer's ReplicaId -1, the debug id -2 and
    the leader's id, the first topic is answered its epoch and end offset as a consumer and refused
    no authorization otherwise; the second gets TOPIC_AUTHORIZATION_FAILED each time."""
    assert_describe_only_authorizes(ofle_grants)


@pytest.mark.promise("kip320.ofle.authorized-by-cluster-action")
def test_offsets_for_leader_epoch_is_still_answered_under_the_cluster_authorization(
    ofle_grants: OffsetsForEpochGrants,
) -> None:
    """KIP-320 "ACL Changes": "It requires authorization to the Cluster resource ... For backwards
    compatibility, we will continue to allow the old authorization." alice, refused a topic she holds
    nothing on (TOPIC_AUTHORIZATION_FAILED), is granted ClusterAction on the Cluster resource: the
    topic is then answered its epoch and end offset at every OffsetsForLeaderEpoch version the leader
    speaks, with ReplicaId -1 and (v3+) the leader's id; once the grant is removed she is refused again
    (the premise that the grant, nothing else, made the answers)."""
    assert_cluster_action_still_authorizes(ofle_grants)
