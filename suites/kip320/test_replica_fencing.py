"""KIP-320 replica fencing: a follower's Fetch and OffsetsForLeaderEpoch at a wrong epoch are refused."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks.replica_fencing import assert_follower_requests_fenced
from harness.histories import store
from harness.scenarios.kip320 import EpochLineage
from harness.scenarios.replica_fencing import follower_requests_at_wrong_epochs
from harness.verdicts import not_supported

pytestmark = pytest.mark.kip320


@pytest.mark.promise("kip320.replica.stale-epoch-fenced")
def test_a_followers_requests_at_a_stale_epoch_are_fenced(leader_moves: EpochLineage, cluster: Cluster) -> None:
    """KIP-320 "Replica Handling": the follower includes the new epoch in OffsetsForLeaderEpoch "so that
    the follower is ensured that it is truncating using the log from the leader in the correct epoch",
    and in its Fetches, "which will be validated by the leader"; the answers are FENCED_REPLICA (the
    KIP's earlier name of FENCED_LEADER_EPOCH) and UNKNOWN_LEADER_EPOCH. On a partition whose leader
    moved three times, the leader is sent Fetch (every version from v9) and OffsetsForLeaderEpoch
    (every version from v3) with ReplicaId its in-sync follower's broker id (from Fetch v15 in
    ReplicaState), at its epoch minus one and plus one: FENCED_LEADER_EPOCH and UNKNOWN_LEADER_EPOCH
    respectively, with no records and no end offset."""
    if cluster.capabilities.replication is False:
        not_supported("a follower's requests to its leader (replication between brokers)",
                      cluster.capabilities.no_replication)
    run = follower_requests_at_wrong_epochs(cluster, leader_moves)
    store.save("kip320-follower-fencing", run)
    assert_follower_requests_fenced(run)
