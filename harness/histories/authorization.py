"""Who may ask OffsetsForLeaderEpoch: answers to a user allowed to describe one topic and not another.

harness.scenarios.kip320 `offsets_for_epoch_authorization` asks; harness.checks.epoch_fencing judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.observations import Body


@dataclass(frozen=True)
class OffsetsForEpochAsUser:
    """OffsetsForLeaderEpoch (at `version`) of `topic`'s partition 0 with `replica_id` (-1: a consumer,
    -2: the debug id, else a broker's), by a user `allowed` to describe the topic or not; the leader's
    `epoch` and `log_end` as the admin saw them; `partition`: the decoded answer's partition."""

    replica_id: int
    topic: str
    allowed: bool
    version: int
    log_end: int
    epoch: int
    partition: Body


@dataclass(frozen=True)
class OffsetsForEpochAuthorization:
    """OffsetsForLeaderEpoch sent by `user`, who may describe one topic and not another."""

    user: str
    answers: list[OffsetsForEpochAsUser]
