"""Offsets a group was asked to commit, and what OffsetFetch gave back, version by version.

- `CommitRoundTrip`: one commit (OffsetCommit or TxnOffsetCommit at one version) of its own (offset,
  epoch, metadata), read back by one OffsetFetch version (harness.scenarios.kip320 `committed_epochs`).
- `CommitRound`: a commit with an epoch, then one without (OffsetCommit at one version, below v6
  or with -1), read back by every OffsetFetch version (harness.scenarios.epoch_edges `probe_commits`).

OffsetFetch answers `offset`, `epoch` and `metadata` None where its version has no such field, or
where the answer names no partition.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SentCommit:
    offset: int
    epoch: int
    metadata: str | None


@dataclass(frozen=True)
class OffsetRead:
    """A partition's committed offset and epoch as one OffsetFetch gave them; `error`: its ErrorCode."""

    offset: int | None
    epoch: int | None
    error: int


@dataclass(frozen=True)
class CommitRead(OffsetRead):
    """The same with the committed metadata string."""

    metadata: str | None


@dataclass(frozen=True)
class CommitRoundTrip:
    """`commit` (e.g. "OffsetCommit v8") of `sent`, read back by `read` (e.g. "OffsetFetch v9", or the
    commit's own answer where the coordinator refused it: `got` then carries that error)."""

    commit: str
    read: str
    sent: SentCommit
    got: CommitRead


@dataclass(frozen=True)
class OffsetAndEpoch:
    """An offset committed with `epoch` (None: the commit's version has no field for it)."""

    offset: int
    epoch: int | None


@dataclass(frozen=True)
class VersionedRead:
    read: str
    version: int
    got: OffsetRead


@dataclass(frozen=True)
class CommitRound:
    """A commit with an epoch (`before`, read back as `before_read` by the newest OffsetFetch), then
    `commit` at `version` of `sent` without one, answered `code`, then each OffsetFetch version's read."""

    commit: str
    version: int
    before: OffsetAndEpoch
    before_read: OffsetRead
    sent: OffsetAndEpoch
    code: int
    reads: list[VersionedRead]
