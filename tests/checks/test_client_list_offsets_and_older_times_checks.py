"""The client checks reject a client that breaks their promises (recorded 4.4.0 runs, altered):
ListOffsets fenced with the epoch Metadata gave, offsetsForTimes of a record in an older epoch."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import Alteration, alteration, altered, raw, typed

from harness.checks.client_list_offsets import assert_list_offsets_fenced_with_the_told_epoch
from harness.checks.offsets_for_times_older import assert_lookup_in_an_older_epoch_carries_its_batch_epoch
from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.client_reactions import ResetAheadRun
from harness.histories.older_epoch_lookup import OlderEpochLookup
from harness.promises import catalogue

STACKS = ("librdkafka", "java", "franz-go")
FENCED_RUNS = [f"kip320-list-offsets-fenced-{c}-{r}" for c in STACKS for r in ("earliest", "latest")]
OLDER_RUNS = [f"kip320-offsets-for-times-older-{c}" for c in STACKS]
FENCED, OLDER = "kip320.consumer.list-offsets-fenced", "kip320.consumer.offsets-for-times-epoch"


def kind(name: str) -> type:
    return ResetAheadRun if name in FENCED_RUNS else OlderEpochLookup


def check_of(name: str) -> Any:
    return assert_list_offsets_fenced_with_the_told_epoch if name in FENCED_RUNS else \
        assert_lookup_in_an_older_epoch_carries_its_batch_epoch


def _true_epoch(old: Any, data: dict) -> int:
    return int(data["epoch"])


def _metadata_epoch(value: int) -> Any:
    def change(learned: list, data: dict) -> list:
        return [{**m, "epoch": value} if m["source"] == "Metadata" else m for m in learned]
    return change


def _not_held(learned: list, data: dict) -> list:
    return [{**m, "epoch": data["epoch"]} if m["source"] == "Metadata" else m for m in learned]


ALTERATIONS = [
    *[a for name in FENCED_RUNS for a in (
        alteration(f"{name}-unfenced", FENCED, name, "list_offsets[*].current", -1,
                   assert_list_offsets_fenced_with_the_told_epoch, "CurrentLeaderEpoch -1"),
        alteration(f"{name}-the-epoch-it-was-not-told", FENCED, name, "list_offsets[*].current", _true_epoch,
                   assert_list_offsets_fenced_with_the_told_epoch, "not its current one"),
        alteration(f"{name}-an-epoch-from-nowhere", FENCED, name, "list_offsets[*].current", 7,
                   assert_list_offsets_fenced_with_the_told_epoch, "CurrentLeaderEpoch 7"),
        alteration(f"{name}-before-v4", FENCED, name, "list_offsets[*].version", 3,
                   assert_list_offsets_fenced_with_the_told_epoch, "sent ListOffsets v[3]", ClientLacks),
        alteration(f"{name}-no-list-offsets", FENCED, name, "list_offsets", [],
                   assert_list_offsets_fenced_with_the_told_epoch, "sent no ListOffsets", TargetRefused),
        alteration(f"{name}-no-epoch-told", FENCED, name, "learned", _metadata_epoch(-1),
                   assert_list_offsets_fenced_with_the_told_epoch, "no leader epoch", TargetRefused),
        alteration(f"{name}-metadata-not-held", FENCED, name, "learned", _not_held,
                   assert_list_offsets_fenced_with_the_told_epoch, "was not held behind", SceneUnmet),
    )],
    # A librdkafka before its first KIP-320 consumer sends -1: the client's lack, not a FAIL.
    Alteration("librdkafka-before-kip-320-unfenced", FENCED, "kip320-list-offsets-fenced-librdkafka-earliest",
               (("release.release", "2.0.2"), ("list_offsets[*].current", -1)),
               assert_list_offsets_fenced_with_the_told_epoch, "predates 2.1.0", ClientLacks),
    *[a for name in OLDER_RUNS for a in (
        alteration(f"{name}-echoes-metadata", OLDER, name, "run.lookup.epoch", lambda old, data: data["current_epoch"],
                   assert_lookup_in_an_older_epoch_carries_its_batch_epoch, "got offset 25 epoch 2"),
        alteration(f"{name}-another-offset", OLDER, name, "run.lookup.offset", 26,
                   assert_lookup_in_an_older_epoch_carries_its_batch_epoch, "got offset 26"),
        alteration(f"{name}-no-second-move", OLDER, name, "current_epoch", 1,
                   assert_lookup_in_an_older_epoch_carries_its_batch_epoch, "older than the partition's",
                   TargetRefused),
        alteration(f"{name}-looked-up-after-the-second-move", OLDER, name, "moved_again_at", 25,
                   assert_lookup_in_an_older_epoch_carries_its_batch_epoch, "not one written between", SceneUnmet),
    )],
]


@pytest.mark.parametrize("name", FENCED_RUNS + OLDER_RUNS)
def test_the_recorded_run_passes(name: str) -> None:
    check_of(name)(typed(kind(name), raw(name)))


def test_the_recorded_scenes_happened() -> None:
    """Each consumer's Metadata was held behind the partition's epoch when it sent ListOffsets, and each
    lookup found a record older than the current epoch."""
    for name in FENCED_RUNS:
        run = typed(ResetAheadRun, raw(name))
        told = [m.epoch for m in run.learned if m.source == "Metadata" and m.at <= run.list_offsets_at[0]]
        assert told and max(told) < run.epoch and all(a.current == max(told) for a in run.list_offsets), name
    for name in OLDER_RUNS:
        h = typed(OlderEpochLookup, raw(name))
        assert h.run.lookup is not None and h.run.lookup.epoch is not None
        assert h.run.lookup.epoch < h.current_epoch, name


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_history_fails_its_check(a: Alteration) -> None:
    history = altered(a, kind(a.recording))
    with pytest.raises(a.raises) as caught:
        a.check(history)
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"


def test_the_alterations_are_of_known_promises_and_unique() -> None:
    assert {a.promise for a in ALTERATIONS} <= set(catalogue())
    assert len({a.id for a in ALTERATIONS}) == len(ALTERATIONS)
