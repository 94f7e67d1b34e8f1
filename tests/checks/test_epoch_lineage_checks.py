"""The KIP-320 epoch-lineage checks reject answers that break the lineage (recorded 4.4.0 answers, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import Recording, batches, restamp

from harness.checks.epoch_lineage import (
    assert_batches_carry_append_epochs,
    assert_end_offsets,
    assert_epochs_rise,
    assert_list_offsets_epochs,
    assert_metadata_versions_agree,
)
from harness.histories.epochs import Step
from harness.histories.leader_answers import ListOffsetsAtTime
from harness.histories.metadata import MetadataAnswer

LINEAGES = ["leader-moves", "nemesis"]


def _end_offsets(recorded: dict[str, Any]) -> tuple[list, int, int, dict[int, dict[str, Any]]]:
    answers = {int(k): v for k, v in recorded["answers"].items()}  # JSON keys are strings
    return batches(recorded["log"]), recorded["current_epoch"], recorded["log_end"], answers


@pytest.mark.parametrize("lineage", LINEAGES)
def test_recorded_end_offsets_pass(recording: Recording, lineage: str) -> None:
    assert_end_offsets(*_end_offsets(recording(f"kip320-end-offsets-{lineage}")))


@pytest.mark.parametrize("lineage", LINEAGES)
def test_a_past_epoch_ending_off_its_successors_start_fails(recording: Recording, lineage: str) -> None:
    log, current, end, answers = _end_offsets(recording(f"kip320-end-offsets-{lineage}"))
    answers[0]["EndOffset"] += 1
    with pytest.raises(AssertionError, match=r"epoch 0: got NONE\(0\) \(0, \d+\), expected NONE \(0, \d+\)"):
        assert_end_offsets(log, current, end, answers)


def test_the_current_epoch_ending_before_the_log_end_fails(recording: Recording) -> None:
    log, current, end, answers = _end_offsets(recording("kip320-end-offsets-leader-moves"))
    answers[current]["EndOffset"] = end - 1
    with pytest.raises(AssertionError, match=rf"epoch {current}: got .*\({current}, {end - 1}\)"):
        assert_end_offsets(log, current, end, answers)


def test_an_unknown_epoch_without_the_sentinel_fails(recording: Recording) -> None:
    log, current, end, answers = _end_offsets(recording("kip320-end-offsets-nemesis"))
    unknown = max(answers)
    answers[unknown].update(LeaderEpoch=current, EndOffset=end)
    with pytest.raises(AssertionError, match=rf"epoch {unknown}: got NONE\(0\) \({current}, {end}\), "
                                             r"expected NONE \(-1, -1\)"):
        assert_end_offsets(log, current, end, answers)


def test_a_truncated_epoch_answered_with_the_old_leaders_end_fails(recording: Recording) -> None:
    """After the unclean election, the epoch before it must end where the new leader began, not
    where the truncated old leader's log ended."""
    log, current, end, answers = _end_offsets(recording("kip320-end-offsets-nemesis"))
    truncated_epoch = max(e for e in answers if e < current)
    answers[truncated_epoch]["EndOffset"] += 5  # the 5 divergent records the old leader had
    with pytest.raises(AssertionError, match=rf"epoch {truncated_epoch}: got"):
        assert_end_offsets(log, current, end, answers)


def _list_offsets(recorded: dict[str, Any]) -> tuple[list, int, int, list[dict[str, Any]]]:
    return batches(recorded["log"]), recorded["current_epoch"], recorded["log_end"], recorded["answers"]


def _answers(answers: list[dict[str, Any]]) -> list[ListOffsetsAtTime]:
    return typed(list[ListOffsetsAtTime], answers)


def _steps(steps: list[dict[str, Any]]) -> list[Step]:
    return typed(list[Step], steps)


def _metadata(answers: list[dict[str, Any]]) -> list[MetadataAnswer]:
    return typed(list[MetadataAnswer], answers)


@pytest.mark.parametrize("lineage", LINEAGES)
def test_recorded_list_offsets_epochs_pass(recording: Recording, lineage: str) -> None:
    log, current, end, answers = _list_offsets(recording(f"kip320-list-offsets-epochs-{lineage}"))
    assert_list_offsets_epochs(log, current, end, _answers(answers))


@pytest.mark.parametrize("timestamp", [-2, -1])
def test_list_offsets_returning_the_current_epoch_for_an_old_offset_fails(recording: Recording, timestamp: int) -> None:
    log, current, end, answers = _list_offsets(recording("kip320-list-offsets-epochs-leader-moves"))
    a = next(a for a in answers if a["timestamp"] == timestamp)
    a["partition"]["LeaderEpoch"] = current + 1 if timestamp == -1 else current
    with pytest.raises(AssertionError, match=rf"timestamp {timestamp}: got NONE\(0\) \(offset, epoch\)"):
        assert_list_offsets_epochs(log, current, end, _answers(answers))


def test_list_offsets_by_time_returning_another_batchs_epoch_fails(recording: Recording) -> None:
    log, current, end, answers = _list_offsets(recording("kip320-list-offsets-epochs-nemesis"))
    a = next(a for a in answers if a["timestamp"] > 0 and a["partition"]["LeaderEpoch"] > 0)
    a["partition"]["LeaderEpoch"] -= 1
    with pytest.raises(AssertionError, match="does not return the epoch of the offset it returns"):
        assert_list_offsets_epochs(log, current, end, _answers(answers))


@pytest.mark.parametrize("name", [f"kip320-batch-epochs-{h}-{r}" for h in LINEAGES for r in ("leader", "follower")])
def test_recorded_batch_epochs_pass(recording: Recording, name: str) -> None:
    r = recording(name)
    assert_batches_carry_append_epochs(batches(r["log"]), r["appends"], r["replica"])


@pytest.mark.parametrize("name", ["kip320-batch-epochs-nemesis-leader", "kip320-batch-epochs-leader-moves-follower"])
def test_a_batch_stamped_with_another_epoch_fails(recording: Recording, name: str) -> None:
    r = recording(name)
    w = r["appends"][1]
    broken = batches(restamp(r["log"], w["first"], w["epoch"] - 1))  # the epoch before: still non-decreasing
    with pytest.raises(AssertionError, match=rf"offset {w['first']} written in epoch {w['epoch']} is in a batch "
                                             rf"stamped {w['epoch'] - 1}"):
        assert_batches_carry_append_epochs(broken, r["appends"], r["replica"])


def test_epochs_going_down_along_the_log_fails(recording: Recording) -> None:
    r = recording("kip320-batch-epochs-leader-moves-leader")
    w = r["appends"][1]
    broken = batches(restamp(r["log"], w["first"], w["epoch"] + 7))
    with pytest.raises(AssertionError, match=r"batch epochs go down along the log"):
        assert_batches_carry_append_epochs(broken, r["appends"], r["replica"])


def test_a_missing_write_fails(recording: Recording) -> None:
    r = recording("kip320-batch-epochs-nemesis-follower")
    log = [b for b in batches(r["log"]) if b.base_offset < r["appends"][-1]["first"]]
    with pytest.raises(AssertionError, match=r"offset \d+ written in epoch \d+ is missing"):
        assert_batches_carry_append_epochs(log, r["appends"], r["replica"])


def test_recorded_metadata_epochs_pass(recording: Recording) -> None:
    assert_epochs_rise(_steps(recording("kip320-metadata-epochs")["steps"]))


def test_an_election_that_keeps_the_epoch_fails(recording: Recording) -> None:
    steps = recording("kip320-metadata-epochs")["steps"]
    unclean = next(s for s in steps if "unclean" in s["step"])
    previous = steps[steps.index(unclean) - 1]
    unclean["epochs"] = {b: max(previous["epochs"].values()) for b in unclean["epochs"]}
    with pytest.raises(AssertionError, match=r"unclean election .* left the epoch at \d+, after crash"):
        assert_epochs_rise(_steps(steps))


def test_brokers_disagreeing_on_the_epoch_fails(recording: Recording) -> None:
    steps = recording("kip320-metadata-epochs")["steps"]
    broker = next(iter(steps[-1]["epochs"]))
    steps[-1]["epochs"][broker] -= 1
    with pytest.raises(AssertionError, match="brokers disagree on the epoch"):
        assert_epochs_rise(_steps(steps))


def test_recorded_metadata_versions_agree(recording: Recording) -> None:
    r = recording("kip320-metadata-versions")
    assert len({a["version"] for a in r["answers"]}) > 1, "premise: more than one Metadata version was asked"
    assert_metadata_versions_agree(_metadata(r["answers"]), r["reached"])


def test_an_older_metadata_version_giving_a_stale_epoch_fails(recording: Recording) -> None:
    r = recording("kip320-metadata-versions")
    a = min(r["answers"], key=lambda a: a["version"])
    a["epoch"] -= 1
    with pytest.raises(AssertionError, match=rf"broker {a['broker']} Metadata v{a['version']}: leader "
                                             rf"{a['leader']} epoch {a['epoch']}"):
        assert_metadata_versions_agree(_metadata(r["answers"]), r["reached"])


def test_metadata_below_the_epoch_reached_fails(recording: Recording) -> None:
    r = recording("kip320-metadata-versions")
    with pytest.raises(AssertionError, match="below"):
        assert_metadata_versions_agree(_metadata(r["answers"]), max(a["epoch"] for a in r["answers"]) + 1)
