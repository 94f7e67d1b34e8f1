"""The Java consumer API checks and the producer-epoch check reject a client that breaks
their promises (recorded 4.4.0 runs, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import Alteration, Change, alteration, altered, raw, typed

from harness.checks.java_consumer_api import (
    assert_old_constructors_commit_no_epoch,
    assert_seek_with_epoch_makes_no_remote_call,
    assert_truncation_is_an_out_of_range_exception,
    assert_truncation_reset_is_logged,
)
from harness.checks.producer_epochs import assert_produce_carries_the_metadata_epoch
from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.java_consumer_api import OUT_OF_RANGE, OldConstructorCommits, SeekTruncation, SeekWindow
from harness.histories.producer_epochs import ProducerEpochRun
from harness.promises import catalogue

NONE, RESETS = "kip320-java-api-truncation-none", ("kip320-java-api-truncation-earliest",
                                                   "kip320-java-api-truncation-latest")
WINDOW, COMMITS = "kip320-java-api-seek-window", "kip320-java-api-commits"
PRODUCERS = tuple(f"kip359-producer-epochs-{c}" for c in ("librdkafka", "java", "franz-go"))
OOR, LOGGED = "kip320.consumer.log-truncation-is-out-of-range", "kip320.consumer.reset-logs-truncation"
NO_CALL, OLD_CTOR = "kip320.consumer.seek-makes-no-remote-call", "kip320.consumer.old-constructors-commit-no-epoch"
PRODUCE = "kip359.producer.sends-metadata-epoch"
KINDS = {NONE: SeekTruncation, **dict.fromkeys(RESETS, SeekTruncation), WINDOW: SeekWindow,
         COMMITS: OldConstructorCommits, **dict.fromkeys(PRODUCERS, ProducerEpochRun)}
CHECKS = {NONE: assert_truncation_is_an_out_of_range_exception,
          **dict.fromkeys(RESETS, assert_truncation_reset_is_logged),
          WINDOW: assert_seek_with_epoch_makes_no_remote_call, COMMITS: assert_old_constructors_commit_no_epoch}


def _caught_as_exception(errors: list, data: dict) -> list:
    """What an application catching OffsetOutOfRangeException would see of a truncation that is not one."""
    return [{**e, "caught_as": "Exception", "out_of_range": False,
             "types": [t for t in e["types"] if t != OUT_OF_RANGE]} for e in errors]


def _untyped(errors: list, data: dict) -> list:
    return [{**e, "types": [t for t in e["types"] if t != OUT_OF_RANGE]} for e in errors]


def _read_the_divergent(reads: list, data: dict) -> list:
    return [*reads, {"offset": data["log"]["moved_at"], "value": "after-0", "epoch": 1}]


def _validation_answer(offset: int) -> Change:
    def change(asks: list, data: dict) -> list:
        return [{**a, "offset": offset} if a["api"] == "OffsetForLeaderEpoch" else a for a in asks]
    return change


def _no_truncation_line(lines: list, data: dict) -> list:
    return [line for line in lines if "Truncation detected" not in line]


def _only_the_client_id_says_it(lines: list, data: dict) -> list:
    """The truncation line gone; the harness's own client id saying "truncation" in every other line."""
    return [line.replace("clientId=seek-past", "clientId=truncation-seek") for line in _no_truncation_line(lines, data)]


def _request_in_the_window(sent: list, data: dict) -> list:
    start = data["window"][0]
    return sorted([*sent, {"at": start + 0.05, "api": "OffsetForLeaderEpoch", "version": 4}], key=lambda s: s["at"])


def _nothing_after(sent: list, data: dict) -> list:
    return [s for s in sent if s["at"] <= data["window"][1]]


def _commit(index: int, field: str, value: object) -> Change:
    def change(commits: list, data: dict) -> list:
        commits[index] = {**commits[index], field: value}
        return commits
    return change


def _produce_epoch(value: int | None) -> Change:
    def change(entries: list, data: dict) -> list:
        return [{**e, "epoch": value, "fields": [*e["fields"], "CurrentLeaderEpoch"]} for e in entries]
    return change


def _told_epoch(entries: list, data: dict) -> list:
    told = max(m["epoch"] for m in data["learned"] if m["source"] == "Metadata")
    return _produce_epoch(told)(entries, data)


def _no_epoch_told(learned: list, data: dict) -> list:
    return [{**m, "epoch": -1} for m in learned]


ALTERATIONS = [
    alteration("not-an-out-of-range-exception", OOR, NONE, "errors", _caught_as_exception,
               assert_truncation_is_an_out_of_range_exception, "raised nothing an application catching"),
    alteration("not-typed-out-of-range", OOR, NONE, "errors", _untyped,
               assert_truncation_is_an_out_of_range_exception, "is not typed"),
    alteration("raised-nothing", OOR, NONE, "errors", [], assert_truncation_is_an_out_of_range_exception,
               "raised nothing"),
    alteration("another-divergent-offset", OOR, NONE, "errors[0].divergent[0].offset", 25,
               assert_truncation_is_an_out_of_range_exception, "not partition 0 at 20"),
    alteration("read-past-the-truncation", OOR, NONE, "reads", _read_the_divergent,
               assert_truncation_is_an_out_of_range_exception, "also read"),
    alteration("leader-answered-no-truncation", OOR, NONE, "asks", _validation_answer(30),
               assert_truncation_is_an_out_of_range_exception, "did not answer", TargetRefused),
    alteration("scene-with-a-reset-policy", OOR, NONE, "reset", "earliest",
               assert_truncation_is_an_out_of_range_exception, "no reset policy", SceneUnmet),
    *[a for name in RESETS for a in (
        alteration(f"{name}-not-logged", LOGGED, name, "log_lines", _no_truncation_line,
                   assert_truncation_reset_is_logged, "no line about the truncation"),
        alteration(f"{name}-only-the-client-id-says-truncation", LOGGED, name, "log_lines",
                   _only_the_client_id_says_it, assert_truncation_reset_is_logged, "no line about the truncation"),
        alteration(f"{name}-resumed-at-its-position", LOGGED, name, "reads", lambda old, data: old[5:],
                   assert_truncation_reset_is_logged, "did not reset to the divergent offset"),
        alteration(f"{name}-raised", LOGGED, name, "errors", lambda old, data: raw(NONE)["errors"],
                   assert_truncation_reset_is_logged, "LogTruncationException"),
    )],
    alteration("request-in-the-window", NO_CALL, WINDOW, "sent", _request_in_the_window,
               assert_seek_with_epoch_makes_no_remote_call, "OffsetForLeaderEpoch v4"),
    alteration("nothing-sent-after", NO_CALL, WINDOW, "sent", _nothing_after,
               assert_seek_with_epoch_makes_no_remote_call, "sent nothing once polled", SceneUnmet),
    alteration("not-quiet-before", NO_CALL, WINDOW, "quiet", 0.2, assert_seek_with_epoch_makes_no_remote_call,
               "quiet 0.200s", SceneUnmet),
    alteration("offset-constructor-commits-the-consumed-epoch", OLD_CTOR, COMMITS, "commits",
               _commit(0, "sent", [[9, 1]]), assert_old_constructors_commit_no_epoch, "CommittedLeaderEpoch [1]"),
    alteration("metadata-constructor-builds-an-epoch", OLD_CTOR, COMMITS, "commits", _commit(1, "built_epoch", 1),
               assert_old_constructors_commit_no_epoch, "leaderEpoch() 1"),
    alteration("old-commit-never-sent", OLD_CTOR, COMMITS, "commits", _commit(0, "sent", []),
               assert_old_constructors_commit_no_epoch, "no OffsetCommit of offset 5"),
    alteration("no-epoch-on-the-wire", OLD_CTOR, COMMITS, "commits", _commit(2, "sent", [[9, -1]]),
               assert_old_constructors_commit_no_epoch, "OffsetCommit (v6+", ClientLacks),
    alteration("offset-commit-before-v6", OLD_CTOR, COMMITS, "commits", _commit(2, "sent", [[5, -1]]),
               assert_old_constructors_commit_no_epoch, "OffsetCommit (v6+", ClientLacks),
    alteration("consumed-at-no-epoch", OLD_CTOR, COMMITS, "consumed_epoch", -1,
               assert_old_constructors_commit_no_epoch, "no epoch it could", TargetRefused),
    *[a for name in PRODUCERS for a in (
        alteration(f"{name}-unfenced", PRODUCE, name, "entries", _produce_epoch(-1),
                   assert_produce_carries_the_metadata_epoch, "CurrentLeaderEpoch -1"),
        alteration(f"{name}-an-untold-epoch", PRODUCE, name, "entries", _produce_epoch(9),
                   assert_produce_carries_the_metadata_epoch, "CurrentLeaderEpoch 9"),
        alteration(f"{name}-no-epoch-told", PRODUCE, name, "learned", _no_epoch_told,
                   assert_produce_carries_the_metadata_epoch, "no leader epoch", TargetRefused),
        alteration(f"{name}-nothing-acknowledged", PRODUCE, name, "acked", 0,
                   assert_produce_carries_the_metadata_epoch, "acknowledged", TargetRefused),
    )],
]


@pytest.mark.parametrize("name", [NONE, *RESETS, WINDOW, COMMITS])
def test_the_recorded_run_passes(name: str) -> None:
    CHECKS[name](typed(KINDS[name], raw(name)))


@pytest.mark.parametrize("name", PRODUCERS)
def test_a_recorded_producer_without_the_field_is_not_supported_by_the_client(name: str) -> None:
    """No Apache client sends KIP-359's field (Apache Kafka's Produce has it at no version): "not supported
    by this client", with the versions and fields it sent."""
    with pytest.raises(ClientLacks, match=r"Produce v\d+-\d+, fields \['Index', 'Records'\]: no CurrentLeaderEpoch"):
        assert_produce_carries_the_metadata_epoch(typed(ProducerEpochRun, raw(name)))


@pytest.mark.parametrize("name", PRODUCERS)
def test_a_producer_fencing_with_the_epoch_metadata_gave_passes(name: str) -> None:
    data = raw(name)
    data["entries"] = _told_epoch(data["entries"], data)
    assert_produce_carries_the_metadata_epoch(typed(ProducerEpochRun, data))


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_history_fails_its_check(a: Alteration) -> None:
    history: Any = altered(a, KINDS[a.recording])
    with pytest.raises(a.raises) as caught:
        a.check(history)
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"


def test_the_alterations_are_of_known_promises_and_unique() -> None:
    assert {a.promise for a in ALTERATIONS} <= set(catalogue())
    assert len({a.id for a in ALTERATIONS}) == len(ALTERATIONS)
