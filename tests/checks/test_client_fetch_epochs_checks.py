"""The Fetch-epoch checks reject a consumer that fences with an epoch it was not told, fences nothing,
validates ahead of its metadata, or loses or rereads records after a reset (recorded, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import Alteration, alteration, altered, raw, typed

from harness.checks.client_fetch_epochs import (
    GRACE_S,
    assert_fetch_epochs_follow_metadata,
    assert_reset_ahead_of_metadata_read_from_the_reset,
    known_epochs,
)
from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.client_reactions import METADATA, EpochLearned, FetchEpochRun, ResetAheadRun
from harness.promises import catalogue

CLIENTS = ("librdkafka", "java")
MOVES = [f"kip320-fetch-epochs-{c}" for c in (*CLIENTS, "franz-go")]
RESETS = [f"kip320-reset-ahead-{c}-{r}" for c in CLIENTS for r in ("earliest", "latest")]
# franz-go v1.22.2 on the live run: a Fetch fenced after the reset makes it validate the ListOffsets
# epoch at once, its Metadata still behind (pkg/kgo/source.go, the FencedLeaderEpoch case: an epoch
# load at the cursor's lastConsumedEpoch, which a ListOffsets answer set; consumer.go builds the
# request's CurrentLeaderEpoch from the partition's metadata epoch).
RECORDED_FAILURES = [(f"kip320-reset-ahead-franz-go-{r}", "checked for truncation at an epoch its Metadata had not "
                      "reached: OffsetsForLeaderEpoch at") for r in ("earliest", "latest")]
FOLLOWS, AHEAD = "kip320.consumer.fetch-epoch-from-metadata", "kip320.consumer.reset-epoch-ahead-of-metadata"


def kind(recording: str) -> type:
    return FetchEpochRun if recording.startswith("kip320-fetch-epochs-") else ResetAheadRun


def check_of(recording: str) -> Any:
    return assert_fetch_epochs_follow_metadata if kind(recording) is FetchEpochRun else \
        assert_reset_ahead_of_metadata_read_from_the_reset


@pytest.mark.parametrize("name", MOVES + RESETS)
def test_the_recorded_run_passes(name: str) -> None:
    check_of(name)(typed(kind(name), raw(name)))


@pytest.mark.parametrize(("name", "shows"), RECORDED_FAILURES, ids=[r[0] for r in RECORDED_FAILURES])
def test_the_recorded_failure_fails(name: str, shows: str) -> None:
    with pytest.raises(AssertionError) as caught:
        assert_reset_ahead_of_metadata_read_from_the_reset(typed(ResetAheadRun, raw(name)))
    assert shows in str(caught.value)


def test_the_recorded_scenes_happened() -> None:
    """The premises the checks rest on hold in the recordings: a leader move to a higher epoch with
    Fetches after it, and a reset whose ListOffsets epoch was ahead of the held Metadata."""
    for name in MOVES:
        run = typed(FetchEpochRun, raw(name))
        assert run.move is not None and run.move.epoch_after > run.move.epoch_before, name
        assert any(f.current == run.move.epoch_after for f in run.fetches), name
    for name in RESETS + [r[0] for r in RECORDED_FAILURES]:
        run = typed(ResetAheadRun, raw(name))
        answer = next(a for a in run.list_offsets if a.error == "NONE")
        assert run.held >= 1 and answer.epoch == run.epoch >= 1 and run.released is not None, name


def _after_move(data: Any) -> int:
    """The index of the last Fetch entry (sent after the move)."""
    return len(data["fetches"]) - 1


def _old_epoch(old: Any, data: Any) -> int:
    return int(data["move"]["epoch_before"])


def _all(value: int) -> Any:
    return lambda old, data: [{**f, "current": value} for f in old]


def _told_new(data: Any) -> float:
    """When the consumer was first told the new epoch."""
    return min(m["at"] for m in data["learned"] if m["epoch"] >= data["move"]["epoch_after"])


def _fetches_before_the_move(old: Any, data: Any) -> Any:
    return [f for f in old if f["at"] <= _told_new(data)]


def _long_after(old: Any, data: Any) -> float:
    """A time well past every epoch the consumer was told (no answer is still being taken in)."""
    return float(max(m["at"] for m in data["learned"]) + 3 * GRACE_S)


def _before_the_new_epoch(old: Any, data: Any) -> Any:
    return [m for m in old if m["epoch"] < data["move"]["epoch_after"]]


def _reset_fetches(value: int) -> Any:
    """Every Fetch entry after the reset answer fenced with `value`."""
    def change(old: Any, data: Any) -> Any:
        at = data["list_offsets_at"][0]
        return [{**f, "current": value} if f["at"] > at else f for f in old]
    return change


def _early_validation(old: Any, data: Any) -> Any:
    """An OffsetsForLeaderEpoch about the ListOffsets epoch, sent with the held epoch just after the reset."""
    at = data["list_offsets_at"][0]
    return [*old, {"at": at + 0.01, "current": data["epoch"] - 1, "leader_epoch": data["epoch"]}]


def _not_held(old: Any, data: Any) -> Any:
    return [{**m, "epoch": data["epoch"]} for m in old]


def _own_answers_without_epoch(old: Any, data: Any) -> Any:
    """The target's own Metadata answers (after the hold) with LeaderEpoch -1, as a broker without epochs."""
    return [{**m, "epoch": -1} if m["source"] == METADATA and m["at"] > data["released"] else m for m in old]


ALTERATIONS: list[Alteration] = [
    *[a for c in CLIENTS for a in (
        Alteration(f"{c}-a-fetch-after-the-move-at-the-old-epoch", FOLLOWS, f"kip320-fetch-epochs-{c}",
                   (("fetches[-1].at", _long_after), ("fetches[-1].current", _old_epoch)),
                   assert_fetch_epochs_follow_metadata, "that was not its current one"),
        alteration(f"{c}-a-fetch-at-an-epoch-never-told", FOLLOWS, f"kip320-fetch-epochs-{c}",
                   "fetches[0].current", 99, assert_fetch_epochs_follow_metadata, "CurrentLeaderEpoch 99"),
        alteration(f"{c}-a-fetch-unfenced", FOLLOWS, f"kip320-fetch-epochs-{c}",
                   "fetches[-1].current", -1, assert_fetch_epochs_follow_metadata, "CurrentLeaderEpoch -1"),
        alteration(f"{c}-every-fetch-unfenced-by-a-release-that-fences", FOLLOWS, f"kip320-fetch-epochs-{c}",
                   "fetches", _all(-1), assert_fetch_epochs_follow_metadata, "fenced none of its Fetches"),
        Alteration(f"{c}-every-fetch-unfenced-by-an-older-release", FOLLOWS, f"kip320-fetch-epochs-{c}",
                   (("fetches", _all(-1)), ("release.release", "2.0.0")), assert_fetch_epochs_follow_metadata,
                   "predates", ClientLacks),
        alteration(f"{c}-no-move", FOLLOWS, f"kip320-fetch-epochs-{c}", "move", None,
                   assert_fetch_epochs_follow_metadata, "leader move did not happen", SceneUnmet),
        # A client the target never served read nothing, so the harness never moved the leader.
        Alteration(f"{c}-served-nothing-so-no-move", FOLLOWS, f"kip320-fetch-epochs-{c}",
                   (("move", None), ("reads", [])), assert_fetch_epochs_follow_metadata,
                   "served java none of the records" if c == "java" else "none of the records", TargetRefused),
        alteration(f"{c}-no-fetch-after-the-move", FOLLOWS, f"kip320-fetch-epochs-{c}", "fetches",
                   _fetches_before_the_move, assert_fetch_epochs_follow_metadata, "sent no Fetch after it was told",
                   SceneUnmet),
        alteration(f"{c}-never-told-the-new-epoch", FOLLOWS, f"kip320-fetch-epochs-{c}", "learned",
                   _before_the_new_epoch, assert_fetch_epochs_follow_metadata, "", SceneUnmet),
        Alteration(f"{c}-metadata-without-epochs", FOLLOWS, f"kip320-fetch-epochs-{c}",
                   (("learned", []), ("exchanges[*].version", 5)), assert_fetch_epochs_follow_metadata,
                   "none from v7", ClientLacks),
        # The target's Metadata v7+ gave no epoch (LeaderEpoch -1): the client had none to fence with.
        alteration(f"{c}-target-gave-no-epoch", FOLLOWS, f"kip320-fetch-epochs-{c}", "learned[*].epoch", -1,
                   assert_fetch_epochs_follow_metadata, "LeaderEpoch -1", TargetRefused),
        Alteration(f"{c}-target-gave-no-epoch-and-every-fetch-unfenced", FOLLOWS, f"kip320-fetch-epochs-{c}",
                   (("learned[*].epoch", -1), ("fetches", _all(-1))), assert_fetch_epochs_follow_metadata,
                   "LeaderEpoch -1", TargetRefused),
    )],
    *[a for name in RESETS for a in (
        alteration(f"{name}-fetches-unfenced-after-the-reset", AHEAD, name, "fetches", _reset_fetches(-1),
                   assert_reset_ahead_of_metadata_read_from_the_reset, "fenced none of its Fetches"),
        alteration(f"{name}-a-fetch-unfenced-after-the-reset", AHEAD, name, "fetches[-1].current", -1,
                   assert_reset_ahead_of_metadata_read_from_the_reset, "CurrentLeaderEpoch -1"),
        alteration(f"{name}-fetch-at-an-epoch-never-told", AHEAD, name, "fetches", _reset_fetches(7),
                   assert_reset_ahead_of_metadata_read_from_the_reset, "neither Metadata nor ListOffsets"),
        alteration(f"{name}-validation-ahead-of-metadata", AHEAD, name, "validations", _early_validation,
                   assert_reset_ahead_of_metadata_read_from_the_reset, "checked for truncation at an epoch"),
        alteration(f"{name}-first-record-lost", AHEAD, name, "reads", lambda old, data: old[1:],
                   assert_reset_ahead_of_metadata_read_from_the_reset, "expected offsets"),
        alteration(f"{name}-reset-again-and-reread", AHEAD, name, "reads", lambda old, data: old[:3] + old,
                   assert_reset_ahead_of_metadata_read_from_the_reset, "once each"),
        alteration(f"{name}-reported-an-error", AHEAD, name, "errors",
                   [{"event": "error", "detail": {"code": "_AUTO_OFFSET_RESET", "message": "reset"}}],
                   assert_reset_ahead_of_metadata_read_from_the_reset, "_AUTO_OFFSET_RESET"),
        alteration(f"{name}-metadata-never-behind", AHEAD, name, "learned", _not_held,
                   assert_reset_ahead_of_metadata_read_from_the_reset, "was not behind", SceneUnmet),
        alteration(f"{name}-never-released", AHEAD, name, "released", None,
                   assert_reset_ahead_of_metadata_read_from_the_reset, "never answered", SceneUnmet),
        alteration(f"{name}-list-offsets-refused", AHEAD, name, "list_offsets[*].error", "NOT_LEADER_OR_FOLLOWER",
                   assert_reset_ahead_of_metadata_read_from_the_reset, "ListOffsets", TargetRefused),
        # The epoch ahead of Metadata is the target's to return: without it there is no scene.
        alteration(f"{name}-list-offsets-without-epoch", AHEAD, name, "list_offsets[*].epoch", -1,
                   assert_reset_ahead_of_metadata_read_from_the_reset, "with LeaderEpoch -1", TargetRefused),
        alteration(f"{name}-list-offsets-before-v4", AHEAD, name, "list_offsets[*].version", 3,
                   assert_reset_ahead_of_metadata_read_from_the_reset, "asked ListOffsets v3", ClientLacks),
    )],
    # Java asked Metadata again after the hold (librdkafka did not: nothing of the target's to judge).
    *[alteration(f"{name}-own-metadata-without-epoch", AHEAD, name, "learned", _own_answers_without_epoch,
                 assert_reset_ahead_of_metadata_read_from_the_reset, "gave no leader epoch: Metadata v", TargetRefused)
      for name in RESETS if "-java-" in name],
]


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_history_fails_its_check(a: Alteration) -> None:
    history = altered(a, kind(a.recording))
    with pytest.raises(a.raises) as caught:
        a.check(history)
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"


def test_the_alterations_are_of_known_promises_and_unique() -> None:
    known = set(catalogue())
    assert {a.promise for a in ALTERATIONS} <= known
    assert len({a.id for a in ALTERATIONS}) == len(ALTERATIONS)


def test_an_answer_not_yet_taken_in_lets_the_epoch_before_it_stand() -> None:
    """Within GRACE_S of a new answer the epoch before it is still current; after it, only the new one
    (or the highest known) is."""
    learned = [EpochLearned(1.0, METADATA, 12, 1, 4), EpochLearned(5.0, METADATA, 12, 2, 5)]
    assert known_epochs(learned, 5.0 + GRACE_S / 2) == {4, 5}
    assert known_epochs(learned, 5.0 + GRACE_S * 2) == {5}
    assert known_epochs(learned, 0.5) == set()
    stale = [*learned, EpochLearned(9.0, METADATA, 12, 2, 4)]  # a lagging broker's answer, after the new one
    assert known_epochs(stale, 9.0 + GRACE_S * 2) == {4, 5}


@pytest.mark.parametrize("name", [f"kip320-fetch-epochs-{c}" for c in CLIENTS])
def test_an_unfenced_fetch_before_any_epoch_was_told_is_no_failure(name: str) -> None:
    """A Fetch entry sent before the target had told the consumer any epoch carries -1 and breaks
    nothing: there was no epoch to send. The same entry once an epoch was told fails."""
    data = raw(name)
    first_told = min(m["at"] for m in data["learned"] if m["epoch"] >= 0)
    data["fetches"].insert(0, {**data["fetches"][0], "at": first_told - 0.1, "current": -1})
    assert_fetch_epochs_follow_metadata(typed(FetchEpochRun, data))
    data["fetches"][0]["at"] = first_told + 3 * GRACE_S
    with pytest.raises(AssertionError, match="CurrentLeaderEpoch -1"):
        assert_fetch_epochs_follow_metadata(typed(FetchEpochRun, data))
