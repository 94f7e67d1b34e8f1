"""A leader's epoch judged by its own acts: its Fetch answers past its log end, and its log beside
what Metadata said after each move.

harness.scenarios.epoch_truth probes a leader-moves history; harness.checks.epoch_truth judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.epochs import Step
from harness.histories.observations import Body


@dataclass(frozen=True)
class FetchProbe:
    """A Fetch at `version` with CurrentLeaderEpoch `requested_epoch`, and its answer's partition."""

    version: int
    requested_epoch: int
    partition: Body


@dataclass(frozen=True)
class FetchFrom(FetchProbe):
    """The same from `fetch_offset`."""

    fetch_offset: int


@dataclass(frozen=True)
class OutOfRangeProbe:
    """Fetch answers from `fetch_offset`, past the log end; `served`: the leader's answer to a Fetch
    from offset 0 at its current epoch (it is a healthy leader)."""

    topic: str
    leader: int
    current_epoch: int
    log_end: int
    fetch_offset: int
    served: FetchProbe
    answers: list[FetchProbe]


@dataclass(frozen=True)
class MetadataTruthProbe:
    """The history's steps (each running broker's Metadata epoch after each move) and appends
    ({first, last, epoch}), the leader's log re-encoded, and Fetches asked with the epoch the leader's
    Metadata gives at the time (`metadata_epoch`)."""

    topic: str
    leader: int
    metadata_epoch: int
    steps: list[Step]
    appends: list[dict[str, int]]
    log: bytes
    fetches: list[FetchFrom]
