"""What the group coordinator persisted for plain OffsetCommits with a leader epoch.

harness.scenarios.persisted_epoch commits at every OffsetCommit version from v6 and reads the
group's latest OffsetCommitValue back from `__consumer_offsets`; harness.checks.epoch_truth judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.kip1319 import PersistedOffset
from harness.histories.offset_commits import SentCommit


@dataclass(frozen=True)
class PersistedRound:
    """OffsetCommit at `version` of `sent`, answered `code`, and the record it left (None: none found)."""

    version: int
    sent: SentCommit
    code: int
    persisted: PersistedOffset | None


@dataclass(frozen=True)
class PersistedEpochs:
    """`unreadable`: why the target's persisted form cannot be read (else None)."""

    topic: str
    group: str
    rounds: list[PersistedRound]
    unreadable: str | None
