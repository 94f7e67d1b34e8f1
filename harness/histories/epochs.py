"""The epoch lineage of a partition: what was appended in which leader epoch, every broker's view of
the epoch after each leader change, and what a forced unclean election cost.

The KIP-320 scenarios build one (harness.scenarios.kip320: `leader_moves`, `nemesis_lineage`), the
nemesis reports the election (harness.nemesis.unclean), and the checks read both.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from harness.errors import NotSupported, TargetRefused


@dataclass(frozen=True)
class UncleanElection:
    """What one forced unclean election did to a partition."""

    topic: str
    partition: int
    old_leader: int
    new_leader: int
    epoch_before: int
    epoch_after: int
    divergence_offset: int  # the new leader's log end at election: the first offset rewritten
    old_leader_leo_before: int
    old_leader_leo_after: int
    logged_truncation_offset: int | None  # Apache's log line, where logs are ours; None otherwise

    @property
    def truncated(self) -> range:
        """Offsets the old leader held and lost: [divergence, old leader's former log end)."""
        return range(self.divergence_offset, self.old_leader_leo_before)


@dataclass(frozen=True)
class Append:
    """Acknowledged writes [first, last], all appended while `leader` led at `epoch`."""

    first: int
    last: int
    epoch: int
    leader: int


@dataclass(frozen=True)
class Step:
    """The partition after one step: its leader, and the epoch each running broker's Metadata gives."""

    step: str
    leader: int
    epochs: dict[int, int]


@dataclass(frozen=True)
class EpochLineage:
    """One partition's past: what was appended in which epoch, and every broker's view after each step."""

    name: str
    topic: str
    topic_id: uuid.UUID
    appends: tuple[Append, ...]
    steps: tuple[Step, ...]
    unclean: UncleanElection | None = None
    refused: str | None = None  # why the target would not move the leader (the lineage then has no move)
    # The target has no leader moves at all (one log per partition, no replicas to lead): `refused`
    # is then its account, and a check that needs a move is "not supported", not a refused premise.
    unsupported: bool = False

    def require_moves(self, what: str) -> None:
        """Raise `NotSupported` where the target has no leader moves, `TargetRefused` where it refused
        the ones `what` needs."""
        if self.refused is not None and self.unsupported:
            raise NotSupported(f"{what} (a partition whose leader moved)", self.refused)
        if self.refused is not None:
            raise TargetRefused(f"{what} needs a partition whose leader moved: {self.refused}")

    def append_dicts(self) -> list[dict[str, int]]:
        return [{"first": a.first, "last": a.last, "epoch": a.epoch} for a in self.appends]

    def step_dicts(self) -> list[dict[str, object]]:
        return [{"step": s.step, "leader": s.leader, "epochs": s.epochs} for s in self.steps]
