"""KIP-320's ISR rule for a replica the controller has fenced, made by cutting it off from the controller only."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.network_splits import assert_fenced_replica_kept_out_of_the_isr
from harness.histories import store
from harness.scenarios.network_splits import OBSERVE_FENCED, fenced_follower
from harness.verdicts import require_scene, require_target

pytestmark = [pytest.mark.partition, pytest.mark.needs_fault_control]


@pytest.mark.promise("kip320.isr.offline-replica-not-added")
def test_a_fenced_follower_that_caught_up_stays_out_of_the_isr(
    replica_link_cluster: Cluster, topic_factory: TopicFactory
) -> None:
    """KIP-320 "Proposed Changes": a leader "is not permitted to add a replica to the ISR if it is
    marked as offline by the controller". A follower cut off from the controller (but not from its
    leader) is fenced and dropped from the ISR; it goes on fetching and catches up with the leader's
    log end; for the seconds watched after that, no broker reports it in the ISR. Reconnected and
    unfenced, it rejoins (the premise that it could)."""
    run = fenced_follower(replica_link_cluster, topic_factory(replication_factor=3))
    store.save("partition-fenced-follower", {"watched": run.watched, "follower": run.follower,
                                             "timeline": [e.flat() for e in run.timeline]})
    require_scene((run.watched and run.watched[-1].t >= OBSERVE_FENCED - 1) or any(
        run.follower in w.isr for w in run.watched),
        f"the harness watched the ISR for less than {OBSERVE_FENCED - 1} s: {run.watched[-2:]}")
    require_target(run.follower in run.rejoined.isr,
                   f"follower {run.follower} did not rejoin the ISR once reconnected, so its absence while fenced "
                   f"tells nothing of the fencing: {run.rejoined}")
    assert_fenced_replica_kept_out_of_the_isr(run.watched, run.follower)
