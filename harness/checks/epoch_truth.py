"""A leader's epoch judged by the leader's own acts, not by its word alone.

- KIP-320, "Leader Fetch Handling": the leader compares the requested epoch with its own first, and
  permits the fetch only if they match; the KIP-1094 guide ("Committing Leader Epoch", phase 3) shows
  what is lost when a stale fetch is answered OFFSET_OUT_OF_RANGE instead. So a Fetch (v9+) from an
  offset past the log end is answered FENCED_LEADER_EPOCH for an older CurrentLeaderEpoch,
  UNKNOWN_LEADER_EPOCH for a newer one, and OFFSET_OUT_OF_RANGE only for the current one or -1.
- KIP-320, "Protocol Changes / Metadata" with "Replica Handling": the epoch Metadata gives after a
  leader move is the epoch the new leader stamps into every batch it appends (PartitionLeaderEpoch),
  and a Fetch with that CurrentLeaderEpoch is served.

Each probe is a history (harness.histories.epoch_truth, persisted_epochs) that a live run records, so
the recorded answers of tests/checks/data, read back into it, feed the same functions.
"""

from __future__ import annotations

from harness.checks.epoch_fencing import expected_epoch_error
from harness.errors import require_scene, require_target
from harness.histories.epoch_truth import MetadataTruthProbe, OutOfRangeProbe
from harness.histories.persisted_epochs import PersistedEpochs
from harness.histories.version_needs import FETCH_CURRENT_LEADER_EPOCH
from harness.protocol.errors import error_name
from harness.protocol.records import RecordBatch, parse_batches

FIRST_WITH_CURRENT_EPOCH = FETCH_CURRENT_LEADER_EPOCH.first
OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"


def expected_out_of_range_answer(requested: int, current: int) -> str:
    """The epoch check first: FENCED / UNKNOWN for an older / newer epoch, else the offset's own error."""
    epoch_error = expected_epoch_error(requested, current)
    return OUT_OF_RANGE if epoch_error == "NONE" else epoch_error


def assert_epoch_error_before_out_of_range(probe: OutOfRangeProbe) -> None:
    """Every Fetch v9+ past the log end owes the epoch error first (see the module), and no records."""
    served = probe.served.partition
    require_target(served["ErrorCode"] == 0 and served["HighWatermark"] > 0,
                   f"the leader {probe.leader} of {probe.topic} did not serve a Fetch from offset 0 at its "
                   f"current epoch {probe.current_epoch} (v{probe.served.version}: "
                   f"{error_name(served['ErrorCode'])}, HighWatermark {served['HighWatermark']}): no healthy "
                   "leader to ask")
    require_scene(probe.fetch_offset > probe.log_end,
                  f"the probe fetched from {probe.fetch_offset}, not past the log end {probe.log_end}")
    current = probe.current_epoch
    asked = {(a.version, a.requested_epoch) for a in probe.answers}
    versions = sorted({v for v, _ in asked})
    require_scene(versions and all(v >= FIRST_WITH_CURRENT_EPOCH for v in versions)
                  and all((v, e) in asked for v in versions for e in (-1, current, current - 1, current + 1)),
                  f"the probe did not ask every case at every Fetch version from v9: {sorted(asked)}")
    wrong = []
    for a in probe.answers:
        p = a.partition
        want = expected_out_of_range_answer(a.requested_epoch, current)
        got = error_name(p["ErrorCode"])
        records = parse_batches(p.get("Records"))
        if got != want or records:
            wrong.append(f"Fetch v{a.version} offset {probe.fetch_offset} CurrentLeaderEpoch "
                         f"{a.requested_epoch}: got {got} with {len(records)} batch(es), expected {want}")
    assert not wrong, (
        f"leader {probe.leader} of {probe.topic} at epoch {current}, log end {probe.log_end} "
        f"(KIP-320 \"Leader Fetch Handling\": the epoch is compared first):\n  " + "\n  ".join(wrong))


def _stamps(batches: list[RecordBatch], first: int, last: int) -> set[int]:
    return {b.partition_leader_epoch for b in batches
            if not b.is_control and b.base_offset <= last and b.last_offset >= first}


def assert_metadata_epoch_is_the_appending_leaders(probe: MetadataTruthProbe) -> None:
    """After each move, every broker's Metadata epoch equals the PartitionLeaderEpoch of the batches
    the new leader appended next; a Fetch at the leader's Metadata epoch is served with its batches."""
    steps, appends = probe.steps, probe.appends
    require_scene(len(steps) == len(appends) and len(steps) > 1,
                  f"the history pairs no write with each step: {len(steps)} steps, {len(appends)} appends")
    batches = parse_batches(probe.log)
    wrong = []
    for step, append in zip(steps, appends, strict=True):
        stamps = _stamps(batches, append["first"], append["last"])
        said = {b: e for b, e in step.epochs.items() if {e} != stamps}
        if not stamps or said:
            wrong.append(f"after '{step.step}' Metadata gave epochs {step.epochs}; the batches appended next "
                         f"(offsets {append['first']}-{append['last']}) carry PartitionLeaderEpoch {sorted(stamps)}")
    last_stamps = _stamps(batches, appends[-1]["first"], appends[-1]["last"])
    for f in probe.fetches:
        p = f.partition
        got = [b.partition_leader_epoch for b in parse_batches(p.get("Records")) if not b.is_control]
        if p["ErrorCode"] != 0 or not got or set(got) != last_stamps:
            wrong.append(f"Fetch v{f.version} offset {f.fetch_offset} CurrentLeaderEpoch {f.requested_epoch} "
                         f"(the leader's Metadata epoch): {error_name(p['ErrorCode'])}, batches stamped {got}; "
                         f"the log holds {sorted(last_stamps)} there")
    require_scene(probe.fetches, "the probe sent no Fetch v9+")
    assert not wrong, (
        f"{probe.topic} (leader {probe.leader}, Metadata epoch {probe.metadata_epoch}): the epoch "
        "Metadata gives is not the epoch the leader acts at (KIP-320 \"Protocol Changes / Metadata\", "
        "\"Replica Handling\"):\n  " + "\n  ".join(wrong))


def assert_commit_epoch_persisted(persisted: PersistedEpochs) -> None:
    """KIP-320, "Offset Schema Changes": the committed-offset value gains LeaderEpoch "and corresponds with
    the changes to the OffsetCommit APIs": after a plain OffsetCommit (v6+) of (offset, epoch), the
    group's latest OffsetCommitValue for the partition holds that offset and that LeaderEpoch."""
    rounds = persisted.rounds
    require_scene(rounds, f"no OffsetCommit v6+ was sent to {persisted.group}")
    refused = [f"v{r.version}: {error_name(r.code)}" for r in rounds if r.code]
    require_target(not refused, f"the coordinator refused the plain commits whose record the check reads: "
                                f"{', '.join(refused)}")
    wrong = []
    for r in rounds:
        sent, entry = r.sent, r.persisted
        value = entry.value if entry else None
        if not value or (value.offset, value.leader_epoch) != (sent.offset, sent.epoch):
            where = (f"OffsetCommitValue v{entry.value_version} at __consumer_offsets offset "
                     f"{entry.offset_record}" if entry else "no OffsetCommit record")
            got = f"offset {value.offset} LeaderEpoch {value.leader_epoch}" if value else "nothing"
            wrong.append(f"OffsetCommit v{r.version} of offset {sent.offset} epoch {sent.epoch}: {where} "
                         f"holds {got}")
    assert not wrong, (f"{persisted.group}/{persisted.topic}-0 (KIP-320 \"Offset Schema Changes\"):\n  "
                       + "\n  ".join(wrong))
