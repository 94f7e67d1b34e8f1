"""The KIP-320 client checks of validation and lookups by time pass on recorded 4.4.0 runs and fail on
copies altered to break their promise (harness/checks/client_validation.py, offsets_for_times.py).

Recorded: each stack's consumers through the protocol proxy (an OffsetsForLeaderEpoch answered
UNDEFINED, one answered with a retriable error and no offset, a seek without an epoch beside a
control with one) and each stack's lookup by time after
a leader move. The alterations are a table: the recording, the field, the new value, the check, the
promise it judges, and what the failure must show.
"""

from __future__ import annotations

from typing import Any

import pytest
from alterations import Alteration, Change, alteration, altered, raw, typed
from recordings import restamp

from harness.checks.client_validation import (
    assert_seek_without_epoch_skips_validation,
    assert_undefined_epoch_resets_by_policy,
    assert_validation_error_retried,
)
from harness.checks.offsets_for_times import assert_lookup_carries_the_batch_epoch, expected_lookup
from harness.errors import ClientLacks, SceneUnmet, TargetRefused
from harness.histories.kip320_clients import (
    OffsetsForTimesRun,
    UndefinedEpochRun,
    UnvalidatedSeekRun,
    ValidationErrorRun,
)
from harness.promises import catalogue

PASSING = ("librdkafka", "java")  # the stacks whose recorded runs keep every one of these promises on 4.4.0
UNDEFINED = [f"kip320-undefined-epoch-{c}-{r}" for c in PASSING for r in ("earliest", "latest", "none")]
SEEKS = [f"kip320-seek-without-epoch-{c}" for c in (*PASSING, "franz-go")]
LOOKUPS = [f"kip320-offsets-for-times-{c}" for c in (*PASSING, "franz-go")]
EPOCH_ERRORS = ("FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH")
RETRIED = [f"kip320-validation-error-{c}-{e}" for c in (*PASSING, "franz-go") for e in EPOCH_ERRORS]


def kind(name: str) -> type:
    if name.startswith("kip320-undefined-epoch-"):
        return UndefinedEpochRun
    if name.startswith("kip320-seek-without-epoch-"):
        return UnvalidatedSeekRun
    if name.startswith("kip320-validation-error-"):
        return ValidationErrorRun
    return OffsetsForTimesRun


def recorded(name: str) -> Any:
    return typed(kind(name), raw(name))


@pytest.mark.parametrize("name", UNDEFINED)
def test_recorded_undefined_epoch_runs_pass(name: str) -> None:
    run = recorded(name)
    assert any(a.ruled for a in run.consumer.asks), "premise: the proxy answered a validation UNDEFINED"
    assert_undefined_epoch_resets_by_policy(run)


@pytest.mark.parametrize("name", RETRIED)
def test_recorded_validation_errors_pass(name: str) -> None:
    run = recorded(name)
    ruled = [a for a in run.consumer.asks if a.ruled]
    assert len(ruled) == run.errored and all(a.error == run.error for a in ruled), (
        "premise: the proxy answered the first validations with the error")
    assert_validation_error_retried(run)


@pytest.mark.parametrize("name", SEEKS)
def test_recorded_seeks_without_epoch_pass(name: str) -> None:
    run = recorded(name)
    assert run.control.of("OffsetForLeaderEpoch"), "premise: the control validated"
    assert_seek_without_epoch_skips_validation(run)


@pytest.mark.parametrize("name", LOOKUPS)
def test_recorded_lookups_by_time_pass(name: str) -> None:
    run = recorded(name)
    assert run.epoch_after > run.epoch_before, "premise: the leader moved"
    assert_lookup_carries_the_batch_epoch(run)


# The franz-go runs recorded on 4.4.0 (franz-go v1.22.2): with nothing consumed yet, kgo keeps the offset it
# was validating when OffsetsForLeaderEpoch answers UNDEFINED, whatever the reset policy, and reads on
# (pkg/kgo/consumer.go loadEpochsForBrokerLoad, "we keep the offset we were validating").
RECORDED_FAILURES = [
    ("kip320-undefined-epoch-franz-go-earliest", "after that answer asked for 15, expected the log start 0"),
    ("kip320-undefined-epoch-franz-go-latest", "after that answer asked for 15, expected the log end 30"),
    ("kip320-undefined-epoch-franz-go-none", "with no reset policy it must report an error and read nothing"),
]


@pytest.mark.parametrize("name,shows", RECORDED_FAILURES, ids=[r[0] for r in RECORDED_FAILURES])
def test_the_recorded_franz_go_failures_fail(name: str, shows: str) -> None:
    with pytest.raises(AssertionError) as caught:
        assert_undefined_epoch_resets_by_policy(recorded(name))
    assert shows in str(caught.value), str(caught.value)


# -- alterations ---------------------------------------------------------------------------------

P = "kip320.consumer."
VALIDATION, FETCH = "OffsetForLeaderEpoch", "Fetch"


def _first_fetch_after_ruled(asks: list[dict[str, Any]], offset: int) -> list[dict[str, Any]]:
    """The asks with the first Fetch after the first ruled answer asking for `offset`."""
    ruled = next(i for i, a in enumerate(asks) if a["ruled"])
    fetch = next(i for i in range(ruled + 1, len(asks)) if asks[i]["api"] == FETCH)
    asks[fetch]["asked"] = offset
    return asks


def _reads_from(offset: int) -> Any:
    """The recording's partition records from `offset` on, as reads at the partition's epoch."""
    def change(old: Any, data: Any) -> list[dict[str, Any]]:
        p = data["partition"]
        return [{"topic": p["topic"], "partition": 0, "offset": o, "value": v.encode(),
                 "leader_epoch": p["leader_epoch"]} for o, v in p["records"] if o >= offset]
    return change


def _validation_first(asks: list[dict[str, Any]], data: Any) -> list[dict[str, Any]]:
    """A validation of the plain consumer before its first Fetch (answered as the proxy answers them)."""
    first = asks[0]
    return [{**first, "api": VALIDATION, "version": 4, "asked": data["sought_epoch"], "offset": data["diverged_at"],
             "epoch": data["sought_epoch"], "error": "NONE", "ruled": True}, *asks]


def _without(api: str) -> Any:
    return lambda asks, _: [a for a in asks if a["api"] != api]


def _unruled(asks: list[dict[str, Any]], _: Any) -> list[dict[str, Any]]:
    return [{**a, "ruled": False} for a in asks]


def _after_first_ruled(ask: dict[str, Any]) -> Change:
    """The asks with `ask` (fields over the first ruled ask's) right after the first ruled one."""
    def change(asks: list[dict[str, Any]], _: Any) -> list[dict[str, Any]]:
        ruled = next(i for i, a in enumerate(asks) if a["ruled"])
        return [*asks[:ruled + 1], {**asks[ruled], "ruled": False, "error": "NONE", **ask}, *asks[ruled + 1:]]
    return change


def _fetch_from(offset: int) -> Change:
    """Every Fetch of the asks asking from `offset` on, in steps of 5, as a consumer reset there would."""
    def change(asks: list[dict[str, Any]], _: Any) -> list[dict[str, Any]]:
        fetches = [i for i, a in enumerate(asks) if a["api"] == FETCH]
        return [{**a, "asked": offset + 5 * fetches.index(i)} if i in fetches else a for i, a in enumerate(asks)]
    return change


def _not_validated_again(asks: list[dict[str, Any]], _: Any) -> list[dict[str, Any]]:
    """The validations answered without error dropped: the consumer never asked again."""
    return [a for a in asks if a["api"] != VALIDATION or a["ruled"]]


def _ruled_answered(error: str) -> Change:
    return lambda asks, _: [{**a, "error": error} if a["ruled"] else a for a in asks]


ERROR = [{"event": "error", "detail": {"code": "_AUTO_OFFSET_RESET", "message": "altered"}}]
LOOKUP = "kip320-offsets-for-times-java"


def _one_epoch(log: bytes, data: Any) -> bytes:
    """Every batch restamped with the epoch before the move, as if the leader never moved."""
    for offset in range(data["moved_at"], data["moved_at"] + 10):
        log = restamp(log, offset, data["epoch_before"])
    return log


ALTERATIONS: list[Alteration] = [
    # -- UNDEFINED_EPOCH_OFFSET answered: the reset policy decides
    *[alteration(f"earliest-read-on-from-the-sought-offset-{c}", P + "undefined-epoch-resets-by-policy",
                 f"kip320-undefined-epoch-{c}-earliest", "consumer.reads", _reads_from(15),
                 assert_undefined_epoch_resets_by_policy, "must read offsets 0..29 once each") for c in PASSING],
    *[alteration(f"earliest-fetching-the-sought-offset-{c}", P + "undefined-epoch-resets-by-policy",
                 f"kip320-undefined-epoch-{c}-earliest", "consumer.asks", lambda a, _: _first_fetch_after_ruled(a, 15),
                 assert_undefined_epoch_resets_by_policy, "asked for 15, expected the log start 0") for c in PASSING],
    *[alteration(f"latest-fetching-the-sought-offset-{c}", P + "undefined-epoch-resets-by-policy",
                 f"kip320-undefined-epoch-{c}-latest", "consumer.asks", lambda a, _: _first_fetch_after_ruled(a, 15),
                 assert_undefined_epoch_resets_by_policy, "asked for 15, expected the log end 30") for c in PASSING],
    *[alteration(f"latest-reading-on-{c}", P + "undefined-epoch-resets-by-policy",
                 f"kip320-undefined-epoch-{c}-latest", "consumer.reads", _reads_from(15),
                 assert_undefined_epoch_resets_by_policy, "it must read nothing") for c in PASSING],
    *[Alteration(f"no-policy-reading-on-silently-{c}", P + "undefined-epoch-resets-by-policy",
                 f"kip320-undefined-epoch-{c}-none", (("consumer.errors", []), ("consumer.reads", _reads_from(15))),
                 assert_undefined_epoch_resets_by_policy, "report an error and read nothing, not read on from 15")
      for c in PASSING],
    *[alteration(f"no-policy-reporting-and-reading-on-{c}", P + "undefined-epoch-resets-by-policy",
                 f"kip320-undefined-epoch-{c}-none", "consumer.reads", _reads_from(15),
                 assert_undefined_epoch_resets_by_policy, "read 15 records, offsets 15..29") for c in PASSING],
    alteration("no-policy-reporting-nothing", P + "undefined-epoch-resets-by-policy",
               "kip320-undefined-epoch-java-none", "consumer.errors", [], assert_undefined_epoch_resets_by_policy,
               "reported nothing"),
    # its premises: a client that never validates is not judged; a rule that never acted is the harness's
    alteration("never-validating-is-not-supported", P + "undefined-epoch-resets-by-policy",
               "kip320-undefined-epoch-librdkafka-earliest", "consumer.asks", _without(VALIDATION),
               assert_undefined_epoch_resets_by_policy, "OffsetsForLeaderEpoch validation", raises=ClientLacks),
    alteration("rule-that-never-acted-is-the-harness-s", P + "undefined-epoch-resets-by-policy",
               "kip320-undefined-epoch-java-latest", "consumer.asks", _unruled,
               assert_undefined_epoch_resets_by_policy, "the proxy's rule acted on none", raises=SceneUnmet),
    alteration("never-reaching-the-target-is-refused", P + "undefined-epoch-resets-by-policy",
               "kip320-undefined-epoch-java-earliest", "consumer.asks", [],
               assert_undefined_epoch_resets_by_policy, "never asked the target", raises=TargetRefused),
    # -- a retriable error answered: the consumer validates again, neither resetting nor reading past it
    *[Alteration(f"error-answer-reset-to-the-log-start-{c}", P + "validation-error-retried",
                 f"kip320-validation-error-{c}-FENCED_LEADER_EPOCH",
                 (("consumer.asks", _fetch_from(0)), ("consumer.reads", _reads_from(0))),
                 assert_validation_error_retried, "its first Fetch asked for 0, expected the offset sought 15")
      for c in (*PASSING, "franz-go")],
    *[alteration(f"error-answer-reset-by-list-offsets-{c}", P + "validation-error-retried",
                 f"kip320-validation-error-{c}-UNKNOWN_LEADER_EPOCH", "consumer.asks",
                 _after_first_ruled({"api": "ListOffsets", "version": 8, "asked": -2, "offset": 0}),
                 assert_validation_error_retried, "it reset the position (ListOffsets)")
      for c in (*PASSING, "franz-go")],
    *[alteration(f"error-answer-fetching-unvalidated-{c}", P + "validation-error-retried",
                 f"kip320-validation-error-{c}-FENCED_LEADER_EPOCH", "consumer.asks",
                 _after_first_ruled({"api": FETCH, "version": 17, "asked": 15, "offset": 30}),
                 assert_validation_error_retried, "it fetched before a validation was answered without error")
      for c in (*PASSING, "franz-go")],
    alteration("error-answer-never-validated-again", P + "validation-error-retried",
               "kip320-validation-error-java-UNKNOWN_LEADER_EPOCH", "consumer.asks", _not_validated_again,
               assert_validation_error_retried, "it did not validate the position again"),
    alteration("error-answer-reported", P + "validation-error-retried",
               "kip320-validation-error-librdkafka-FENCED_LEADER_EPOCH", "consumer.errors", ERROR,
               assert_validation_error_retried, "altered"),
    alteration("error-answer-records-read-twice", P + "validation-error-retried",
               "kip320-validation-error-franz-go-UNKNOWN_LEADER_EPOCH", "consumer.reads",
               lambda old, _: old[:3] + old, assert_validation_error_retried, "read 18 records"),
    # its premises: the answers ruled carried the error; a rule that never acted is the harness's
    alteration("error-answer-without-the-error-is-the-harness-s", P + "validation-error-retried",
               "kip320-validation-error-java-FENCED_LEADER_EPOCH", "consumer.asks", _ruled_answered("NONE"),
               assert_validation_error_retried, "were to answer OffsetsForLeaderEpoch with FENCED_LEADER_EPOCH",
               raises=SceneUnmet),
    alteration("error-answer-rule-that-never-acted", P + "validation-error-retried",
               "kip320-validation-error-librdkafka-UNKNOWN_LEADER_EPOCH", "consumer.asks", _unruled,
               assert_validation_error_retried, "the proxy's rule acted on none", raises=SceneUnmet),
    # -- a seek without an epoch is not validated
    *[alteration(f"validating-a-position-without-epoch-{c}", P + "seek-without-epoch-unvalidated",
                 f"kip320-seek-without-epoch-{c}", "plain.asks", _validation_first,
                 assert_seek_without_epoch_skips_validation, "validated the position without an epoch before fetching")
      for c in PASSING],
    *[Alteration(f"moving-to-the-divergence-{c}", P + "seek-without-epoch-unvalidated",
                 f"kip320-seek-without-epoch-{c}",
                 (("plain.asks[0].asked", 5), ("plain.reads", _reads_from(5))),
                 assert_seek_without_epoch_skips_validation, "its first Fetch asked for 5") for c in PASSING],
    *[alteration(f"reporting-an-error-{c}", P + "seek-without-epoch-unvalidated", f"kip320-seek-without-epoch-{c}",
                 "plain.errors", ERROR, assert_seek_without_epoch_skips_validation, "altered") for c in PASSING],
    alteration("reading-records-twice", P + "seek-without-epoch-unvalidated", "kip320-seek-without-epoch-java",
               "plain.reads", lambda old, _: old[:3] + old, assert_seek_without_epoch_skips_validation,
               "read 18 records"),
    alteration("control-that-never-validated-cannot-pass", P + "seek-without-epoch-unvalidated",
               "kip320-seek-without-epoch-franz-go", "control.asks", _without(VALIDATION),
               assert_seek_without_epoch_skips_validation, "OffsetsForLeaderEpoch validation", raises=ClientLacks),
    alteration("control-answers-the-proxy-missed", P + "seek-without-epoch-unvalidated",
               "kip320-seek-without-epoch-java", "control.asks", _unruled,
               assert_seek_without_epoch_skips_validation, "the proxy's rule acted on none", raises=SceneUnmet),
    # -- offsetsForTimes returns the epoch of the batch found
    alteration("epoch-before-the-move", P + "offsets-for-times-epoch", LOOKUP, "lookup.epoch",
               lambda _, d: d["epoch_before"], assert_lookup_carries_the_batch_epoch, "and got offset 25 epoch"),
    alteration("epoch-unknown", P + "offsets-for-times-epoch", "kip320-offsets-for-times-librdkafka",
               "lookup.epoch", -1, assert_lookup_carries_the_batch_epoch, "epoch -1"),
    alteration("no-epoch-exposed-is-not-supported", P + "offsets-for-times-epoch", LOOKUP, "lookup.epoch", None,
               assert_lookup_carries_the_batch_epoch, "the leader epoch of an offsetsForTimes answer",
               raises=ClientLacks),
    alteration("offset-of-the-move", P + "offsets-for-times-epoch", "kip320-offsets-for-times-franz-go",
               "lookup.offset", 20, assert_lookup_carries_the_batch_epoch, "got offset 20"),
    alteration("lookup-error", P + "offsets-for-times-epoch", LOOKUP, "lookup.error", "altered",
               assert_lookup_carries_the_batch_epoch, "with error altered"),
    # its premises: the leader moved and the broker answered right
    alteration("no-leader-move", P + "offsets-for-times-epoch", LOOKUP, "epoch_after", lambda _, d: d["epoch_before"],
               assert_lookup_carries_the_batch_epoch, "written in two leader epochs", raises=TargetRefused),
    alteration("log-of-one-epoch", P + "offsets-for-times-epoch", LOOKUP, "log", _one_epoch,
               assert_lookup_carries_the_batch_epoch, "written in two leader epochs", raises=TargetRefused),
    alteration("broker-answering-another-epoch", P + "offsets-for-times-epoch", LOOKUP, "asks[*].epoch",
               lambda _, d: d["epoch_before"], assert_lookup_carries_the_batch_epoch,
               "judges the broker", raises=TargetRefused),
]


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_history_fails_its_check(a: Alteration) -> None:
    """The check fails (or ends on its premise) on the altered history, with the altered value in its evidence."""
    history = altered(a, kind(a.recording))
    with pytest.raises(a.raises) as caught:
        a.check(history)
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"


def test_the_alterations_are_of_known_promises_and_unique() -> None:
    known = catalogue()
    assert not [a.id for a in ALTERATIONS if a.promise not in known], "alterations of promises not in the catalogue"
    ids = [a.id for a in ALTERATIONS]
    assert len(ids) == len(set(ids)), "two alterations share an id"


@pytest.mark.parametrize("name", LOOKUPS)
def test_the_lookup_names_a_record_after_the_move(name: str) -> None:
    run = recorded(name)
    offset, epoch = expected_lookup(run)
    assert offset >= run.moved_at and epoch == run.epoch_after
