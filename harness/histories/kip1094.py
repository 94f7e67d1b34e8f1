"""The histories of the KIP-1094 situations: what a consumer committed after what it consumed.

The scenarios (harness.scenarios.kip1094) return these; the checks (harness.checks.committed_offsets)
judge them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommittedOffset:
    """A group's committed position on one partition, read back: the next offset to read and the
    leader epoch committed with it (None: committed without one, as a client before KIP-320)."""

    offset: int
    epoch: int | None


@dataclass(frozen=True)
class CommitAfterRead(CommittedOffset):
    """A commit made right after the client consumed the record at `last_offset`, whose epoch the
    client reported as `last_epoch`."""

    last_offset: int
    last_epoch: int | None


@dataclass(frozen=True)
class EpochEnd:
    """OffsetsForLeaderEpoch's answer for one partition: the epoch it found and where that epoch ends."""

    error: int
    leader_epoch: int
    end_offset: int


@dataclass(frozen=True)
class LastEpochCommits:
    """Commits, each made after consuming the record at its `last_offset`; the leader's epoch after
    them; OffsetsForLeaderEpoch of each commit's epoch (None for a commit without one)."""

    client: str
    commits: tuple[CommitAfterRead, ...]
    current_epoch: int
    validations: tuple[EpochEnd | None, ...]
    version: str | None = None  # the client and version its driver named (librdkafka, franz-go)


@dataclass(frozen=True)
class MarkerCommit:
    """After reading every transaction: the position (`position_of` names what the client reports
    it from), the commit read back, and OffsetsForLeaderEpoch of the commit's epoch (`validation`,
    None when the commit has no epoch) and of the last data record's epoch (`data_epoch_answer`)."""

    client: str
    position: int
    committed: CommittedOffset
    validation: EpochEnd | None
    data_epoch: CommittedOffset  # the log end with the last data record's epoch
    data_epoch_answer: EpochEnd
    read: tuple[int, ...]  # the offset of every record poll handed the application
    position_of: str = "position()"
    version: str | None = None  # the client and version its driver named (librdkafka, franz-go)


@dataclass(frozen=True)
class MarkerRead:
    """A `MarkerCommit` and the log it was made on: its end offset and its batches re-encoded (what a
    recording keeps, for the check tests to judge again)."""

    commit: MarkerCommit
    end: int
    log: bytes


@dataclass(frozen=True)
class LeaderView:
    """A partition's leader and its epoch, as one broker's own Metadata gives them."""

    leader: int
    epoch: int


@dataclass(frozen=True)
class FetchAnswer:
    """One partition of a Fetch answer, without its records: its error and high watermark."""

    error: int
    high_watermark: int
