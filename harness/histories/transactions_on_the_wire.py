"""Transactions spoken on the wire and what the broker answered about them: a read_committed Fetch
over an aborted and an open transaction, and the offsets an aborted TxnOffsetCommit leaves.

harness.scenarios.read_committed builds them; harness.checks.read_committed judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.observations import Body
from harness.histories.offset_commits import CommitRead, SentCommit


@dataclass(frozen=True)
class ProducedRange:
    """Records acknowledged at offsets [first, last], by `producer_id` (-1: not transactional)."""

    first: int
    last: int
    producer_id: int


@dataclass(frozen=True)
class IsolatedFetch:
    """A Fetch from offset 0 at `version` and IsolationLevel `isolation` (1: read_committed), and its
    answer's partition."""

    version: int
    isolation: int
    partition: Body


@dataclass(frozen=True)
class ReadCommittedLog:
    """The scene's writes in order (plain, an aborted transaction, an open one, plain), the high
    watermark once written, and the Fetch answers."""

    topic: str
    leader: int
    before: ProducedRange
    aborted: ProducedRange
    open: ProducedRange
    after: ProducedRange
    log_end: int
    answers: list[IsolatedFetch]


@dataclass(frozen=True)
class TxnRead:
    """The group's offset as OffsetFetch `version` read it."""

    version: int
    got: CommitRead


@dataclass(frozen=True)
class TxnCommitRound:
    """TxnOffsetCommit at `version` of `sent` in a transaction then ended, answered `code`, and every read after."""

    version: int
    sent: SentCommit
    code: int
    reads: list[TxnRead]


@dataclass(frozen=True)
class BaselineCommit:
    """The plain OffsetCommit made first, answered `code`, and its read-back."""

    sent: SentCommit
    code: int
    got: CommitRead


@dataclass(frozen=True)
class AbortedCommits:
    """The baseline; a round per TxnOffsetCommit version, each in an aborted transaction; and
    `committed`, the control round: a committed transaction at the top version."""

    topic: str
    group: str
    baseline: BaselineCommit
    rounds: list[TxnCommitRound]
    committed: TxnCommitRound
