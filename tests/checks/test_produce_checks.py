"""The KIP-359 checks: the schema verdict flips with the field, and broken Produce answers or write histories fail."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import Alteration, alteration, altered, typed
from recordings import Recording

from harness.checks.delivery import assert_exactly_once_in_order
from harness.checks.epoch_fencing import assert_epoch_validation
from harness.checks.produce_fencing import (
    assert_old_versions_append,
    assert_refused_with_leader_hint,
    partition_fields,
    schema_evidence,
    versions_with_epoch,
)
from harness.histories.kip359 import OldVersionProduce
from harness.histories.text_records import Ack, LogRecord
from harness.promises import catalogue
from harness.protocol.errors import FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH
from harness.protocol.spec import load_specs

CLIENTS = ["librdkafka", "java"]


def _fields(recorded: dict[str, Any]) -> dict[int, list[str]]:
    return {int(v): names for v, names in recorded["fields"].items()}  # JSON keys are strings


def test_recorded_schema_has_no_epoch_field_and_says_so(recording: Recording) -> None:
    r = recording("kip359-produce-schema")
    fields = _fields(r)
    assert versions_with_epoch(fields) == []
    assert "Produce v3-13 partition fields ['Index', 'Records']" in schema_evidence(fields, tuple(r["advertised"]))


def test_the_schema_is_read_from_the_specs_of_the_version() -> None:
    assert partition_fields(load_specs("4.4.0"), [13]) == {13: ["Index", "Records"]}


def test_a_schema_with_the_field_turns_the_verdict_into_a_check(recording: Recording) -> None:
    fields = _fields(recording("kip359-produce-schema"))
    fields[13] = ["Index", "CurrentLeaderEpoch", "Records"]
    assert versions_with_epoch(fields) == [13]


def _hint(recorded: dict[str, Any]) -> tuple[list[dict[str, Any]], int, int, tuple[str, int]]:
    return recorded["answers"], recorded["leader"], recorded["epoch"], tuple(recorded["endpoint"])


def test_recorded_former_leader_answers_pass(recording: Recording) -> None:
    assert_refused_with_leader_hint(*_hint(recording("kip359-former-leader")))


def test_a_former_leader_that_appends_fails(recording: Recording) -> None:
    answers, leader, epoch, endpoint = _hint(recording("kip359-former-leader"))
    answers[0]["partition"].update(ErrorCode=0, BaseOffset=42)
    with pytest.raises(AssertionError, match=r"Produce v3 to former leader \d+: NONE\(0\) base offset 42"):
        assert_refused_with_leader_hint(answers, leader, epoch, endpoint)


def test_a_stale_leader_hint_fails(recording: Recording) -> None:
    answers, leader, epoch, endpoint = _hint(recording("kip359-former-leader"))
    a = next(a for a in answers if a["version"] >= 10)
    a["partition"]["CurrentLeader"]["LeaderEpoch"] = epoch - 1
    with pytest.raises(AssertionError, match=rf"CurrentLeader \(id, epoch\) \({leader}, {epoch - 1}\), Metadata says"):
        assert_refused_with_leader_hint(answers, leader, epoch, endpoint)


def test_a_hint_without_the_leaders_endpoint_fails(recording: Recording) -> None:
    answers, leader, epoch, endpoint = _hint(recording("kip359-former-leader"))
    next(a for a in answers if a["version"] == 13)["node_endpoints"] = []
    with pytest.raises(AssertionError, match=rf"Produce v13 .*NodeEndpoints \{{\}} do not give leader {leader}"):
        assert_refused_with_leader_hint(answers, leader, epoch, endpoint)


def _writes(recorded: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]], list[str], list[dict[str, Any]]]:
    return recorded["sent"], recorded["acks"], recorded["failures"], recorded["log"]


def _judged(client: str, sent: list[str], acks: list[dict[str, Any]], failures: list[str],
            log: list[dict[str, Any]]) -> None:
    """The check on a recording as altered, its acks and log read into their types through the codec."""
    assert_exactly_once_in_order(client, sent, typed(list[Ack], acks), failures, typed(list[LogRecord], log))


@pytest.mark.parametrize("client", CLIENTS)
def test_recorded_failover_writes_pass(recording: Recording, client: str) -> None:
    _judged(client, *_writes(recording(f"kip359-failover-writes-{client}")))


@pytest.mark.parametrize("client", CLIENTS)
def test_a_duplicate_fails(recording: Recording, client: str) -> None:
    sent, acks, failures, log = _writes(recording(f"kip359-failover-writes-{client}"))
    log.append({"offset": log[-1]["offset"] + 1, "value": log[100]["value"]})
    with pytest.raises(AssertionError, match=rf"duplicate x1 \(first \['{log[100]['value']}'\]\)"):
        _judged(client, sent, acks, failures, log)


def test_the_evidence_counts_the_clients_own_records_in_a_shared_log(recording: Recording) -> None:
    """The partition's log holds other clients' writes too: the FAIL says how many of this client's are in it."""
    sent, acks, failures, log = _writes(recording(f"kip359-failover-writes-{CLIENTS[0]}"))
    log.append({"offset": log[-1]["offset"] + 1, "value": log[100]["value"]})
    log.append({"offset": log[-1]["offset"] + 1, "value": "another-client-0"})
    mine = set(sent)
    ours = sum(1 for r in log if r["value"] in mine)
    with pytest.raises(AssertionError, match=rf" {ours} of its records in the log of {len(log)};"):
        _judged(CLIENTS[0], sent, acks, failures, log)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_gap_fails(recording: Recording, client: str) -> None:
    sent, acks, failures, log = _writes(recording(f"kip359-failover-writes-{client}"))
    missing = log.pop(150)
    with pytest.raises(AssertionError, match=rf"lost x1 .*gap x1 \(first \['{missing['value']}'\]\)"):
        _judged(client, sent, acks, failures, log)


def test_a_reorder_fails(recording: Recording) -> None:
    sent, acks, failures, log = _writes(recording("kip359-failover-writes-librdkafka"))
    log[10]["value"], log[11]["value"] = log[11]["value"], log[10]["value"]
    with pytest.raises(AssertionError, match=r"reorder x1 .*inconsistent_offset x2"):
        _judged("librdkafka", sent, acks, failures, log)


def test_a_failed_send_fails(recording: Recording) -> None:
    sent, acks, failures, log = _writes(recording("kip359-failover-writes-java"))
    failed = acks.pop()
    failures.append(f"{failed['value']}: NotEnoughReplicasException")
    with pytest.raises(AssertionError, match=r"failed_send x1"):
        _judged("java", sent, acks, failures, log)


def test_a_target_with_the_field_that_does_not_fence_fails(recording: Recording) -> None:
    """Where a Produce schema has CurrentLeaderEpoch, the suite judges the answers with the KIP-320
    rule: a recorded refusal (nothing appended) stands in for the answer to a stale epoch."""
    refused = recording("kip359-former-leader")["answers"][-1]["partition"]
    stale = {"api": "Produce", "version": 13, "broker": 1, "role": "leader", "requested_epoch": 2,
             "current_epoch": 3, "partition": refused}
    with pytest.raises(AssertionError, match=r"Produce v13 .*NOT_LEADER_OR_FOLLOWER\(6\), expected FENCED"):
        assert_epoch_validation([stale])
    refused["ErrorCode"] = 74
    assert_epoch_validation([stale])


def test_an_ack_without_an_offset_claims_none_but_a_wrong_one_is_caught() -> None:
    """librdkafka acks a batch the broker already had (DUPLICATE_SEQUENCE_NUMBER) with no offset:
    that is no anomaly; an ack naming an offset that holds another record still is."""
    from harness.checks.delivery import anomalies

    log = [LogRecord(0, "a"), LogRecord(1, "b")]
    assert anomalies(["a", "b"], [Ack("a", 0), Ack("b", None)], [], log) == {}
    wrong = anomalies(["a", "b"], [Ack("a", 0), Ack("b", 0)], [], log)
    assert wrong == {"inconsistent_offset": [("b", 0, "a")]}


# -- Produce versions without CurrentLeaderEpoch (every Apache Kafka version) after a leader move -------

OLD = "kip359-old-versions"


def test_recorded_old_versions_append() -> None:
    h = altered(Alteration("as-recorded", "kip359.produce.old-versions-skip-validation", OLD, (),
                           assert_old_versions_append), OldVersionProduce)
    assert h.leader_epoch > 0 and h.appends, f"premise: the recording has appends after a leader move: {h}"
    # Apache Kafka 4.x advertises Produce v0 (KAFKA-18659) but its schema starts at v3: the lowest judged.
    assert h.appends[0].version == min(h.fields), "premise: the lowest version of the target's schema was sent"
    assert_old_versions_append(h)


def _drop_first_append(log: Any, rec: Any) -> Any:
    first = rec["appends"][0]["base_offset"]
    return [r for r in log if r["offset"] != first]


OLD_VERSION_ALTERATIONS: list[Alteration] = [
    alteration("fenced-epoch-on-the-lowest-version", "kip359.produce.old-versions-skip-validation", OLD,
               "appends[0].error", FENCED_LEADER_EPOCH, assert_old_versions_append,
               "FENCED_LEADER_EPOCH(74), an epoch check on a version without the epoch"),
    alteration("unknown-epoch-on-the-top-version", "kip359.produce.old-versions-skip-validation", OLD,
               "appends[-1].error", UNKNOWN_LEADER_EPOCH, assert_old_versions_append, "UNKNOWN_LEADER_EPOCH(75)"),
    alteration("refused-as-not-leader", "kip359.produce.old-versions-skip-validation", OLD,
               "appends[0].error", 6, assert_old_versions_append, "NOT_LEADER_OR_FOLLOWER(6) base offset"),
    alteration("acknowledged-but-not-in-the-log", "kip359.produce.old-versions-skip-validation", OLD,
               "log", _drop_first_append, assert_old_versions_append, "which the log read back lacks"),
    alteration("acknowledged-at-another-records-offset", "kip359.produce.old-versions-skip-validation", OLD,
               "appends[1].base_offset", lambda _, rec: rec["appends"][0]["base_offset"],
               assert_old_versions_append, "where the log holds"),
    alteration("nothing-sent", "kip359.produce.old-versions-skip-validation", OLD, "appends", [],
               assert_old_versions_append, "no Produce without CurrentLeaderEpoch was sent"),
    # librdkafka's mock (run h30mock-1): its Produce v5 answer has no LogStartOffset (written from v6).
    alteration("an-answer-that-is-not-of-the-version-asked", "kip359.produce.old-versions-skip-validation", OLD,
               "appends[0].unreadable", "the 119-byte answer to Produce v5 is not a valid Produce v5 response",
               assert_old_versions_append, "an answer that is not a Produce v"),
]


@pytest.mark.parametrize("a", OLD_VERSION_ALTERATIONS, ids=[a.id for a in OLD_VERSION_ALTERATIONS])
def test_an_old_version_answered_or_kept_wrong_fails(a: Alteration) -> None:
    assert a.promise in catalogue(), f"{a.id} names no promise of harness/promises.toml: {a.promise}"
    with pytest.raises(a.raises) as caught:
        a.check(altered(a, OldVersionProduce))
    assert a.shows in str(caught.value), f"{a.id}: the failure does not show {a.shows!r}: {caught.value}"
