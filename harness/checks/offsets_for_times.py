"""KIP-320 "Public Interfaces": offsetsForTimes returns the leader epoch with each offset it finds.

"An unclean leader election may invalidate the results of a lookup by time, so it would be unsafe
to use seek() without considering the epoch information for the returned offsets. To support this,
we will add the leader epoch to the OffsetAndTimestamp object which is returned from
offsetsForTimes()": "the leader epoch corresponding to the offset that was found".

The truth is the leader's log read raw (harness.scenarios.offsets_for_times): the first record
whose timestamp is at or after the one looked up, and the PartitionLeaderEpoch stamped on its
batch. The broker's own ListOffsets answer to the client is a premise: a broker that answered
another offset or epoch is judged by the broker check (kip320.list-offsets.epoch-of-offset), not
the client.
"""

from __future__ import annotations

from harness.errors import ClientLacks, SceneUnmet, TargetRefused, require_scene, require_target
from harness.histories.kip320_clients import OffsetsForTimesRun
from harness.protocol.records import parse_batches


def expected_lookup(run: OffsetsForTimesRun) -> tuple[int, int]:
    """(offset, epoch of its batch) of the first record of the raw log stamped at or after `run.timestamp`."""
    for b in parse_batches(run.log):
        if b.is_control:
            continue
        for r in b.records:
            if r.timestamp is not None and r.timestamp >= run.timestamp:
                return int(r.offset), b.partition_leader_epoch
    raise SceneUnmet(f"no record of {run.topic}-0's log is stamped at or after {run.timestamp}")


def assert_lookup_carries_the_batch_epoch(run: OffsetsForTimesRun) -> None:
    """See the module: the client's lookup of a timestamp written in the later of two leader epochs
    returns that record's offset and the epoch stamped on its batch, and no error."""
    batches = [b for b in parse_batches(run.log) if not b.is_control]
    stamped = sorted({b.partition_leader_epoch for b in batches})
    require_target(run.epoch_after > run.epoch_before and len(stamped) >= 2,
                   f"the check needs {run.topic}-0 written in two leader epochs: Metadata gave epoch "
                   f"{run.epoch_before} before the move and {run.epoch_after} after it; the log's batches carry "
                   f"{stamped}")
    offset, epoch = expected_lookup(run)
    require_scene(offset >= run.moved_at,
                  f"the timestamp looked up, {run.timestamp}, names offset {offset}, written before the move "
                  f"(at {run.moved_at})")
    require_target(epoch == run.epoch_after,
                   f"the new leader stamped the batch holding offset {offset} with epoch {epoch}, not the epoch "
                   f"{run.epoch_after} Metadata gave after the move (the broker checks judge that)")
    who = run.version or run.client
    if run.lookup is None:
        r = run.refused[0] if run.refused else None
        if r is not None and r.get("lacks"):
            raise ClientLacks(who, f"the API behind `{r.get('command')}`", f"{r.get('exception')}: {r.get('message')}")
        raise TargetRefused(f"{run.client}'s lookup of {run.timestamp} did not complete: "
                            f"{[str(x) for x in run.refused]}; its ListOffsets: {[str(a) for a in run.asks]}")
    broker = [a for a in run.asks if a.error == "NONE" and a.asked == run.timestamp]
    wrong = [a for a in broker if (a.offset, a.epoch) != (offset, epoch) and a.version >= 4]
    require_target(not wrong, f"the broker answered {run.client}'s ListOffsets of {run.timestamp} with "
                              f"{[str(a) for a in wrong]}, not offset {offset} epoch {epoch} "
                              f"(kip320.list-offsets.epoch-of-offset judges the broker)")
    if run.lookup.epoch is None and run.lookup.offset == offset:
        if broker and all(a.version < 4 for a in broker):
            raise ClientLacks(who, "ListOffsets v4+ (the leader epoch with the offset)",
                              f"it asked ListOffsets v{sorted({a.version for a in broker})}")
        raise ClientLacks(who, "the leader epoch of an offsetsForTimes answer",
                          f"it returned offset {offset} with no epoch; the broker answered {[str(a) for a in broker]}")
    got = (run.lookup.offset, run.lookup.epoch)
    assert got == (offset, epoch) and not run.lookup.error, (
        f"{run.client} ({who}) looked up {run.timestamp} in {run.topic}-0 (written at epoch {run.epoch_before} up "
        f"to offset {run.moved_at - 1}, at epoch {run.epoch_after} from {run.moved_at}) and got offset "
        f"{run.lookup.offset} epoch {run.lookup.epoch}"
        + (f" with error {run.lookup.error}" if run.lookup.error else "")
        + f"; the log holds it at offset {offset}, in a batch stamped epoch {epoch} (KIP-320 \"Public Interfaces\": "
        f"offsetsForTimes returns \"the leader epoch corresponding to the offset that was found\"); the broker "
        f"answered it {[str(a) for a in run.asks] or 'nothing the proxy saw'}")
