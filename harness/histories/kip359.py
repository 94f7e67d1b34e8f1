"""The histories of the KIP-359 situations: what a leader did with Produce versions that carry no epoch.

The scenarios (harness.scenarios.kip359) return these; the checks (harness.checks.produce_fencing)
judge them; recordings (tests/checks/data/kip359-*.json) load into them through the codec.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.observations import Read


@dataclass(frozen=True)
class OldVersionAppend:
    """One acks=all Produce to the leader at a version without CurrentLeaderEpoch: the version, the one
    record's value, and the partition's answer (error code, base offset); or `unreadable`: why the
    answer was not a Produce response of that version (error and base offset then -1)."""

    version: int
    value: bytes
    error: int
    base_offset: int
    unreadable: str | None = None


@dataclass(frozen=True)
class OldVersionProduce:
    """After a leader move (`leader` leads at `leader_epoch`, above 0), one Produce per version the
    target speaks without CurrentLeaderEpoch (`appends`), and the partition's log read back from the
    leader afterwards (`log`: its data records, each with the epoch its batch carries).

    `fields`: the partition fields of every Produce version spoken, from the target's own schema;
    `advertised`: the Produce range the leader advertises (the lowest may be below what kcts speaks)."""

    topic: str
    leader: int
    leader_epoch: int
    advertised: tuple[int, int]
    fields: dict[int, list[str]]
    appends: tuple[OldVersionAppend, ...]
    log: tuple[Read, ...]

