"""KIP-1094 consumer-offsets guide, the zombie leader: a committed epoch newer than a stale leader's
is refused as such."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.epoch_fencing import assert_epoch_validation
from harness.histories import store
from harness.scenarios.kip1094 import zombie_leader

pytestmark = [pytest.mark.kip1094, pytest.mark.needs_fault_control]


@pytest.mark.promise("kip1094.zombie.committed-epoch-refused")
def test_zombie_leader_answers_a_newer_committed_epoch_with_an_epoch_error(
    zombie_cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames
) -> None:
    """KIP-1094 consumer-offsets guide, "Committing Leader Epoch", Phases 1-3: a leader frozen long
    enough to be replaced, then thawed while it cannot hear the controller, still believes it leads at its old epoch (a
    zombie) and serves fetches. A consumer group committed (Xj, epoch 2) from the new leader, Xj
    beyond the zombie's log end. A fetch of Xj carrying that committed epoch must get
    UNKNOWN_LEADER_EPOCH (so the consumer refreshes its metadata), not OFFSET_OUT_OF_RANGE, which
    the zombie gives a fetch without an epoch; OffsetsForLeaderEpoch and ListOffsets likewise."""
    zombie = zombie_leader(zombie_cluster, topic_factory(), run_names.group("kip1094-zombie"))
    store.save("kip1094-zombie", {"answers": zombie.answers, "committed": zombie.committed,
                                  "zombie_epoch": zombie.zombie_epoch})
    zombie_state = f"from zombie {zombie.before.leader} at epoch {zombie.zombie_epoch}; committed {zombie.committed}"
    assert_epoch_validation(zombie.answers, zombie_state)
