"""ListOffsets v0, the version before KIP-320's epochs and before KIP-79's single offset: asked of the
leader of a partition whose leader moved (harness.scenarios.list_offsets_v0), judged by
harness.checks.list_offsets_v0 for kip320.compat.old-versions-work."""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.leader_answers import ListOffsetsAtTime


@dataclass(frozen=True)
class ListOffsetsV0:
    """The leader's answers to ListOffsets v0 (MaxNumOffsets 1) for EARLIEST and LATEST, with the log
    start and end its newest version answered just before, and the partition's epoch; `advertised`
    the ListOffsets range the leader advertises, `schema` the versions of the target's own schema
    (v0 is asked only where both have it)."""

    topic: str
    leader: int
    current_epoch: int
    advertised: tuple[int, int]
    schema: tuple[int, int]
    log_start: int
    log_end: int
    answers: tuple[ListOffsetsAtTime, ...]
