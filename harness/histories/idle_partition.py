"""A partition's leader asked about what holds no record: an empty log, and an epoch a leader move
reached with nothing written since. harness.scenarios.idle_partition asks; harness.checks.idle_partition
judges."""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import NotSupported, TargetRefused
from harness.histories.leader_answers import EndOffsetAnswers, ListOffsetsAtTime


@dataclass(frozen=True)
class EmptyLookups:
    """The leader's ListOffsets answers about the partition at `stage`, while nothing was written to it:
    EARLIEST, LATEST and lookups by time (`times`), at every version from v1, with the current epoch as
    CurrentLeaderEpoch from v4."""

    stage: str
    leader: int
    current_epoch: int
    times: tuple[int, ...]
    answers: tuple[ListOffsetsAtTime, ...]


@dataclass(frozen=True)
class IdlePartition:
    """The scene's record: the empty partition's lookups (at creation, then after a leader move), and
    the leader's OffsetsForLeaderEpoch answers at each epoch a move reached with no write since (into
    the empty log, then after records). `refused` says why the target would not move the leader (with
    `lacks_moves` where it has no way to, the evidence of "not supported")."""

    topic: str
    empty: tuple[EmptyLookups, ...]
    unwritten: tuple[EndOffsetAnswers, ...]
    refused: str | None = None
    lacks_moves: bool = False

    def require_unwritten(self) -> tuple[EndOffsetAnswers, ...]:
        """The probes at epochs reached without a write; a verdict of its own where no move was made."""
        if self.unwritten:
            return self.unwritten
        if self.lacks_moves:
            raise NotSupported("moving a partition's leader", str(self.refused))
        raise TargetRefused(f"an epoch reached without a write needs a leader move, which the target refused: "
                            f"{self.refused}")
