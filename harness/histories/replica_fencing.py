"""A follower's requests at an epoch other than the leader's: KIP-320 "Replica Handling".

harness.scenarios.replica_fencing sends, to the leader of a partition whose leader moved, Fetch and
OffsetsForLeaderEpoch requests as an in-sync follower sends them (ReplicaId, or from Fetch v15
ReplicaState.ReplicaId, the follower's broker id) with an older and a newer CurrentLeaderEpoch;
harness.checks.replica_fencing judges the answers by harness.checks.epoch_fencing's rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.epoch_validation import EpochProbe


@dataclass(frozen=True)
class FollowerProbe:
    """One request sent to the leader with `replica_id` as its ReplicaId (`probe.broker` is the leader
    it went to, `probe.role` "leader"); `asked`: its FetchOffset (a Fetch) or the LeaderEpoch it asked
    about (an OffsetsForLeaderEpoch)."""

    replica_id: int
    asked: int
    probe: EpochProbe


@dataclass(frozen=True)
class FollowerFencing:
    """The follower-shaped requests of `topic`-0 to `leader` while `follower` was in its ISR, both at
    `epoch` (their own Metadata), and the leader's log end then."""

    topic: str
    leader: int
    follower: int
    epoch: int
    log_end: int
    isr: tuple[int, ...]
    answers: tuple[FollowerProbe, ...]
