"""KIP-320 epoch validation: Fetch, OffsetsForLeaderEpoch and ListOffsets check CurrentLeaderEpoch first."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks import recorded
from harness.checks.epoch_fencing import assert_covers, assert_epoch_validation
from harness.scenarios.kip320 import CASES, EpochHistory, ValidationProbes, epoch_validation

pytestmark = pytest.mark.kip320


def _judge(name: str, probes: ValidationProbes) -> None:
    recorded.save(name, {"answers": probes.answers})
    assert_covers(probes.answers, set(CASES))
    assert_epoch_validation(probes.answers, f"on {probes.topic}")


def test_fetch_on_the_leader_fences_older_and_unknown_epochs(leader_moves: EpochHistory, cluster: Cluster) -> None:
    """Seed 000, "Leader Fetch Handling" and "Protocol Changes / Fetch": at every Fetch version with
    CurrentLeaderEpoch (v9+), the leader answers an older epoch with FENCED_LEADER_EPOCH and a newer
    one with UNKNOWN_LEADER_EPOCH, returning no records; the current epoch and the sentinel -1
    ("bypass the epoch validation") are served. The partition is at epoch 3 after three leader moves."""
    _judge("kip320-fetch-leader", epoch_validation(cluster, leader_moves, "Fetch", ("leader",), lowest=9))


def test_fetch_on_a_follower_answers_per_kip_320_then_kip_392(leader_moves: EpochHistory, cluster: Cluster) -> None:
    """Seed 000, "Protocol Changes / Fetch": a follower receiving a fetch now answers the epoch
    errors where the epoch differs (validation first, as on the leader). With a matching or unset
    epoch, KIP-392 (fetch from follower, Kafka 2.4) decides: from Fetch v11 a follower serves
    consumer fetches; below v11 it answers NOT_LEADER_OR_FOLLOWER. Every version the broker
    speaks (v4 up) is probed."""
    _judge("kip320-fetch-follower", epoch_validation(cluster, leader_moves, "Fetch", ("follower",)))


def test_offsets_for_leader_epoch_validates_current_leader_epoch(
    leader_moves: EpochHistory, cluster: Cluster
) -> None:
    """Seed 000, "Protocol Changes / OffsetsForLeaderEpoch": "If the current leader epoch does not
    match that of the leader", FENCED_LEADER_EPOCH (the KIP's text says FENCED_REPLICA) or
    UNKNOWN_LEADER_EPOCH, "as we do for the Fetch API"; -1 and the current epoch are answered. A
    follower validates the epoch the same way, then answers NOT_LEADER_OR_FOLLOWER."""
    probes = epoch_validation(cluster, leader_moves, "OffsetForLeaderEpoch")
    _judge("kip320-offsets-for-leader-epoch-validation", probes)


def test_list_offsets_validates_current_leader_epoch(leader_moves: EpochHistory, cluster: Cluster) -> None:
    """Seed 000, "Protocol Changes / ListOffsets": ListOffsets (v4+) carries CurrentLeaderEpoch "to
    protect clients from querying stale leaders" and "will support the FENCED_LEADER_EPOCH and
    UNKNOWN_LEADER_EPOCH error codes"; -1 and the current epoch are answered (by the leader; a
    follower validates, then answers NOT_LEADER_OR_FOLLOWER)."""
    _judge("kip320-list-offsets-validation", epoch_validation(cluster, leader_moves, "ListOffsets"))
