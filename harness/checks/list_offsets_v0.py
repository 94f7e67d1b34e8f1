"""KIP-320 "Compatibility, Deprecation, and Migration Plan" at ListOffsets v0: "Older versions of the
modified APIs will continue to work as expected". v0 answers EARLIEST and LATEST, asked with
MaxNumOffsets 1, with the one offset the newest version gives (the log start, the log end), without
an error, on a partition whose leader moved."""

from __future__ import annotations

from harness.errors import NotSupported, TargetRefused, require_scene
from harness.histories.list_offsets_v0 import ListOffsetsV0
from harness.protocol.errors import describe
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP


def assert_list_offsets_v0_works(h: ListOffsetsV0) -> None:
    """See the module. A leader that does not advertise v0 (Apache Kafka from 4.0, KIP-896) is "not
    supported by this target", its advertised range the evidence; a partition still at its first
    epoch refuses the premise."""
    if h.current_epoch < 1:
        raise TargetRefused(f"ListOffsets v0 on a moved partition needs a leader move; {h.topic} is at epoch "
                            f"{h.current_epoch}")
    if not (h.advertised[0] <= 0 <= h.advertised[1]) or h.schema[0] > 0:
        raise NotSupported("ListOffsets v0", f"the leader advertises ListOffsets v{h.advertised[0]}-{h.advertised[1]}"
                           f" and its schema has v{h.schema[0]}-{h.schema[1]} (Apache Kafka 4.0 removed v0, KIP-896)")
    want = {EARLIEST_TIMESTAMP: h.log_start, LATEST_TIMESTAMP: h.log_end}
    require_scene(sorted(a.timestamp for a in h.answers) == sorted(want),
                  f"the harness asked v0 for {[a.timestamp for a in h.answers]}, not EARLIEST and LATEST")
    wrong = [f"Timestamp {a.timestamp}: {describe(a.partition['ErrorCode'])} OldStyleOffsets "
             f"{a.partition.get('OldStyleOffsets')}, expected NONE [{want[a.timestamp]}]"
             for a in h.answers
             if a.partition["ErrorCode"] != 0 or list(a.partition.get("OldStyleOffsets") or []) != [want[a.timestamp]]]
    assert not wrong, (
        f"ListOffsets v0 does not keep working on {h.topic}-0 at epoch {h.current_epoch} (the newest version gave "
        f"log start {h.log_start}, end {h.log_end}):\n  " + "\n  ".join(wrong))
