"""KIP-320 ListOffsets at the edges of a log: MAX_TIMESTAMP, and a time after the last record.

KIP-320 "Protocol Changes / ListOffsets" adds to the answer "the leader epoch ... that corresponds
with the returned offset". For MAX_TIMESTAMP (-3, ListOffsets v7+, KIP-734) the offset is that of the
record with the largest timestamp, so the epoch is that record's batch's, wherever it lies in the
log. For a time after every record there is no such offset: ListOffsets answers offset -1 ("if no
such message is found, returns -1", KIP-79) and, from v4, the sentinel epoch -1 (KIP-320
"Compatibility": "we will use a sentinel value (-1) in the APIs that expose it").
"""

from __future__ import annotations

from harness.errors import NotSupported, SetupError, TargetRefused
from harness.histories.leader_answers import ListOffsetsAnswers
from harness.histories.observations import Body
from harness.protocol.errors import describe
from harness.protocol.records import describe_log

MAX_TIMESTAMP = -3
FIRST_WITH_EPOCH = 4  # ListOffsets' first version with LeaderEpoch
FIRST_WITH_MAX_TIMESTAMP = 7


def _describe(p: Body) -> str:
    return (f"{describe(p['ErrorCode'])} offset {p['Offset']} epoch {p.get('LeaderEpoch', '(none)')} "
            f"timestamp {p.get('Timestamp', '(none)')}")


def assert_max_timestamp_returns_its_records_epoch(a: ListOffsetsAnswers) -> None:
    """MAX_TIMESTAMP is answered, at every version from v7, with the offset and timestamp of the record
    with the largest timestamp and the epoch of that record's batch."""
    ts, offset, epoch = a.max_record()
    if epoch == a.current_epoch:
        raise TargetRefused(f"the record with the largest timestamp ({ts}, offset {offset}) lies in the current "
                            f"epoch {epoch}, so its epoch cannot be told from the current one (the scene writes it "
                            f"two epochs earlier with CreateTime; does the target stamp LogAppendTime?); log "
                            f"{describe_log(a.batches)}")
    asked = [x for x in a.answers if x.timestamp == MAX_TIMESTAMP]
    if not asked:
        versions = sorted({x.version for x in a.answers})
        raise NotSupported("ListOffsets MAX_TIMESTAMP (v7+)", f"ListOffsets versions spoken: {versions}")
    wrong = [f"v{x.version}: got {_describe(x.partition)}" for x in asked
             if (x.partition["ErrorCode"], x.partition["Offset"], x.partition["LeaderEpoch"],
                 x.partition["Timestamp"]) != (0, offset, epoch, ts)]
    assert not wrong, (
        f"ListOffsets MAX_TIMESTAMP does not return the epoch of the record with the largest timestamp: expected "
        f"NONE offset {offset} epoch {epoch} timestamp {ts} (leader {a.leader} at epoch {a.current_epoch}):\n  "
        + "\n  ".join(wrong) + f"\n  log: {describe_log(a.batches)}"
    )


def assert_time_after_the_last_record_is_undefined(a: ListOffsetsAnswers) -> None:
    """A timestamp after every record's is answered, at every version, without an error, with offset -1
    and, from v4, epoch -1."""
    ts, _, _ = a.max_record()
    asked = [x for x in a.answers if x.timestamp > ts]
    if not asked:
        raise SetupError(f"no ListOffsets asked a time after the largest timestamp {ts}")
    wrong = []
    for x in asked:
        p = x.partition
        want_epoch = -1 if x.version >= FIRST_WITH_EPOCH else None
        if (p["ErrorCode"], p["Offset"], p.get("LeaderEpoch")) != (0, -1, want_epoch):
            wrong.append(f"v{x.version} timestamp {x.timestamp}: got {_describe(p)}")
    assert not wrong, (
        f"ListOffsets for a time after the last record (largest timestamp {ts}) is not (offset -1, epoch -1):\n  "
        + "\n  ".join(wrong) + f"\n  log: {describe_log(a.batches)}"
    )
