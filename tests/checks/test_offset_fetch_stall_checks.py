"""A group's coordinator error to OffsetFetch, reported and recovered from, is not judged by the
KIP-320 / KIP-1094 client checks; a consumer that never fetched after one (librdkafka 2.16.0 under the
allowed item coordinator-not-coordinator-once, its error event as recorded there) is the known client
gap librdkafka-offset-fetch-coordinator-error-stalls, and only that, only for the librdkafka versions
harness/client_gaps.toml names.

The suites' own test functions run here, their scenes replaced by recorded runs (no cluster)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import raw, typed

import suites.kip320.test_committed_epoch_ahead as ahead_suite
import suites.kip1094.test_committed_epoch_refresh as refresh_suite
from fixtures.topics import RunNames
from harness.checks.client_reactions import (
    CommittedOffsetsNeverFetched,
    assert_validated_only_once_metadata_caught_up,
    judged_errors,
    require_committed_offsets_fetched,
)
from harness.checks.committed_refresh import assert_committed_epoch_forces_a_refresh
from harness.errors import TargetRefused
from harness.histories.client_reactions import CommittedAhead
from harness.histories.committed_refresh import CommittedRefreshRun
from harness.histories.observations import ClientEvent
from harness.histories.store import RECORD_ENV
from harness.scenarios.kip1094 import NotReadThrough
from harness.verdicts import stalled_read
from harness.waiting import WaitTimeout

LIBRDKAFKA = "confluent-kafka 2.16.1 (librdkafka 2.16.0)"
GAP = (r"KNOWN_CLIENT_GAP: librdkafka 2\.16\.0: an OffsetFetch of its assignment answered NOT_COORDINATOR or "
       r"COORDINATOR_NOT_AVAILABLE for the whole group is never sent again")


def _refused(code: str = "NOT_COORDINATOR", partitions: int = 0) -> dict[str, Any]:
    """librdkafka's report of its assignment's OffsetFetch refused for the group, as the allowed run had it."""
    text = {"NOT_COORDINATOR": "Not coordinator", "COORDINATOR_NOT_AVAILABLE": "Coordinator not available",
            "COORDINATOR_LOAD_IN_PROGRESS": "Coordinator load in progress"}[code]
    return {"event": "error", "detail": {
        "consumer": "librdkafka", "code": code,
        "message": f'Failed to fetch committed offsets for {partitions} partition(s) in group '
                   f'"kcts30374-g-kip320-ahead-librdkafka-129": Broker: {text}'}}


def _stalled(run: dict[str, Any], code: str = "NOT_COORDINATOR") -> dict[str, Any]:
    """The recorded run as the stalled client: the error reported, nothing read, the wait ended by its bound."""
    run.update(errors=[_refused(code)], reads=[],
               incomplete="the target did not keep it within 45.0s; last state: librdkafka read 0 records")
    return run


# -- the judgement ---------------------------------------------------------------------------------


def test_a_coordinator_error_then_nothing_read_is_the_stall() -> None:
    events = [ClientEvent.of({"event": "error", **_refused()["detail"]})]
    with pytest.raises(CommittedOffsetsNeverFetched, match=r"reported error .*NOT_COORDINATOR.* and read nothing "
                                                           r"after it.*never asked again.*the wait") as caught:
        require_committed_offsets_fetched(LIBRDKAFKA, events, 0, "the wait")
    assert caught.value.client == LIBRDKAFKA


@pytest.mark.parametrize("case", ["read on", "load in progress", "named partitions", "another error"])
def test_anything_else_is_left_to_the_caller(case: str) -> None:
    """Records read after it, COORDINATOR_LOAD_IN_PROGRESS (librdkafka retries it), a partition-level
    answer, or an error that is not a coordinator's: not the stall."""
    detail = {"read on": _refused(), "load in progress": _refused("COORDINATOR_LOAD_IN_PROGRESS"),
              "named partitions": _refused(partitions=1),
              "another error": {"event": "error", "detail": {"code": "_AUTO_OFFSET_RESET", "message": "reset"}}}[case]
    events = [ClientEvent.of({"event": "error", **detail["detail"]})]
    require_committed_offsets_fetched(LIBRDKAFKA, events, 5 if case == "read on" else 0, "the wait")


def test_only_coordinator_errors_are_left_unjudged() -> None:
    events = [ClientEvent.of({"event": "error", **d["detail"]}) for d in
              (_refused(), _refused("COORDINATOR_NOT_AVAILABLE"), _refused("COORDINATOR_LOAD_IN_PROGRESS"),
               {"detail": {"code": "FENCED_LEADER_EPOCH", "message": "fenced"}})]
    assert [e.get("code") for e in judged_errors(events)] == ["FENCED_LEADER_EPOCH"]


@pytest.mark.parametrize("code", ["NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE"])
def test_a_member_that_reported_the_error_and_read_on_passes(code: str) -> None:
    """KIP-320 "Consumer Handling", extension 2, judges the epochs and the records read, not a retriable
    coordinator error of the group's OffsetFetch a client reported and recovered from."""
    run = raw("kip320-committed-ahead-librdkafka")
    run["errors"] = [_refused(code)]
    assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, run))


def test_a_member_that_reported_the_error_and_reset_still_fails() -> None:
    run = raw("kip320-committed-ahead-librdkafka")
    run["errors"] = [_refused()]
    run["reads"] = [{"offset": 20 + i, "value": f"x-{i}"} for i in range(10)]
    with pytest.raises(AssertionError, match=r"read 10 records, offsets 20\.\.29 from the commit"):
        assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, run))


def test_a_member_that_reported_another_error_still_fails() -> None:
    run = raw("kip320-committed-ahead-librdkafka")
    run["errors"] = [_refused(), {"event": "error", "detail": {"code": "_AUTO_OFFSET_RESET", "message": "reset"}}]
    with pytest.raises(AssertionError, match=r"reported error \{'code': '_AUTO_OFFSET_RESET'"):
        assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, run))


def test_a_member_that_never_fetched_after_the_error_is_the_stall() -> None:
    with pytest.raises(CommittedOffsetsNeverFetched, match="never asked again"):
        assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, _stalled(raw(
            "kip320-committed-ahead-librdkafka"))))


def test_the_refresh_check_tells_the_stall_from_a_refused_premise() -> None:
    """No OffsetFetch answer with the commit: the stall where the client reported the refused
    OffsetFetch and read nothing, else the target's refusal of the premise (as before)."""
    run = raw("kip1094-committed-refresh-librdkafka")
    run["commit_reads"] = []
    with pytest.raises(CommittedOffsetsNeverFetched, match="never asked again"):
        assert_committed_epoch_forces_a_refresh(typed(CommittedRefreshRun, _stalled(dict(run))))
    with pytest.raises(TargetRefused, match="got no OffsetFetch answer with the group's commit"):
        assert_committed_epoch_forces_a_refresh(typed(CommittedRefreshRun, run))


# -- the suites' verdicts ---------------------------------------------------------------------------


def _ahead(monkeypatch: pytest.MonkeyPatch, data: dict[str, Any]) -> None:
    run = typed(CommittedAhead, data)
    monkeypatch.setattr(ahead_suite, "committed_epoch_ahead_of_metadata", lambda *args: run)
    monkeypatch.delenv(RECORD_ENV, raising=False)
    ahead_suite.test_consumer_waits_for_metadata_to_reach_the_committed_epoch(
        None, lambda **kw: "topic", RunNames("unit"), run.client)  # type: ignore[arg-type]


def _refresh(monkeypatch: pytest.MonkeyPatch, data: dict[str, Any]) -> None:
    run = typed(CommittedRefreshRun, data)
    monkeypatch.setattr(refresh_suite, "committed_epoch_refresh", lambda *args: run)
    monkeypatch.delenv(RECORD_ENV, raising=False)
    refresh_suite.test_a_committed_epoch_ahead_of_metadata_makes_the_consumer_refresh_before_it_fetches(
        None, lambda **kw: "topic", RunNames("unit"), run.client)  # type: ignore[arg-type]


@pytest.mark.parametrize("code", ["NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE"])
def test_the_stalled_members_are_the_known_gap(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    seen = r".*seen: confluent-kafka 2\.16\.1 \(librdkafka 2\.16\.0\) reported error .*" + code + r".*issues/5586"
    with pytest.raises(pytest.xfail.Exception, match=GAP + seen):
        _ahead(monkeypatch, _stalled(raw("kip320-committed-ahead-librdkafka"), code))
    refresh = raw("kip1094-committed-refresh-librdkafka")
    refresh["commit_reads"] = []
    with pytest.raises(pytest.xfail.Exception, match=GAP):
        _refresh(monkeypatch, _stalled(refresh, code))


def test_a_librdkafka_before_the_assignment_rewrite_is_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    run = _stalled(raw("kip320-committed-ahead-librdkafka"))
    run["version"] = "confluent-kafka 1.5.3 (librdkafka 1.5.3)"
    with pytest.raises(AssertionError, match=r"librdkafka 1\.5\.3 is outside the versions known to have this gap, "
                                             r">=1\.6\.0"):
        _ahead(monkeypatch, run)


def test_the_stall_is_librdkafkas_only(monkeypatch: pytest.MonkeyPatch) -> None:
    run = _stalled(raw("kip320-committed-ahead-java"))
    run["errors"][0]["detail"]["consumer"] = "java"
    with pytest.raises(CommittedOffsetsNeverFetched):
        _ahead(monkeypatch, run)


def _not_read_through(events: list[dict[str, Any]]) -> NotReadThrough:
    return NotReadThrough(WaitTimeout("timed out after 60.0s waiting; last state: ..."), LIBRDKAFKA,
                          tuple(ClientEvent.of({"event": e["event"], **e["detail"]}) for e in events))


def test_a_kip1094_consumer_that_never_read_after_the_error_is_the_known_gap() -> None:
    with pytest.raises(pytest.xfail.Exception, match=GAP):
        stalled_read("librdkafka", _not_read_through([_refused()]))


@pytest.mark.parametrize("events", [[], [_refused(), {"event": "record", "detail": {"offset": 0}}]],
                         ids=["nothing reported", "read after it"])
def test_a_kip1094_consumer_that_stalled_otherwise_stays_the_harness_s_timeout(events: list[dict[str, Any]]) -> None:
    with pytest.raises(NotReadThrough):
        stalled_read("librdkafka", _not_read_through(events))
