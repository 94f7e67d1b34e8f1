"""A group member starting from a committed offset whose leader epoch its metadata has not reached: the
KIP-1094 guide's "Committing Leader Epoch", phase 3 (a consumer that kept a stale leader epoch after a
rebalance; the committed epoch forces it to refresh its metadata before it fetches).

harness.scenarios.committed_refresh records it through the protocol proxy; harness.checks.committed_refresh judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.client_reactions import (
    ClientRecord,
    ClientRelease,
    Committed,
    EpochLearned,
    FetchSent,
    ProxiedRequest,
)
from harness.histories.observations import ClientEvent


@dataclass(frozen=True)
class CommitFetched:
    """An OffsetFetch answer for the partition the client got: when the proxy passed it on (seconds from
    the scene's start), its version, and the offset, epoch and error it carried."""

    at: float
    version: int
    offset: int
    epoch: int
    error: str


@dataclass(frozen=True)
class CommittedRefreshRun:
    """`client` joins a group whose commit for `topic`-0 is `committed`, through a proxy that shows its
    first `stale` Metadata answers for the partition one epoch behind: the commits it read, when it
    asked Metadata (`metadata_asked`, request times), every epoch it was told (`learned`), every Fetch
    entry of the partition it sent, and what it read and reported."""

    client: str
    committed: Committed
    stale: int
    commit_reads: tuple[CommitFetched, ...]
    metadata_asked: tuple[float, ...]
    learned: tuple[EpochLearned, ...]
    fetches: tuple[FetchSent, ...]
    written: tuple[ClientRecord, ...]
    reads: tuple[ClientRecord, ...]
    errors: tuple[ClientEvent, ...]
    incomplete: str | None = None
    exchanges: tuple[ProxiedRequest, ...] = ()
    release: ClientRelease | None = None
