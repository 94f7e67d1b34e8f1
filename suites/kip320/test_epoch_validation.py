"""KIP-320 epoch validation: Fetch, OffsetsForLeaderEpoch and ListOffsets check CurrentLeaderEpoch first.

Each API has two checks: the cases any partition can be asked about (no epoch, the current one, a
newer one), and the older epoch, which needs a partition whose leader has moved. A broker asked that
advertises no version with CurrentLeaderEpoch (Fetch v9, ListOffsets v4, OffsetForLeaderEpoch v2:
harness.histories.version_needs) ends the check "not supported by this target", its range the evidence
(the protocol guide, "Versioning and Compatibility", lets a broker advertise any range).
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks.epoch_fencing import assert_covers, assert_epoch_validation
from harness.histories import store
from harness.histories.version_needs import FETCH_CURRENT_LEADER_EPOCH
from harness.scenarios.kip320 import EpochLineage, ValidationProbes, epoch_validation
from harness.verdicts import not_supported

pytestmark = pytest.mark.kip320

ANY_PARTITION = ("unset", "current", "newer")
OLDER = ("older",)
FETCH_WITH_EPOCH = FETCH_CURRENT_LEADER_EPOCH.first  # v9


def _judge(name: str, probes: ValidationProbes, cases: tuple[str, ...]) -> None:
    store.save(name, {"answers": probes.answers})
    assert_covers(probes.answers, set(cases))
    assert_epoch_validation(probes.answers, f"on {probes.topic}")


@pytest.mark.promise(
    "kip320.fetch.current-epoch-served",
    "kip320.fetch.sentinel-bypasses-validation",
    "kip320.fetch.newer-epoch-unknown",
)
def test_fetch_on_the_leader_serves_the_current_epoch_and_refuses_a_newer_one(
    leader_moves: EpochLineage, cluster: Cluster
) -> None:
    """KIP-320, "Leader Fetch Handling" and "Protocol Changes / Fetch": at every Fetch version with
    CurrentLeaderEpoch (v9+), the leader answers a newer epoch with UNKNOWN_LEADER_EPOCH, returning
    no records; the current epoch and the sentinel -1 ("bypass the epoch validation") are served."""
    probes = epoch_validation(cluster, leader_moves, "Fetch", ("leader",), lowest=FETCH_WITH_EPOCH, cases=ANY_PARTITION)
    _judge("kip320-fetch-leader-current", probes, ANY_PARTITION)


@pytest.mark.promise("kip320.fetch.older-epoch-fenced")
def test_fetch_on_the_leader_fences_an_older_epoch(leader_moves: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Leader Fetch Handling": at every Fetch version with CurrentLeaderEpoch (v9+), the
    leader answers an older epoch with FENCED_LEADER_EPOCH, returning no records. The partition is
    at epoch 3 after three leader moves."""
    probes = epoch_validation(cluster, leader_moves, "Fetch", ("leader",), lowest=FETCH_WITH_EPOCH, cases=OLDER)
    _judge("kip320-fetch-leader-older", probes, OLDER)


@pytest.mark.promise("kip320.fetch.old-versions-unvalidated")
def test_fetch_below_v9_is_served_as_before(leader_moves: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Protocol Changes / Fetch": "For older versions, we will skip epoch validation as
    before." Every Fetch version the leader speaks below v9 (no CurrentLeaderEpoch field) is served
    with records, from a partition whose leader moved three times."""
    probes = epoch_validation(cluster, leader_moves, "Fetch", ("leader",), lowest=0, cases=("unset",))
    old = [a for a in probes.answers if a.version < FETCH_WITH_EPOCH]
    if not old:
        not_supported(f"Fetch below v{FETCH_WITH_EPOCH}",
                      f"the leader speaks Fetch v{min(a.version for a in probes.answers)} up")
    store.save("kip320-fetch-leader-old-versions", {"answers": old})
    assert_epoch_validation(old, f"on {probes.topic}")


@pytest.mark.promise("kip320.fetch.follower-validates-epoch")
def test_fetch_on_a_follower_answers_per_kip_320_then_kip_392(leader_moves: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Protocol Changes / Fetch": a follower receiving a fetch answers the epoch errors
    where the epoch differs (validation first, as on the leader). With a matching or unset epoch,
    KIP-392 (fetch from follower, Kafka 2.4) decides: from Fetch v11 a follower serves consumer
    fetches; below v11 it answers NOT_LEADER_OR_FOLLOWER. Every version the broker speaks (v4 up) is
    probed with no epoch, the current one and a newer one."""
    probes = epoch_validation(cluster, leader_moves, "Fetch", ("follower",), cases=ANY_PARTITION)
    _judge("kip320-fetch-follower-current", probes, ANY_PARTITION)


@pytest.mark.promise("kip320.fetch.follower-validates-epoch")
def test_fetch_on_a_follower_fences_an_older_epoch(leader_moves: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Protocol Changes / Fetch": a follower answers a fetch with an older
    CurrentLeaderEpoch with FENCED_LEADER_EPOCH (validation before KIP-392's follower rules)."""
    probes = epoch_validation(cluster, leader_moves, "Fetch", ("follower",), lowest=FETCH_WITH_EPOCH, cases=OLDER)
    _judge("kip320-fetch-follower-older", probes, OLDER)


@pytest.mark.promise("kip320.ofle.newer-epoch-unknown")
def test_offsets_for_leader_epoch_validates_current_and_newer_epochs(
    leader_moves: EpochLineage, cluster: Cluster
) -> None:
    """KIP-320, "Protocol Changes / OffsetsForLeaderEpoch": "If the current leader epoch does not
    match that of the leader", UNKNOWN_LEADER_EPOCH for a newer one, "as we do for the Fetch API";
    -1 and the current epoch are answered. A follower validates the epoch the same way, then
    answers NOT_LEADER_OR_FOLLOWER."""
    probes = epoch_validation(cluster, leader_moves, "OffsetForLeaderEpoch", cases=ANY_PARTITION)
    _judge("kip320-offsets-for-leader-epoch-validation-current", probes, ANY_PARTITION)


@pytest.mark.promise("kip320.ofle.older-epoch-fenced")
def test_offsets_for_leader_epoch_fences_an_older_epoch(leader_moves: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Protocol Changes / OffsetsForLeaderEpoch": an older current leader epoch is
    answered with FENCED_LEADER_EPOCH (the KIP's text says FENCED_REPLICA), by the leader and by a
    follower alike."""
    probes = epoch_validation(cluster, leader_moves, "OffsetForLeaderEpoch", cases=OLDER)
    _judge("kip320-offsets-for-leader-epoch-validation-older", probes, OLDER)


@pytest.mark.promise("kip320.list-offsets.newer-epoch-unknown")
def test_list_offsets_validates_current_and_newer_epochs(leader_moves: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Protocol Changes / ListOffsets": ListOffsets (v4+) carries CurrentLeaderEpoch "to
    protect clients from querying stale leaders" and "will support the ... UNKNOWN_LEADER_EPOCH
    error code" for a newer epoch; -1 and the current epoch are answered (by the leader; a
    follower validates, then answers NOT_LEADER_OR_FOLLOWER)."""
    probes = epoch_validation(cluster, leader_moves, "ListOffsets", cases=ANY_PARTITION)
    _judge("kip320-list-offsets-validation-current", probes, ANY_PARTITION)


@pytest.mark.promise("kip320.list-offsets.older-epoch-fenced")
def test_list_offsets_fences_an_older_epoch(leader_moves: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Protocol Changes / ListOffsets": ListOffsets (v4+) answers an older
    CurrentLeaderEpoch with FENCED_LEADER_EPOCH, on the leader and on a follower."""
    probes = epoch_validation(cluster, leader_moves, "ListOffsets", cases=OLDER)
    _judge("kip320-list-offsets-validation-older", probes, OLDER)
