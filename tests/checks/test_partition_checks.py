"""The partition checks reject what a broken target or client would do (recorded 4.4.0 runs, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import Recording

from harness.checks.network_splits import (
    assert_fenced_replica_kept_out_of_the_isr,
    assert_no_acknowledged_write_lost,
    assert_served_without_the_controller,
    assert_truncated_to_the_new_leader,
    assert_zombie_refuses_the_new_epoch,
    assert_zombie_refuses_writes_at_the_new_epoch,
)
from harness.checks.truncation import assert_resumed_at_divergence
from harness.errors import SceneUnmet, TargetRefused
from harness.histories.client_reactions import ClientRecord
from harness.histories.network_splits import IsrSample, ZombieFetchFrom, ZombieWrite
from harness.histories.text_records import DeliveryReport, LogRecord
from harness.histories.truncation import ConsumerError

RESETS = [f"partition-zombie-{c}-{r}" for c in ("librdkafka", "java") for r in ("earliest", "latest")]


def _log(records: list[dict[str, Any]]) -> list[LogRecord]:
    return typed(list[LogRecord], records)


def _writes(writes: list[dict[str, Any]]) -> list[DeliveryReport]:
    return typed(list[DeliveryReport], writes)


def _fetches(r: dict[str, Any]) -> None:
    assert_zombie_refuses_the_new_epoch(typed(list[ZombieFetchFrom], r["new"]), "zombie")


def test_recorded_zombie_answers_pass(recording: Recording) -> None:
    r = recording("partition-zombie-fetches")
    assert {a["error"] for a in r["new"]} <= {"UNKNOWN_LEADER_EPOCH", "FENCED_LEADER_EPOCH"}
    _fetches(r)


def test_a_zombie_that_served_data_at_the_new_epoch_fails(recording: Recording) -> None:
    r = recording("partition-zombie-fetches")
    r["new"][0].update(error="NONE", records=5)
    with pytest.raises(AssertionError, match=r"-> NONE with 5 records"):
        _fetches(r)


def test_a_zombie_answering_offset_out_of_range_fails(recording: Recording) -> None:
    """KIP-1094's zombie case: past the zombie's log end, OFFSET_OUT_OF_RANGE would send a consumer to its
    reset policy."""
    r = recording("partition-zombie-fetches")
    past_end = next(a for a in r["new"] if a["offset"] > 0)
    past_end.update(error="OFFSET_OUT_OF_RANGE")
    with pytest.raises(AssertionError, match="OFFSET_OUT_OF_RANGE"):
        _fetches(r)


def _writes_at_new_epoch(r: dict[str, Any], error: str, values: list[str] | None = None) -> list[ZombieWrite]:
    """The zombie's recorded acks=1 writes as answers to writes at the new epoch (Apache's Produce has no
    epoch field, so its recording holds writes taken without one)."""
    return [ZombieWrite(13, 9, values[i] if values else a["value"], error, a["offset"] if error == "NONE" else -1)
            for i, a in enumerate(r["acked"])]


def test_recorded_zombie_took_writes_without_an_epoch_field(recording: Recording) -> None:
    r = recording("partition-zombie-writes")
    assert r["acked"] and r["at_new_epoch"] == []
    assert all("CurrentLeaderEpoch" not in f for f in r["fields"].values())


def test_a_zombie_refusing_writes_at_the_new_epoch_passes(recording: Recording) -> None:
    r = recording("partition-zombie-writes")
    fresh = [f"never-appended-{i}" for i in range(len(r["acked"]))]
    writes = _writes_at_new_epoch(r, "UNKNOWN_LEADER_EPOCH", fresh)
    assert_zombie_refuses_writes_at_the_new_epoch(writes, _log(r["log"]), "z")


def test_a_zombie_that_appended_a_write_at_the_new_epoch_fails(recording: Recording) -> None:
    r = recording("partition-zombie-writes")
    with pytest.raises(AssertionError, match=r"were not refused .* -> NONE at offset \d+"):
        assert_zombie_refuses_writes_at_the_new_epoch(_writes_at_new_epoch(r, "NONE"), _log(r["log"]), "z")


def test_a_zombie_that_refused_but_kept_the_write_fails(recording: Recording) -> None:
    r = recording("partition-zombie-writes")
    with pytest.raises(AssertionError, match="its log holds"):
        assert_zombie_refuses_writes_at_the_new_epoch(_writes_at_new_epoch(r, "UNKNOWN_LEADER_EPOCH"), _log(r["log"]),
                                                      "z")


def _logs(r: dict[str, Any]) -> None:
    assert_truncated_to_the_new_leader(_log(r["old"]), _log(r["new"]), r["divergence"], r["gone"])


def test_recorded_logs_pass(recording: Recording) -> None:
    r = recording("partition-zombie-logs")
    assert r["gone"] and {a["value"] for a in r["acked_by_zombie"]} <= set(r["gone"])
    _logs(r)


def test_a_former_leader_that_kept_a_zombie_write_fails(recording: Recording) -> None:
    r = recording("partition-zombie-logs")
    kept = r["acked_by_zombie"][0]
    r["old"][r["divergence"]] = {"offset": r["divergence"], "value": kept["value"]}
    with pytest.raises(AssertionError, match=rf"still holds 1 records .*{kept['value']}"):
        _logs(r)


def test_a_former_leader_that_did_not_catch_up_fails(recording: Recording) -> None:
    r = recording("partition-zombie-logs")
    r["old"] = r["old"][:-1]
    with pytest.raises(AssertionError, match="differs from the new leader's"):
        _logs(r)


def _reset(r: dict[str, Any], name: str) -> None:
    client = "java" if "-java-" in name else "librdkafka"
    assert_resumed_at_divergence(client, typed(list[ClientRecord], r["reads"]), typed(list[ConsumerError], r["errors"]),
                                 r["divergence"], r["position_before"], _log(r["new_leader_writes"]))


@pytest.mark.parametrize("name", RESETS)
def test_recorded_resets_after_the_zombie_pass(recording: Recording, name: str) -> None:
    _reset(recording(name), name)


@pytest.mark.parametrize("name", RESETS)
def test_a_reset_to_the_wrong_offset_fails(recording: Recording, name: str) -> None:
    """A consumer that resumed one record past the divergence point skipped the new leader's first record."""
    r = recording(name)
    r["reads"] = r["reads"][1:]
    with pytest.raises(AssertionError, match=rf"resumed at offset {r['divergence'] + 1}"):
        _reset(r, name)


def test_recorded_minority_leader_writes_pass(recording: Recording) -> None:
    r = recording("partition-minority-leader")
    assert_no_acknowledged_write_lost(_writes(r["writes"]), _log(r["log"]))


def test_a_lost_acknowledged_write_fails(recording: Recording) -> None:
    r = recording("partition-minority-leader")
    lost = next(w for w in r["writes"] if w["value"].startswith("majority-after-election"))
    r["log"] = [x for x in r["log"] if x["value"] != lost["value"]]
    with pytest.raises(AssertionError, match=rf"1 of {len(r['writes'])} acknowledged writes .*{lost['value']}"):
        assert_no_acknowledged_write_lost(_writes(r["writes"]), _log(r["log"]))


def test_a_write_acknowledged_at_another_offset_fails(recording: Recording) -> None:
    """An acknowledgement from the cut-off leader: its offset now holds another record."""
    r = recording("partition-minority-leader")
    r["writes"].append({"value": "acked-by-the-zombie", "offset": r["log"][-1]["offset"], "error": None})
    with pytest.raises(AssertionError, match="acked-by-the-zombie"):
        assert_no_acknowledged_write_lost(_writes(r["writes"]), _log(r["log"]))


def test_a_duplicated_write_fails(recording: Recording) -> None:
    r = recording("partition-minority-leader")
    r["log"].append({"offset": r["log"][-1]["offset"] + 1, "value": r["log"][0]["value"]})
    with pytest.raises(AssertionError, match="more than once"):
        assert_no_acknowledged_write_lost(_writes(r["writes"]), _log(r["log"]))


def _controller(r: dict[str, Any], cut_for: float = 7.0) -> None:
    assert_served_without_the_controller(_writes(r["writes"]), _log(r["reads"]), cut_for, 3.0)


def test_recorded_controller_cut_off_passes(recording: Recording) -> None:
    r = recording("partition-controller-cut-off")
    _controller(r)
    assert_no_acknowledged_write_lost(_writes(r["writes"]), _log(r["log"]))


def test_a_write_refused_while_the_controller_is_cut_off_fails(recording: Recording) -> None:
    r = recording("partition-controller-cut-off")
    w = next(w for w in r["writes"] if w["value"].startswith("controller-cut-off"))
    w.update(offset=None, error="Broker: Request timed out")
    with pytest.raises(AssertionError, match=r"1 of .* writes while the controller was cut off failed"):
        _controller(r)


def test_a_cut_shorter_than_the_session_timeout_is_the_harness_s_error(recording: Recording) -> None:
    with pytest.raises(SceneUnmet, match=r"the harness cut the controller off for 2\.0 s"):
        _controller(recording("partition-controller-cut-off"), cut_for=2.0)


def test_recorded_fenced_follower_stayed_out(recording: Recording) -> None:
    r = recording("partition-fenced-follower")
    assert_fenced_replica_kept_out_of_the_isr(typed(list[IsrSample], r["watched"]), r["follower"])


def test_a_fenced_follower_added_back_fails(recording: Recording) -> None:
    """A leader (or controller) that let a fenced, caught-up replica back in: it would count for acks=all."""
    r = recording("partition-fenced-follower")
    r["watched"][-1]["isr"].append(r["follower"])
    with pytest.raises(AssertionError, match=rf"fenced follower {r['follower']} was added back to the ISR"):
        assert_fenced_replica_kept_out_of_the_isr(typed(list[IsrSample], r["watched"]), r["follower"])


def test_a_follower_that_never_caught_up_is_a_premise_the_target_refused(recording: Recording) -> None:
    r = recording("partition-fenced-follower")
    for w in r["watched"]:
        w["follower_log_end"] = w["leader_log_end"] - 1
    with pytest.raises(TargetRefused, match=rf"the fenced follower {r['follower']} never caught up"):
        assert_fenced_replica_kept_out_of_the_isr(typed(list[IsrSample], r["watched"]), r["follower"])
