"""KIP-320 answers about a partition's past: end offsets per epoch, offset epochs, batch stamps, Metadata epochs."""

from __future__ import annotations

import pytest

from harness.checks import recorded
from harness.checks.epoch_history import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    assert_batches_carry_append_epochs,
    assert_end_offsets,
    assert_epochs_rise,
    assert_list_offsets_epochs,
    epoch_starts,
)
from harness.clients import raw as rr
from harness.protocol.records import RecordBatch
from harness.waiting import wait_until
from suites.kip320.histories import EpochHistory
from suites.kip320.probes import epoch_seen_by, leader_and_follower

pytestmark = pytest.mark.kip320


def _log(raw: rr.RawConnector, broker: int, h: EpochHistory) -> tuple[list[RecordBatch], int]:
    return rr.read_log(raw(broker), h.topic, h.topic_id)


def _caught_up(raw: rr.RawConnector, broker: int, h: EpochHistory, log_end: int) -> list[RecordBatch] | None:
    batches, high_watermark = _log(raw, broker, h)
    return batches if high_watermark >= log_end else None


def _blob(batches: list[RecordBatch]) -> bytes:
    return b"".join(b.encode() for b in batches)


def test_offsets_for_leader_epoch_ends_each_epoch_where_the_next_begins(
    history: EpochHistory, raw: rr.RawConnector
) -> None:
    """Seed 000, "Replica Handling" and "Consumer Handling": after a sequence of leader changes,
    OffsetsForLeaderEpoch answers each past epoch with that epoch and the start offset of the next
    one (as the log's own batches show it), the current epoch with the log end, and an epoch above
    every known one with the sentinel (-1, -1). The nemesis history includes an unclean election:
    the truncated epoch ends where the new leader began."""
    leader, _, epoch = leader_and_follower(raw, history.topic)
    client = raw(leader)
    batches, log_end = _log(raw, leader, history)
    asked = sorted(set(epoch_starts(batches)) | {epoch, epoch + 1, epoch + 7})
    version = client.max_version("OffsetForLeaderEpoch")
    answers = {e: rr.offsets_for_leader_epoch(client, version, history.topic, 0, e, current_epoch=epoch) for e in asked}
    recorded.save(f"kip320-end-offsets-{history.name}", {
        "log": _blob(batches), "current_epoch": epoch, "log_end": log_end, "answers": answers,
    })
    assert_end_offsets(batches, epoch, log_end, answers)


def test_list_offsets_returns_the_epoch_of_the_offset_it_returns(history: EpochHistory, raw: rr.RawConnector) -> None:
    """Seed 000, "Protocol Changes / ListOffsets": "we add the leader epoch to the response that
    corresponds with the returned offset": EARLIEST gives offset 0 and the epoch of its batch,
    LATEST the log end and the current epoch, a timestamp the first record at or after it and that
    record's epoch. Asked with the current epoch, at v4 (the first with LeaderEpoch) and the top version."""
    leader, _, epoch = leader_and_follower(raw, history.topic)
    client = raw(leader)
    batches, log_end = _log(raw, leader, history)
    times = [b.base_timestamp for b in batches if not b.is_control]
    answers = []
    for version in sorted({4, client.max_version("ListOffsets")}):
        for ts in [EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, *times]:
            p = rr.list_offsets(client, version, history.topic, 0, ts, current_epoch=epoch)
            answers.append({"version": version, "timestamp": ts, "partition": p})
    recorded.save(f"kip320-list-offsets-epochs-{history.name}", {
        "log": _blob(batches), "current_epoch": epoch, "log_end": log_end, "answers": answers,
    })
    assert_list_offsets_epochs(batches, epoch, log_end, answers)


def test_fetched_batches_carry_the_epoch_they_were_appended_in(history: EpochHistory, raw: rr.RawConnector) -> None:
    """Seed 000 / KAFKA-NOTES: the leader stamps PartitionLeaderEpoch into each batch at append;
    consumers commit and validate with it. Each acknowledged write sits in a batch stamped with
    the epoch it was written in, on the leader and, read through Fetch v11+, on every in-sync
    follower (a follower keeps the leader's stamp)."""
    state = epoch_seen_by(raw, raw.cluster.running_brokers()[0], history.topic)
    leader = state["LeaderId"]
    replicas = [leader, *(b for b in epoch_seen_by(raw, leader, history.topic)["IsrNodes"] if b != leader)]
    appends = history.append_dicts()
    leader_log, log_end = _log(raw, leader, history)
    logs = {leader: leader_log}
    for follower in replicas[1:]:
        # A follower learns the high watermark on its next fetch; read it once it has caught up.
        logs[follower] = wait_until(
            lambda f=follower: _caught_up(raw, f, history, log_end), 15,
            lambda f=follower: f"follower {f}'s high watermark reaching the leader's {log_end}",
        )
    for broker, batches in logs.items():
        role = "leader" if broker == leader else "follower"
        recorded.save(f"kip320-batch-epochs-{history.name}-{role}", {
            "log": _blob(batches), "appends": appends, "replica": f"{role} {broker}",
        })
        assert_batches_carry_append_epochs(batches, appends, f"{role} {broker}")

@pytest.mark.needs_fault_control
def test_metadata_leader_epoch_rises_with_every_election(nemesis_history: EpochHistory) -> None:
    """Seed 000, "Protocol Changes / Metadata": the Metadata response carries the partition's
    leader epoch. Through a clean stop of the leader, a crash, a failback to the preferred leader
    and a forced unclean election, every running broker's Metadata (at its top version) agrees on
    the epoch after each election, and the epoch rises strictly with each one."""
    steps = nemesis_history.step_dicts()
    recorded.save("kip320-metadata-epochs", {"steps": steps})
    kinds = ["clean stop", "failback", "crash", "unclean election"]
    missing = [k for k in kinds if not any(k in s["step"] for s in steps)]
    assert not missing, f"premise: the history lacks {missing}: {steps}"
    assert_epochs_rise(steps)

