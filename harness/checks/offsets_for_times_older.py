"""KIP-320 "Public Interfaces": offsetsForTimes returns "the leader epoch corresponding to the offset
that was found", also when that epoch is no longer the current one.

The lookup of harness.checks.offsets_for_times is judged on a record of the middle of three epochs
(harness.scenarios.offsets_for_times_older): a client that answers Metadata's current epoch, or the
epoch of the log's newest batch, instead of the found batch's, fails here, where a lookup in the
current epoch could not tell them apart.
"""

from __future__ import annotations

from harness.checks.offsets_for_times import assert_lookup_carries_the_batch_epoch, expected_lookup
from harness.errors import require_scene, require_target
from harness.histories.older_epoch_lookup import OlderEpochLookup
from harness.protocol.records import parse_batches


def assert_lookup_in_an_older_epoch_carries_its_batch_epoch(h: OlderEpochLookup) -> None:
    """The lookup's offset and epoch are the found record's and its batch's (the rule of
    `assert_lookup_carries_the_batch_epoch`), where that epoch is older than the partition's current
    one and than its newest batch's. Premises, the target's: the second move raised the epoch above the
    looked-up batch's, and the log's newest batches carry it; the harness's: the timestamp names a
    record written between the two moves."""
    run = h.run
    offset, epoch = expected_lookup(run)
    require_scene(run.moved_at <= offset < h.moved_again_at,
                  f"the timestamp looked up, {run.timestamp}, names offset {offset}, not one written between the "
                  f"moves (offsets {run.moved_at}..{h.moved_again_at - 1})")
    newest = max((b for b in parse_batches(run.log) if not b.is_control), key=lambda b: b.base_offset)
    require_target(h.current_epoch > epoch and newest.partition_leader_epoch > epoch,
                   f"the check needs the record looked up (offset {offset}, batch epoch {epoch}) in an epoch older "
                   f"than the partition's: Metadata gave epoch {h.current_epoch} after the second move, and the "
                   f"newest batch (offset {newest.base_offset}) carries {newest.partition_leader_epoch}")
    assert_lookup_carries_the_batch_epoch(run)
