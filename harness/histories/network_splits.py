"""What nodes and clients did across a network partition, beyond the records themselves
(harness.histories.text_records): a cut-off leader's answers, and the ISR watched while a follower was fenced.

harness.scenarios.network_splits builds them; harness.checks.network_splits judges.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ZombieFetch:
    """A Fetch to the cut-off leader at `version` with CurrentLeaderEpoch `epoch`: its error's name
    and how many records came back."""

    version: int
    epoch: int
    error: str
    records: int


@dataclass(frozen=True)
class ZombieFetchFrom(ZombieFetch):
    """The same from `offset`."""

    offset: int


@dataclass(frozen=True)
class ZombieWrite:
    """An acks=1 Produce of `value` to the cut-off leader at `version` with CurrentLeaderEpoch `epoch`:
    its error's name and the base offset it answered (-1: none)."""

    version: int
    epoch: int
    value: str
    error: str
    offset: int


@dataclass(frozen=True)
class IsrSample:
    """The partition `t` seconds into the watch, as a broker other than the fenced follower said it,
    with the follower's and the leader's log ends."""

    t: float
    isr: list[int]
    leader: int
    epoch: int
    follower_log_end: int
    leader_log_end: int
