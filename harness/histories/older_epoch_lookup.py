"""A lookup by time of a record whose epoch is older than the partition's current one (KIP-320 "Public
Interfaces", offsetsForTimes): the leader moved twice, and the record looked up was written in the
middle epoch, so neither the current epoch (Metadata's) nor the epoch of the log's last batch is its.

harness.scenarios.offsets_for_times_older builds it; harness.checks.offsets_for_times_older judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.kip320_clients import OffsetsForTimesRun


@dataclass(frozen=True)
class OlderEpochLookup:
    """`run`: the client's lookup (its `epoch_before`/`epoch_after` the epochs around the first move,
    `moved_at` the first offset written after it, `log` the whole log, records of all three epochs);
    `current_epoch`: the partition's epoch after the second move, as Metadata gave it before the lookup;
    `moved_again_at`: the first offset written after the second move."""

    run: OffsetsForTimesRun
    current_epoch: int
    moved_again_at: int
