"""The KIP-320 epoch-validation checks reject answers that break the rule (recorded 4.4.0 answers, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import Recording

from harness.checks.epoch_fencing import (
    FENCED,
    NOT_LEADER,
    SERVED,
    UNKNOWN,
    assert_covers,
    assert_epoch_validation,
    assert_offsets_for_epoch_authorized_by_describe,
    expected_answer,
)
from harness.histories.authorization import OffsetsForEpochAuthorization
from harness.histories.epoch_validation import EpochProbe
from harness.protocol.errors import error_code

RECORDED = [
    "kip320-fetch-leader", "kip320-fetch-follower", "kip320-offsets-for-leader-epoch-validation",
    "kip320-list-offsets-validation", "kip1094-zombie", "kip320-fetch-leader-old-versions",
]


def _probes(answers: list[dict[str, Any]]) -> list[EpochProbe]:
    return typed(list[EpochProbe], answers)


def _first(answers: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    return next(a for a in answers if all(a[k] == v for k, v in match.items()))


def _case(a: dict[str, Any]) -> str:
    r, c = a["requested_epoch"], a["current_epoch"]
    return "unset" if r == -1 else "current" if r == c else "older" if r < c else "newer"


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_answers_pass(recording: Recording, name: str) -> None:
    assert_epoch_validation(_probes(recording(name)["answers"]))


def test_the_rule_table() -> None:
    assert expected_answer("Fetch", "leader", 12, 2, 3) == FENCED
    assert expected_answer("Fetch", "follower", 12, 4, 3) == UNKNOWN
    assert expected_answer("Fetch", "follower", 10, 3, 3) == NOT_LEADER
    assert expected_answer("Fetch", "follower", 11, -1, 3) == SERVED
    assert expected_answer("ListOffsets", "follower", 11, 3, 3) == NOT_LEADER
    assert expected_answer("OffsetForLeaderEpoch", "leader", 4, -1, 3) == SERVED


@pytest.mark.parametrize("case,error", [("older", "NONE"), ("newer", "NONE"), ("older", "UNKNOWN_LEADER_EPOCH"),
                                        ("newer", "FENCED_LEADER_EPOCH"), ("older", "NOT_LEADER_OR_FOLLOWER")])
def test_leader_fetch_with_a_wrong_epoch_answer_fails(recording: Recording, case: str, error: str) -> None:
    answers = recording("kip320-fetch-leader")["answers"]
    a = next(a for a in answers if _case(a) == case)
    a["partition"]["ErrorCode"] = error_code(error)
    with pytest.raises(AssertionError, match=rf"CurrentLeaderEpoch {a['requested_epoch']} .*: {error}"):
        assert_epoch_validation(_probes(answers))


def test_fenced_fetch_that_still_returns_records_fails(recording: Recording) -> None:
    answers = recording("kip320-fetch-leader")["answers"]
    served = next(a for a in answers if _case(a) == "current")
    fenced = next(a for a in answers if _case(a) == "older" and a["version"] == served["version"])
    fenced["partition"]["Records"] = served["partition"]["Records"]
    with pytest.raises(AssertionError, match=r"refused but returned \d+ batch"):
        assert_epoch_validation(_probes(answers))


def test_served_fetch_without_records_fails(recording: Recording) -> None:
    answers = recording("kip320-fetch-leader")["answers"]
    next(a for a in answers if _case(a) == "unset")["partition"]["Records"] = b""
    with pytest.raises(AssertionError, match="served but returned no record batch"):
        assert_epoch_validation(_probes(answers))


def test_follower_serving_a_pre_kip_392_fetch_fails(recording: Recording) -> None:
    answers = recording("kip320-fetch-follower")["answers"]
    leader_like = _first(recording("kip320-fetch-leader")["answers"], requested_epoch=-1)
    old = _first(answers, version=10, requested_epoch=-1)
    old["partition"] = {**leader_like["partition"], "PartitionIndex": 0}
    with pytest.raises(AssertionError, match=r"Fetch v10 to follower .*: NONE\(0\), expected NOT_LEADER_OR_FOLLOWER"):
        assert_epoch_validation(_probes(answers))


def test_follower_refusing_a_kip_392_fetch_fails(recording: Recording) -> None:
    answers = recording("kip320-fetch-follower")["answers"]
    new = next(a for a in answers if a["version"] >= 11 and _case(a) == "current")
    new["partition"].update(ErrorCode=error_code("NOT_LEADER_OR_FOLLOWER"), Records=b"", HighWatermark=-1)
    with pytest.raises(AssertionError, match=r"NOT_LEADER_OR_FOLLOWER\(6\), expected NONE"):
        assert_epoch_validation(_probes(answers))


def test_follower_skipping_epoch_validation_fails(recording: Recording) -> None:
    answers = recording("kip320-offsets-for-leader-epoch-validation")["answers"]
    a = next(a for a in answers if a["role"] == "follower" and _case(a) == "older")
    a["partition"]["ErrorCode"] = error_code("NOT_LEADER_OR_FOLLOWER")
    with pytest.raises(AssertionError, match="expected FENCED_LEADER_EPOCH"):
        assert_epoch_validation(_probes(answers))


def test_list_offsets_answering_a_newer_epoch_fails(recording: Recording) -> None:
    answers = recording("kip320-list-offsets-validation")["answers"]
    served = next(a for a in answers if a["role"] == "leader" and _case(a) == "current")
    newer = next(a for a in answers if a["role"] == "leader" and _case(a) == "newer")
    newer["partition"] = dict(served["partition"])
    with pytest.raises(AssertionError, match=r"ListOffsets v\d+ to leader .*NONE\(0\), expected UNKNOWN_LEADER_EPOCH"):
        assert_epoch_validation(_probes(answers))


def test_zombie_answering_out_of_range_fails(recording: Recording) -> None:
    """The failure of KIP-1094's "Committing Leader Epoch", phase 3: the stale leader checks the
    offset before the epoch."""
    answers = recording("kip1094-zombie")["answers"]
    fetch = _first(answers, api="Fetch")
    fetch["partition"]["ErrorCode"] = error_code("OFFSET_OUT_OF_RANGE")
    with pytest.raises(AssertionError, match=r"OFFSET_OUT_OF_RANGE\(1\), expected UNKNOWN_LEADER_EPOCH"):
        assert_epoch_validation(_probes(answers))


def test_a_probe_that_misses_a_case_fails(recording: Recording) -> None:
    answers = [a for a in recording("kip320-fetch-leader")["answers"] if _case(a) != "older"]
    with pytest.raises(AssertionError, match=r"never sent a CurrentLeaderEpoch that is \['older'\]"):
        assert_covers(answers, {"unset", "current", "older", "newer"})


def test_recorded_old_fetch_versions_are_below_v9_and_served(recording: Recording) -> None:
    answers = recording("kip320-fetch-leader-old-versions")["answers"]
    assert answers and all(a["version"] < 9 and a["requested_epoch"] == -1 for a in answers)
    assert {error_code(SERVED)} == {a["partition"]["ErrorCode"] for a in answers}


@pytest.mark.parametrize("error", [FENCED, UNKNOWN])
def test_an_old_fetch_version_refused_with_an_epoch_error_fails(recording: Recording, error: str) -> None:
    """A broker that validated epochs on versions that carry none would refuse them: KIP-320 says they are served."""
    answers = recording("kip320-fetch-leader-old-versions")["answers"]
    a = answers[0]
    a["partition"]["ErrorCode"] = error_code(error)
    a["partition"]["Records"] = b""
    with pytest.raises(AssertionError, match=rf"Fetch v{a['version']}.*{error}"):
        assert_epoch_validation(_probes(answers))


def test_recorded_offsets_for_epoch_authorization_passes(recording: Recording) -> None:
    r = recording("kip320-offsets-for-epoch-authorization")
    assert {a["replica_id"] for a in r["answers"]} >= {-1, -2}
    assert_offsets_for_epoch_authorized_by_describe(typed(OffsetsForEpochAuthorization, r).answers, r["user"])


def test_a_consumer_refused_on_a_topic_it_may_describe_fails(recording: Recording) -> None:
    """An OffsetsForLeaderEpoch still guarded by CLUSTER_ACTION alone, as before KIP-320."""
    r = recording("kip320-offsets-for-epoch-authorization")
    a = next(a for a in r["answers"] if a["allowed"] and a["replica_id"] == -1)
    a["partition"].update(ErrorCode=error_code("CLUSTER_AUTHORIZATION_FAILED"), LeaderEpoch=-1, EndOffset=-1)
    with pytest.raises(AssertionError, match=r"ReplicaId -1 on .* \(DESCRIBE allowed\): CLUSTER_AUTHORIZATION_FAILED"):
        assert_offsets_for_epoch_authorized_by_describe(typed(OffsetsForEpochAuthorization, r).answers, r["user"])


def test_an_answer_to_a_user_without_acls_fails(recording: Recording) -> None:
    r = recording("kip320-offsets-for-epoch-authorization")
    a = next(a for a in r["answers"] if not a["allowed"] and a["replica_id"] == -2)
    a["partition"].update(ErrorCode=0, LeaderEpoch=0, EndOffset=5)
    with pytest.raises(AssertionError, match=r"ReplicaId -2 on .* \(no ACL\): NONE, end offset 5"):
        assert_offsets_for_epoch_authorized_by_describe(typed(OffsetsForEpochAuthorization, r).answers, r["user"])


def test_a_broker_id_refused_for_want_of_followers_is_not_judged(recording: Recording) -> None:
    """kfake serves no follower's OffsetsForLeaderEpoch (UNKNOWN_SERVER_ERROR for a broker's ReplicaId):
    not an authorization, and not KIP-320's to judge."""
    r = recording("kip320-offsets-for-epoch-authorization")
    for a in r["answers"]:
        if a["allowed"] and a["replica_id"] >= 0:
            a["partition"].update(ErrorCode=error_code("UNKNOWN_SERVER_ERROR"), LeaderEpoch=-1, EndOffset=-1)
    assert_offsets_for_epoch_authorized_by_describe(typed(OffsetsForEpochAuthorization, r).answers, r["user"])


def test_a_broker_id_refused_an_authorization_on_a_described_topic_fails(recording: Recording) -> None:
    r = recording("kip320-offsets-for-epoch-authorization")
    a = next(a for a in r["answers"] if a["allowed"] and a["replica_id"] == -2)
    a["partition"].update(ErrorCode=error_code("TOPIC_AUTHORIZATION_FAILED"), LeaderEpoch=-1, EndOffset=-1)
    with pytest.raises(AssertionError, match=r"ReplicaId -2 on .* \(DESCRIBE allowed\): TOPIC_AUTHORIZATION_FAILED"):
        assert_offsets_for_epoch_authorized_by_describe(typed(OffsetsForEpochAuthorization, r).answers, r["user"])
