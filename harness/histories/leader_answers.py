"""A leader's answers about its own log, beside that log: OffsetsForLeaderEpoch and ListOffsets.

The log is kept as the leader served it (its batches re-encoded), so a check recomputes what each
answer owes from the batches' PartitionLeaderEpoch. harness.scenarios.epoch_edges asks
(`probe_end_offsets`, `probe_list_offsets`); harness.checks.epoch_end_offsets,
list_offsets_edges and old_versions judge.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import SetupError
from harness.histories.observations import Body
from harness.protocol.records import RecordBatch, describe_log, parse_batches


@dataclass(frozen=True)
class EndOffsetAnswers:
    """One leader's OffsetsForLeaderEpoch answers, {version: {asked LeaderEpoch: partition answer}},
    each asked with the current epoch as CurrentLeaderEpoch, and its log from `log_start` to
    `log_end` (the high watermark) at `stage` of the scene."""

    stage: str
    leader: int
    current_epoch: int
    log_start: int
    log_end: int
    log: bytes
    answers: dict[int, dict[int, Body]]

    @property
    def batches(self) -> list[RecordBatch]:
        return parse_batches(self.log)

    def asked(self) -> list[int]:
        return sorted({e for by_epoch in self.answers.values() for e in by_epoch})


@dataclass(frozen=True)
class ListOffsetsAtTime:
    """ListOffsets at `version` for `timestamp` (or a sentinel: EARLIEST, LATEST, MAX_TIMESTAMP), and
    its answer's partition."""

    version: int
    timestamp: int
    partition: Body


@dataclass(frozen=True)
class ListOffsetsAnswers:
    """The leader's ListOffsets answers, asked with the current epoch from v4, and its log from offset
    0 to `log_end`."""

    leader: int
    current_epoch: int
    log_end: int
    log: bytes
    answers: list[ListOffsetsAtTime]

    @property
    def batches(self) -> list[RecordBatch]:
        return parse_batches(self.log)

    def max_record(self) -> tuple[int, int, int]:
        """(timestamp, offset, epoch) of the first record with the largest timestamp."""
        best: tuple[int, int, int] | None = None
        for b in sorted(self.batches, key=lambda b: b.base_offset):
            if b.is_control:
                continue
            for r in b.records:
                if r.timestamp is not None and r.offset is not None and (best is None or r.timestamp > best[0]):
                    best = (r.timestamp, r.offset, b.partition_leader_epoch)
        if best is None:
            raise SetupError(f"the log holds no data record: {describe_log(self.batches)}")
        return best
