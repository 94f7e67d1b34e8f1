"""KIP-320 epoch validation: Fetch, OffsetsForLeaderEpoch and ListOffsets check CurrentLeaderEpoch first."""

from __future__ import annotations

import pytest

from harness.checks import recorded
from harness.checks.epoch_fencing import assert_covers, assert_epoch_validation
from harness.clients import raw as rr
from harness.waiting import wait_until
from suites.kip320.histories import EpochHistory
from suites.kip320.probes import (
    CASES,
    fetch_answers,
    leader_and_follower,
    list_offsets_answers,
    offsets_for_leader_epoch_answers,
)

pytestmark = pytest.mark.kip320


def _judge(name: str, answers: list[dict], context: str) -> None:
    recorded.save(name, {"answers": answers})
    assert_covers(answers, set(CASES))
    assert_epoch_validation(answers, context)


def test_fetch_on_the_leader_fences_older_and_unknown_epochs(leader_moves: EpochHistory, raw: rr.RawConnector) -> None:
    """Seed 000, "Leader Fetch Handling" and "Protocol Changes / Fetch": at every Fetch version with
    CurrentLeaderEpoch (v9+), the leader answers an older epoch with FENCED_LEADER_EPOCH and a newer
    one with UNKNOWN_LEADER_EPOCH, returning no records; the current epoch and the sentinel -1
    ("bypass the epoch validation") are served. The partition is at epoch 3 after three leader moves."""
    leader, _, epoch = leader_and_follower(raw, leader_moves.topic)
    answers = fetch_answers(raw(leader), leader, "leader", leader_moves, epoch)
    _judge("kip320-fetch-leader", [a for a in answers if a["version"] >= 9], f"on {leader_moves.topic}")


def test_fetch_on_a_follower_answers_per_kip_320_then_kip_392(leader_moves: EpochHistory, raw: rr.RawConnector) -> None:
    """Seed 000, "Protocol Changes / Fetch": a follower receiving a fetch now answers the epoch
    errors where the epoch differs (validation first, as on the leader). With a matching or unset
    epoch, KIP-392 (fetch from follower, Kafka 2.4) decides: from Fetch v11 a follower serves
    consumer fetches; below v11 it answers NOT_LEADER_OR_FOLLOWER. Every version the broker
    speaks (v4 up) is probed."""
    leader, follower, epoch = leader_and_follower(raw, leader_moves.topic)
    _wait_for_follower_high_watermark(raw, leader_moves, leader, follower, epoch)
    answers = fetch_answers(raw(follower), follower, "follower", leader_moves, epoch)
    _judge("kip320-fetch-follower", answers, f"on {leader_moves.topic}")


def _wait_for_follower_high_watermark(
    raw: rr.RawConnector, h: EpochHistory, leader: int, follower: int, epoch: int
) -> None:
    """A follower serves up to its own high watermark, which trails the leader's by a fetch round:
    the probes start once it has caught up, so that "served" means records came back."""

    def high_watermarks() -> tuple[int, int]:
        return tuple(  # type: ignore[return-value]
            rr.fetch(raw(b), 11, h.topic, h.topic_id, 0, 0, current_epoch=epoch)["HighWatermark"]
            for b in (leader, follower)
        )

    wait_until(lambda: len(set(high_watermarks())) == 1 and high_watermarks()[0] > 0, 30,
               lambda: f"leader {leader} and follower {follower} high watermarks {high_watermarks()}")


def test_offsets_for_leader_epoch_validates_current_leader_epoch(
    leader_moves: EpochHistory, raw: rr.RawConnector
) -> None:
    """Seed 000, "Protocol Changes / OffsetsForLeaderEpoch": "If the current leader epoch does not
    match that of the leader", FENCED_LEADER_EPOCH (the KIP's text says FENCED_REPLICA) or
    UNKNOWN_LEADER_EPOCH, "as we do for the Fetch API"; -1 and the current epoch are answered. A
    follower validates the epoch the same way, then answers NOT_LEADER_OR_FOLLOWER."""
    leader, follower, epoch = leader_and_follower(raw, leader_moves.topic)
    answers = offsets_for_leader_epoch_answers(raw(leader), leader, "leader", leader_moves, epoch)
    answers += offsets_for_leader_epoch_answers(raw(follower), follower, "follower", leader_moves, epoch)
    _judge("kip320-offsets-for-leader-epoch-validation", answers, f"on {leader_moves.topic}")


def test_list_offsets_validates_current_leader_epoch(leader_moves: EpochHistory, raw: rr.RawConnector) -> None:
    """Seed 000, "Protocol Changes / ListOffsets": ListOffsets (v4+) carries CurrentLeaderEpoch "to
    protect clients from querying stale leaders" and "will support the FENCED_LEADER_EPOCH and
    UNKNOWN_LEADER_EPOCH error codes"; -1 and the current epoch are answered (by the leader; a
    follower validates, then answers NOT_LEADER_OR_FOLLOWER)."""
    leader, follower, epoch = leader_and_follower(raw, leader_moves.topic)
    answers = list_offsets_answers(raw(leader), leader, "leader", leader_moves, epoch)
    answers += list_offsets_answers(raw(follower), follower, "follower", leader_moves, epoch)
    _judge("kip320-list-offsets-validation", answers, f"on {leader_moves.topic}")
