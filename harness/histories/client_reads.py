"""What a client consumer was handed from a log the harness wrote: at an isolation level
(harness.scenarios.isolation_levels), or resuming a group from its committed offset
(harness.scenarios.group_resume). The checks (harness.checks.client_reads) judge them."""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.observations import ClientEvent


@dataclass(frozen=True)
class IsolationRead:
    """The offsets a consumer of `isolation` (read_uncommitted, read_committed) handed the application,
    in the order it did, reading from the log start; `through`: whether it handed the log's last data
    record within `waited` seconds (where not, what it handed by then); `client`: the client and version
    its driver named; `errors`: what it reported meanwhile."""

    client: str
    isolation: str
    read: tuple[int, ...]
    errors: tuple[ClientEvent, ...]
    through: bool = True
    waited: float = 0.0


@dataclass(frozen=True)
class GroupResume:
    """A group member assigned a partition whose group had committed `committed` (read back by the
    harness with OffsetFetch before the member joined): the offsets it handed the application by the
    scene's bound, the log end, and what it reported meanwhile. `waited`: that bound, in seconds."""

    client: str
    committed: int
    end: int
    read: tuple[int, ...]
    errors: tuple[ClientEvent, ...]
    waited: float
