"""The KIP-1319 checks pass on recorded 4.4.0 answers and reject copies altered to break one promise.

Every check function of harness/checks/kip1319.py is here twice: the recorded answer (a live run
against Apache Kafka 4.4.0 and its 4.3.1 / transaction.version=1 side clusters) passes, and a copy
with one thing changed (an error code, a key, a version, a topic ID, a retry count) raises
`AssertionError` whose message names what broke.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from recordings import Recording

from harness.checks.kip1319 import (
    OlderVersionSent,
    assert_aborted_without_retry,
    assert_advertises_v6,
    assert_client_sends,
    assert_client_sends_v6,
    assert_commit_accepted,
    assert_copier_aborted_without_retry,
    assert_error_precedence,
    assert_failed_topic_named,
    assert_group_error_mapping,
    assert_injected,
    assert_keyed_by_topic_id,
    assert_mixed_answer_retried,
    assert_nothing_visible,
    assert_offsets_fetched_back,
    assert_only_transient_retries,
    assert_persisted_topic_id,
    assert_persisted_zero_topic_id,
    assert_retried_unchanged,
    assert_stale_epoch_mapping,
    assert_topic_ids_assigned,
    assert_tops_out_at_v5,
    assert_transaction_outcome,
    assert_transaction_version_finalized,
    assert_visible_to_read_committed,
    expected_precedence,
)
from harness.protocol.errors import error_code
from harness.protocol.types import ZERO_UUID

PRE_KIP = "4.3.1"
PRECEDENCE = ["kip1319-unknown-topic-id", "kip1319-missing-partition", "kip1319-unauthorized-topic",
              "kip1319-mixed-request"]
JAVA_COMMITTED = ["kip1319-java-capped-v5", "kip1319-java-fallback-v5", "kip1319-java-retry-unknown-topic-id",
                  "kip1319-tv1-java-v4"]
JAVA_COPIED = ["kip1319-java-v6-copy", "kip1319-pre-kip-java-copy"]
ABORTS = ["kip1319-java-abort-GROUP_ID_NOT_FOUND", "kip1319-java-abort-STALE_MEMBER_EPOCH"]
FETCHED_BACK = ["kip1319-v6-commit", "kip1319-java-v6-copy", "kip1319-java-capped-v5", "kip1319-java-fallback-v5",
                "kip1319-java-retry-unknown-topic-id", "kip1319-pre-kip-java-copy"]
VISIBLE = ["kip1319-java-v6-copy", "kip1319-java-retry-unknown-topic-id", "kip1319-pre-kip-java-copy",
           "kip1319-librdkafka"]
SENDS = [("kip1319-java-v6-copy", 6), ("kip1319-java-capped-v5", 5), ("kip1319-java-fallback-v5", 5),
         ("kip1319-java-retry-unknown-topic-id", 6), ("kip1319-pre-kip-java-copy", 5), ("kip1319-tv1-java-v4", 4)]


def _partition(ex: dict[str, Any], topic_key: Any, partition: int) -> dict[str, Any]:
    """The response entry of one partition (topic by TopicId or Name)."""
    for t in ex["response"]["Topics"]:
        if t.get("TopicId", t.get("Name")) == topic_key:
            return next(p for p in t["Partitions"] if p["PartitionIndex"] == partition)
    raise KeyError((topic_key, partition))


def _fact(commit: dict[str, Any], **match: Any) -> dict[str, Any]:
    return next(f for f in commit["topics"] if all(f[k] == v for k, v in match.items()))


# -- versions advertised --------------------------------------------------------------------------

def test_recorded_v6_advertisement_passes(recording: Recording) -> None:
    assert_advertises_v6(recording("kip1319-advertised-v6"))


@pytest.mark.parametrize("versions", [[0, 5], [7, 8], None], ids=["max-5", "min-7", "absent"])
def test_a_range_without_v6_fails(recording: Recording, versions: list[int] | None) -> None:
    advertised = recording("kip1319-advertised-v6")
    advertised["versions"] = versions
    with pytest.raises(AssertionError, match="validVersions 0-6"):
        assert_advertises_v6(advertised)


def test_recorded_pre_kip_advertisement_passes(recording: Recording) -> None:
    assert_tops_out_at_v5(recording("kip1319-pre-kip-advertised"), PRE_KIP)


@pytest.mark.parametrize("versions", [[0, 6], [0, 4], None], ids=["v6", "v4", "absent"])
def test_a_pre_kip_broker_not_topping_out_at_v5_fails(recording: Recording, versions: list[int] | None) -> None:
    advertised = recording("kip1319-pre-kip-advertised")
    advertised["versions"] = versions
    with pytest.raises(AssertionError, match=rf"Kafka {PRE_KIP}: .*TxnOffsetCommit.*tops out at v5"):
        assert_tops_out_at_v5(advertised, PRE_KIP)


# -- v6 keyed by TopicId --------------------------------------------------------------------------

def test_recorded_v6_commit_is_keyed_by_topic_id(recording: Recording) -> None:
    assert_keyed_by_topic_id(recording("kip1319-v6-commit"))


def test_a_response_with_a_name_fails(recording: Recording) -> None:
    commit = recording("kip1319-v6-commit")
    commit["exchange"]["response"]["Topics"][0]["Name"] = "leaked-name"
    with pytest.raises(AssertionError, match=r"fields \['Name', 'Partitions', 'TopicId'\]"):
        assert_keyed_by_topic_id(commit)


def test_a_response_keyed_by_another_topic_id_fails(recording: Recording) -> None:
    commit = recording("kip1319-v6-commit")
    other = uuid.uuid4()
    commit["exchange"]["response"]["Topics"][0]["TopicId"] = other
    with pytest.raises(AssertionError, match=rf"answers TopicIds \['{other}'\]"):
        assert_keyed_by_topic_id(commit)


def test_a_request_by_name_fails(recording: Recording) -> None:
    commit = recording("kip1319-v6-commit")
    commit["exchange"]["request"]["Topics"][0]["Name"] = "t"
    with pytest.raises(AssertionError, match="not by TopicId only"):
        assert_keyed_by_topic_id(commit)


def test_a_v5_exchange_is_no_v6_commit(recording: Recording) -> None:
    commit = recording("kip1319-v6-commit")
    commit["exchange"]["version"] = 5
    with pytest.raises(AssertionError, match="the exchange is v5, not v6"):
        assert_keyed_by_topic_id(commit)


# -- accepted commits -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["kip1319-v6-commit", "kip1319-persisted-topic-id", "kip1319-pre-kip-persisted"])
def test_recorded_commits_are_accepted(recording: Recording, name: str) -> None:
    rec = recording(name)
    assert_commit_accepted(rec.get("commit", rec))


def test_a_refused_partition_fails_the_commit(recording: Recording) -> None:
    commit = recording("kip1319-v6-commit")
    topic_id = commit["topics"][0]["topic_id"]
    _partition(commit["exchange"], topic_id, 1)["ErrorCode"] = error_code("COORDINATOR_NOT_AVAILABLE")
    with pytest.raises(AssertionError, match=r"partition 1: COORDINATOR_NOT_AVAILABLE\(15\), expected NONE\(0\)"):
        assert_commit_accepted(commit)


def test_an_unanswered_partition_fails_the_commit(recording: Recording) -> None:
    rec = recording("kip1319-pre-kip-persisted")["commit"]
    rec["exchange"]["response"]["Topics"][0]["Partitions"] = []
    with pytest.raises(AssertionError, match="partition 0 was in the request but not answered"):
        assert_commit_accepted(rec)


# -- error precedence ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", PRECEDENCE)
def test_recorded_precedence_answers_pass(recording: Recording, name: str) -> None:
    assert_error_precedence(recording(name))


def test_the_precedence_table() -> None:
    topics = [{"name": "a", "topic_id": "A", "exists": True, "authorized": True, "partitions": 2},
              {"name": "d", "topic_id": "D", "exists": True, "authorized": False, "partitions": 2}]
    assert expected_precedence(topics, ("X", 0))[0] == "UNKNOWN_TOPIC_ID"
    assert expected_precedence(topics, ("D", 5))[0] == "TOPIC_AUTHORIZATION_FAILED"
    assert expected_precedence(topics, ("A", 2))[0] == "UNKNOWN_TOPIC_OR_PARTITION"
    assert expected_precedence(topics, ("A", 1))[0] == "NONE"


def test_an_unknown_topic_id_answered_as_a_missing_partition_fails(recording: Recording) -> None:
    commit = recording("kip1319-unknown-topic-id")
    unknown = _fact(commit, exists=False)["topic_id"]
    _partition(commit["exchange"], unknown, 2)["ErrorCode"] = error_code("UNKNOWN_TOPIC_OR_PARTITION")
    with pytest.raises(AssertionError, match=rf"{unknown} partition 2: UNKNOWN_TOPIC_OR_PARTITION\(3\), "
                                             r"expected UNKNOWN_TOPIC_ID\(100\) \(first rule"):
        assert_error_precedence(commit)


def test_an_unknown_topic_error_leaking_to_the_known_topic_fails(recording: Recording) -> None:
    commit = recording("kip1319-unknown-topic-id")
    known = _fact(commit, exists=True)["topic_id"]
    _partition(commit["exchange"], known, 0)["ErrorCode"] = error_code("UNKNOWN_TOPIC_ID")
    with pytest.raises(AssertionError, match=rf"{known} partition 0: UNKNOWN_TOPIC_ID\(100\), expected NONE\(0\)"):
        assert_error_precedence(commit)


def test_a_missing_partition_error_on_every_partition_fails(recording: Recording) -> None:
    commit = recording("kip1319-missing-partition")
    topic_id = commit["topics"][0]["topic_id"]
    _partition(commit["exchange"], topic_id, 0)["ErrorCode"] = error_code("UNKNOWN_TOPIC_OR_PARTITION")
    with pytest.raises(AssertionError, match=rf"{topic_id} partition 0: UNKNOWN_TOPIC_OR_PARTITION\(3\), "
                                             r"expected NONE\(0\)"):
        assert_error_precedence(commit)


def test_a_missing_partition_answered_without_an_error_fails(recording: Recording) -> None:
    commit = recording("kip1319-missing-partition")
    topic_id = commit["topics"][0]["topic_id"]
    _partition(commit["exchange"], topic_id, 5)["ErrorCode"] = 0
    with pytest.raises(AssertionError, match=r"partition 5: NONE\(0\), expected UNKNOWN_TOPIC_OR_PARTITION\(3\) "
                                             r"\(third rule"):
        assert_error_precedence(commit)


def test_partition_validation_before_authorization_fails(recording: Recording) -> None:
    """The unauthorized topic's missing partition must not be UNKNOWN_TOPIC_OR_PARTITION."""
    commit = recording("kip1319-unauthorized-topic")
    denied = commit["topics"][0]["topic_id"]
    _partition(commit["exchange"], denied, 7)["ErrorCode"] = error_code("UNKNOWN_TOPIC_OR_PARTITION")
    with pytest.raises(AssertionError, match=r"partition 7: UNKNOWN_TOPIC_OR_PARTITION\(3\), expected "
                                             r"TOPIC_AUTHORIZATION_FAILED\(29\) \(second rule.*\n(.*\n)*ACLs of alice"):
        assert_error_precedence(commit)


def test_an_unauthorized_topic_that_commits_fails(recording: Recording) -> None:
    commit = recording("kip1319-unauthorized-topic")
    denied = commit["topics"][0]["topic_id"]
    _partition(commit["exchange"], denied, 0)["ErrorCode"] = 0
    with pytest.raises(AssertionError, match=r"partition 0: NONE\(0\), expected TOPIC_AUTHORIZATION_FAILED\(29\)"):
        assert_error_precedence(commit)


def test_an_authorization_error_leaking_into_the_allowed_topic_fails(recording: Recording) -> None:
    commit = recording("kip1319-mixed-request")
    allowed = _fact(commit, authorized=True, exists=True)["topic_id"]
    _partition(commit["exchange"], allowed, 0)["ErrorCode"] = error_code("TOPIC_AUTHORIZATION_FAILED")
    with pytest.raises(AssertionError, match=rf"{allowed} partition 0: TOPIC_AUTHORIZATION_FAILED\(29\), "
                                             r"expected NONE\(0\)"):
        assert_error_precedence(commit)


def test_a_partition_answered_twice_or_not_asked_fails(recording: Recording) -> None:
    commit = recording("kip1319-mixed-request")
    topics = commit["exchange"]["response"]["Topics"]
    topics[0]["Partitions"].append(dict(topics[0]["Partitions"][0]))
    topics[1]["Partitions"].append({"PartitionIndex": 3, "ErrorCode": error_code("UNKNOWN_TOPIC_ID")})
    with pytest.raises(AssertionError, match=r"answered 2 times(.|\n)*partition 3 answered UNKNOWN_TOPIC_ID\(100\) "
                                             r"but was not in the request"):
        assert_error_precedence(commit)


def test_a_topic_left_unanswered_fails(recording: Recording) -> None:
    commit = recording("kip1319-mixed-request")
    dropped = commit["exchange"]["response"]["Topics"].pop()
    with pytest.raises(AssertionError, match=rf"{dropped['TopicId']} partition 0 was in the request but not answered"):
        assert_error_precedence(commit)


def test_precedence_is_judged_on_v6_only(recording: Recording) -> None:
    commit = recording("kip1319-unknown-topic-id")
    commit["exchange"]["version"] = 5
    with pytest.raises(AssertionError, match="the precedence rules are v6's; the exchange is v5"):
        assert_error_precedence(commit)


# -- error mapping v6 / v5 --------------------------------------------------------------------------

def test_recorded_unknown_group_mapping_passes(recording: Recording) -> None:
    assert_group_error_mapping(recording("kip1319-unknown-group"), "GROUP_ID_NOT_FOUND")


def test_v6_still_mapping_to_illegal_generation_fails(recording: Recording) -> None:
    answers = recording("kip1319-unknown-group")
    answers["v6"]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code("ILLEGAL_GENERATION")
    with pytest.raises(AssertionError, match=r"v6 .* ILLEGAL_GENERATION\(22\), expected GROUP_ID_NOT_FOUND\(69\)"):
        assert_group_error_mapping(answers, "GROUP_ID_NOT_FOUND")


def test_v5_returning_the_new_error_fails(recording: Recording) -> None:
    answers = recording("kip1319-unknown-group")
    answers["v5"]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code("GROUP_ID_NOT_FOUND")
    with pytest.raises(AssertionError, match=r"v5 .* GROUP_ID_NOT_FOUND\(69\), expected ILLEGAL_GENERATION\(22\)"):
        assert_group_error_mapping(answers, "GROUP_ID_NOT_FOUND")


def test_v6_and_v5_requests_that_differ_fail(recording: Recording) -> None:
    answers = recording("kip1319-unknown-group")
    answers["v5"]["request"]["MemberId"] = "someone-else"
    with pytest.raises(AssertionError, match="differ in MemberId: 'kcts-member' and 'someone-else'"):
        assert_group_error_mapping(answers, "GROUP_ID_NOT_FOUND")


def test_a_mapping_judged_on_the_wrong_versions_fails(recording: Recording) -> None:
    answers = recording("kip1319-unknown-group")
    answers["v6"]["version"] = 5
    with pytest.raises(AssertionError, match="the exchanges are v5 and v5, not v6 and v5"):
        assert_group_error_mapping(answers, "GROUP_ID_NOT_FOUND")


def test_recorded_stale_epoch_mapping_passes(recording: Recording) -> None:
    assert_stale_epoch_mapping(recording("kip1319-stale-member-epoch"))


def test_stale_epoch_as_illegal_generation_on_v6_fails(recording: Recording) -> None:
    answers = recording("kip1319-stale-member-epoch")
    answers["stale"]["v6"]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code("ILLEGAL_GENERATION")
    with pytest.raises(AssertionError,
                       match=r"stale v6 .*ILLEGAL_GENERATION\(22\), expected STALE_MEMBER_EPOCH\(113\)"):
        assert_stale_epoch_mapping(answers)


def test_the_current_epoch_refused_fails(recording: Recording) -> None:
    answers = recording("kip1319-stale-member-epoch")
    answers["current"]["v5"]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code("ILLEGAL_GENERATION")
    with pytest.raises(AssertionError, match=r"current v5 .*ILLEGAL_GENERATION\(22\), expected NONE\(0\)"):
        assert_stale_epoch_mapping(answers)


def test_a_member_still_at_its_first_epoch_fails(recording: Recording) -> None:
    answers = recording("kip1319-stale-member-epoch")
    answers["member_epoch"] = 1
    with pytest.raises(AssertionError, match="did not move past its first epoch: 1"):
        assert_stale_epoch_mapping(answers)


def test_a_stale_commit_carrying_the_current_epoch_fails(recording: Recording) -> None:
    answers = recording("kip1319-stale-member-epoch")
    answers["stale"]["v6"]["request"]["GenerationIdOrMemberEpoch"] = answers["member_epoch"]
    with pytest.raises(AssertionError, match=r"the stale commits carry epoch\(s\) \[1, 2\], not 1"):
        assert_stale_epoch_mapping(answers)


# -- persisted topic ids ----------------------------------------------------------------------------

def test_recorded_persisted_topic_id_passes(recording: Recording) -> None:
    assert_persisted_topic_id(recording("kip1319-persisted-topic-id"))


def test_a_persisted_zero_topic_id_on_a_v6_broker_fails(recording: Recording) -> None:
    rec = recording("kip1319-persisted-topic-id")
    rec["persisted"][0]["value"]["topicId"] = ZERO_UUID
    with pytest.raises(AssertionError, match=rf"has topicId {ZERO_UUID}, expected {rec['topic_id']}"):
        assert_persisted_topic_id(rec)


def test_a_pre_v4_offset_commit_value_fails(recording: Recording) -> None:
    rec = recording("kip1319-persisted-topic-id")
    rec["persisted"][0]["value_version"] = 3
    with pytest.raises(AssertionError, match=r"OffsetCommitValue v3 .*topicId is a field of v4"):
        assert_persisted_topic_id(rec)


def test_a_persisted_offset_other_than_committed_fails(recording: Recording) -> None:
    rec = recording("kip1319-persisted-topic-id")
    rec["persisted"][0]["value"]["leaderEpoch"] = 4
    with pytest.raises(AssertionError, match="holds offset 42 epoch 4, committed 42 epoch 3"):
        assert_persisted_topic_id(rec)


def test_no_persisted_record_fails(recording: Recording) -> None:
    rec = recording("kip1319-persisted-topic-id")
    rec["persisted"] = []
    with pytest.raises(AssertionError, match=r"no OffsetCommit record for .*-0 in __consumer_offsets"):
        assert_persisted_topic_id(rec)


def test_a_zero_topic_under_test_cannot_pass(recording: Recording) -> None:
    rec = recording("kip1319-persisted-topic-id")
    rec["topic_id"] = ZERO_UUID
    with pytest.raises(AssertionError, match="the topic's own ID is the zero UUID"):
        assert_persisted_topic_id(rec)


def test_recorded_pre_kip_zero_topic_id_passes(recording: Recording) -> None:
    assert_persisted_zero_topic_id(recording("kip1319-pre-kip-persisted"), PRE_KIP)


def test_a_real_topic_id_from_a_pre_kip_broker_fails(recording: Recording) -> None:
    rec = recording("kip1319-pre-kip-persisted")
    rec["persisted"][0]["value"]["topicId"] = rec["topic_id"]
    with pytest.raises(AssertionError, match=rf"written by Kafka {PRE_KIP} has topicId {rec['topic_id']}, "
                                             rf"expected {ZERO_UUID}"):
        assert_persisted_zero_topic_id(rec, PRE_KIP)


def test_a_pre_kip_record_with_another_offset_fails(recording: Recording) -> None:
    rec = recording("kip1319-pre-kip-persisted")
    rec["persisted"][0]["value"]["offset"] = 20
    with pytest.raises(AssertionError, match="holds offset 20 epoch 2, committed 21 epoch 2"):
        assert_persisted_zero_topic_id(rec, PRE_KIP)


def test_a_pre_kip_record_missing_fails(recording: Recording) -> None:
    rec = recording("kip1319-pre-kip-persisted")
    rec["persisted"][0]["partition"] = 1
    with pytest.raises(AssertionError, match=r"no OffsetCommit record for .*-0"):
        assert_persisted_zero_topic_id(rec, PRE_KIP)


# -- committed offsets read back --------------------------------------------------------------------

@pytest.mark.parametrize("name", FETCHED_BACK)
def test_recorded_offsets_read_back(recording: Recording, name: str) -> None:
    assert_offsets_fetched_back(recording(name))


@pytest.mark.parametrize("field,value,shown", [
    ("offset", 41, "returned NONE(0) offset 41 epoch 3"),
    ("leader_epoch", -1, "returned NONE(0) offset 42 epoch -1"),
    ("error", 16, "returned NOT_COORDINATOR(16) offset 42 epoch 3"),
])
def test_a_fetched_offset_unlike_the_commit_fails(recording: Recording, field: str, value: int, shown: str) -> None:
    rec = recording("kip1319-v6-commit")
    rec["fetched"][0][field] = value
    with pytest.raises(AssertionError, match=r"-0: committed offset 42 epoch 3, OffsetFetch " + re.escape(shown)):
        assert_offsets_fetched_back(rec)


def test_a_client_commit_that_did_not_land_fails(recording: Recording) -> None:
    rec = recording("kip1319-java-v6-copy")
    rec["fetched"] = []
    with pytest.raises(AssertionError, match="committed offset 20 epoch None, OffsetFetch returned nothing"):
        assert_offsets_fetched_back(rec)


def test_the_fallback_losing_one_topic_fails(recording: Recording) -> None:
    rec = recording("kip1319-java-fallback-v5")
    rec["fetched"][1]["offset"] = -1
    with pytest.raises(AssertionError,
                       match=r"committed offset 7 epoch None, OffsetFetch returned NONE\(0\) offset -1"):
        assert_offsets_fetched_back(rec)


def test_an_offset_fetched_for_a_partition_not_committed_fails(recording: Recording) -> None:
    rec = recording("kip1319-java-capped-v5")
    rec["fetched"].append({**rec["fetched"][0], "partition": 1})
    with pytest.raises(AssertionError, match="for a partition not committed"):
        assert_offsets_fetched_back(rec)


# -- the Java client: outcome, injection, versions ----------------------------------------------------

@pytest.mark.parametrize("name", JAVA_COMMITTED)
def test_recorded_java_transactions_committed(recording: Recording, name: str) -> None:
    assert_transaction_outcome(recording(name), "committed")


@pytest.mark.parametrize("name", JAVA_COPIED)
def test_recorded_java_copies_copied(recording: Recording, name: str) -> None:
    assert_transaction_outcome(recording(name), "copied")


def test_an_aborted_transaction_is_no_commit(recording: Recording) -> None:
    run = recording("kip1319-java-capped-v5")
    next(e for e in run["events"] if e["event"] == "done")["outcome"] = "aborted"
    with pytest.raises(AssertionError, match="ended 'aborted' \\(exit 0\\), expected 'committed'"):
        assert_transaction_outcome(run, "committed")


def test_a_driver_that_exits_with_an_error_fails(recording: Recording) -> None:
    run = recording("kip1319-java-v6-copy")
    run["exit_code"] = 1
    with pytest.raises(AssertionError, match="ended 'copied' \\(exit 1\\), expected 'copied'"):
        assert_transaction_outcome(run, "copied")


def test_a_driver_that_never_finished_fails(recording: Recording) -> None:
    run = recording("kip1319-tv1-java-v4")
    run["events"] = [e for e in run["events"] if e["event"] != "done"]
    with pytest.raises(AssertionError, match="ended None"):
        assert_transaction_outcome(run, "committed")


@pytest.mark.parametrize("name,exactly", [("kip1319-java-capped-v5", None), ("kip1319-java-fallback-v5", None),
                                          ("kip1319-java-retry-unknown-topic-id", 2),
                                          ("kip1319-java-abort-GROUP_ID_NOT_FOUND", 1),
                                          ("kip1319-java-abort-STALE_MEMBER_EPOCH", 1)])
def test_recorded_injections_acted(recording: Recording, name: str, exactly: int | None) -> None:
    assert_injected(recording(name), exactly=exactly)


def test_a_fault_that_never_acted_fails(recording: Recording) -> None:
    run = recording("kip1319-java-capped-v5")
    run["injected"]["fired"] = 0
    with pytest.raises(AssertionError,
                       match=r"CapVersion\(TxnOffsetCommit <= v5.* acted 0 time\(s\), expected at least 1"):
        assert_injected(run)


def test_a_fault_that_acted_too_often_fails(recording: Recording) -> None:
    run = recording("kip1319-java-retry-unknown-topic-id")
    run["injected"]["fired"] = 3
    with pytest.raises(AssertionError, match=r"acted 3 time\(s\), expected 2"):
        assert_injected(run, exactly=2)


def test_a_run_without_a_fault_fails_the_premise(recording: Recording) -> None:
    run = recording("kip1319-tv1-java-v4")
    with pytest.raises(AssertionError, match=r"fault None acted 0 time\(s\)"):
        assert_injected(run)


@pytest.mark.parametrize("name,version", SENDS)
def test_recorded_clients_send_the_negotiated_version(recording: Recording, name: str, version: int) -> None:
    assert_client_sends(recording(name), version)


def test_one_v5_commit_among_v6_fails(recording: Recording) -> None:
    run = recording("kip1319-java-v6-copy")
    run["commits"][1]["version"] = 5
    with pytest.raises(AssertionError, match=r"must send every TxnOffsetCommit at v6 .*:\n  #1 is v5\n"):
        assert_client_sends(run, 6)


def test_a_v6_commit_naming_another_topic_id_fails(recording: Recording) -> None:
    run = recording("kip1319-java-v6-copy")
    other = uuid.uuid4()
    run["commits"][0]["request"]["Topics"][0]["TopicId"] = other
    with pytest.raises(AssertionError, match=rf"#0 names \['TopicId {other}'\]"):
        assert_client_sends(run, 6)


def test_a_fallback_that_drops_a_topic_fails(recording: Recording) -> None:
    run = recording("kip1319-java-fallback-v5")
    run["commits"][0]["request"]["Topics"].pop()
    with pytest.raises(AssertionError, match=r"#0 names \['Name "):
        assert_client_sends(run, 5)


def test_the_fallback_sending_v6_fails(recording: Recording) -> None:
    run = recording("kip1319-java-fallback-v5")
    commit = run["commits"][0]
    commit["version"] = 6
    for t in commit["request"]["Topics"]:
        name = t.pop("Name")
        t["TopicId"] = next(a["topic_id"] for a in run["asked"] if a["topic"] == name)
    with pytest.raises(AssertionError, match=r"#0 is v6\n  #0 names \['TopicId"):
        assert_client_sends(run, 5)


def test_a_transaction_version_1_client_sending_v5_fails(recording: Recording) -> None:
    run = recording("kip1319-tv1-java-v4")
    run["commits"][-1]["version"] = 5
    with pytest.raises(AssertionError, match=r"at v4 .*:\n  #0 is v5\n"):
        assert_client_sends(run, 4)


def test_a_client_that_sent_no_commit_fails(recording: Recording) -> None:
    run = recording("kip1319-pre-kip-java-copy")
    run["commits"] = []
    with pytest.raises(AssertionError, match="sent no TxnOffsetCommit"):
        assert_client_sends(run, 5)


# -- retries ----------------------------------------------------------------------------------------

def test_recorded_v6_copy_retried_only_transient_answers(recording: Recording) -> None:
    assert_only_transient_retries(recording("kip1319-java-v6-copy"))


def test_a_last_commit_refused_fails(recording: Recording) -> None:
    run = recording("kip1319-java-v6-copy")
    run["commits"][-1]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code("NOT_COORDINATOR")
    with pytest.raises(AssertionError, match=r"the last answer is \['NOT_COORDINATOR\(16\)'\], not NONE\(0\)"):
        assert_only_transient_retries(run)


def test_a_non_transient_answer_on_the_way_fails(recording: Recording) -> None:
    run = recording("kip1319-java-v6-copy")
    run["commits"][0]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code("UNKNOWN_TOPIC_ID")
    with pytest.raises(AssertionError, match=r"#0 answered \['UNKNOWN_TOPIC_ID\(100\)'\]"):
        assert_only_transient_retries(run)


def test_recorded_retry_of_unknown_topic_id_passes(recording: Recording) -> None:
    assert_retried_unchanged(recording("kip1319-java-retry-unknown-topic-id"))


def test_a_retry_that_changes_the_request_fails(recording: Recording) -> None:
    run = recording("kip1319-java-retry-unknown-topic-id")
    run["commits"][-1]["request"]["Topics"][0]["Partitions"][0]["CommittedOffset"] = 6
    n = len(run["commits"]) - 1
    with pytest.raises(AssertionError,
                       match=rf"#{n} differs from the first request \(the retries changed the request\)"):
        assert_retried_unchanged(run)


def test_a_retry_that_drops_a_topic_fails(recording: Recording) -> None:
    run = recording("kip1319-java-retry-unknown-topic-id")
    run["commits"][1]["request"]["Topics"].pop()
    with pytest.raises(AssertionError, match="#1 differs from the first request"):
        assert_retried_unchanged(run)


def test_a_retry_at_v5_fails(recording: Recording) -> None:
    run = recording("kip1319-java-retry-unknown-topic-id")
    run["commits"][-1]["version"] = 5
    with pytest.raises(AssertionError, match=r"\(a retry\) is v5 answered \['NONE\(0\)'\]"):
        assert_retried_unchanged(run)


def test_a_client_that_gives_up_after_unknown_topic_id_fails(recording: Recording) -> None:
    run = recording("kip1319-java-retry-unknown-topic-id")
    run["commits"] = run["commits"][:2]
    with pytest.raises(AssertionError, match="2 TxnOffsetCommit\\(s\\) for 2 injected answers: no retry was accepted"):
        assert_retried_unchanged(run)


def test_franz_gos_recorded_abort_after_unknown_topic_id_fails(recording: Recording) -> None:
    """franz-go's GroupTransactSession ends the transaction on a per-partition TxnOffsetCommit error
    (kgo txn.go, End: commitErr -> no commit) and the copier redoes it: no retry within it."""
    run = recording("kip1319-franz-go-retry-unknown-topic-id")
    with pytest.raises(AssertionError, match=r"must retry UNKNOWN_TOPIC_ID\(100\) within the transaction:\s+"
                                             r"2 transaction\(s\) aborted"):
        assert_retried_unchanged(run, later_transactions=True)


def test_a_copier_that_retried_within_its_transaction_passes_despite_later_transactions(
    recording: Recording,
) -> None:
    """Without the aborts, franz-go's commits up to the first accepted one are a retry of one request;
    the later transactions' commits (other offsets) are not judged."""
    run = recording("kip1319-franz-go-retry-unknown-topic-id")
    # What a retry within the transaction would send: the first request again (franz-go's redo in a
    # new transaction carries a bumped producer epoch).
    run["events"] = [e for e in run["events"] if e.get("event") != "transaction_aborted"]
    for c in run["commits"][1:3]:
        c["request"] = run["commits"][0]["request"]
    assert len({str(c["request"]) for c in run["commits"]}) > 1, "premise: later transactions commit other offsets"
    assert_retried_unchanged(run, later_transactions=True)
    with pytest.raises(AssertionError, match="differs from the first request"):
        assert_retried_unchanged(run)


def test_more_injected_answers_than_seen_fails(recording: Recording) -> None:
    run = recording("kip1319-java-retry-unknown-topic-id")
    run["injected"]["fired"] = 3
    with pytest.raises(AssertionError, match=r"#2 \(injected\) is v6 answered \['NONE\(0\)'\], not v6 "
                                             r"UNKNOWN_TOPIC_ID\(100\)"):
        assert_retried_unchanged(run)


# -- aborts ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ABORTS)
def test_recorded_aborts_pass(recording: Recording, name: str) -> None:
    assert_aborted_without_retry(recording(name))
    assert_nothing_visible(recording(name))


@pytest.mark.parametrize("name", ABORTS)
def test_a_retried_abortable_error_fails(recording: Recording, name: str) -> None:
    run = recording(name)
    run["commits"].append(run["commits"][0])
    with pytest.raises(AssertionError, match=r"expected one v6 answered .*: an abortable error must not be retried"):
        assert_aborted_without_retry(run)


def test_a_client_that_commits_after_an_abortable_error_fails(recording: Recording) -> None:
    run = recording("kip1319-java-abort-GROUP_ID_NOT_FOUND")
    next(e for e in run["events"] if e["event"] == "done")["outcome"] = "committed"
    with pytest.raises(AssertionError, match="the driver ended 'committed' \\(exit 0\\), not 'aborted'"):
        assert_aborted_without_retry(run)


def test_an_abort_without_a_failed_send_fails(recording: Recording) -> None:
    run = recording("kip1319-java-abort-STALE_MEMBER_EPOCH")
    run["events"] = [e for e in run["events"] if e["event"] != "transaction_failed"]
    with pytest.raises(AssertionError, match="0 transaction_failed events, expected 1"):
        assert_aborted_without_retry(run)


def test_an_abort_of_an_empty_transaction_proves_nothing(recording: Recording) -> None:
    run = recording("kip1319-java-abort-STALE_MEMBER_EPOCH")
    next(e for e in run["events"] if e["event"] == "produced")["offsets"] = []
    with pytest.raises(AssertionError, match="the transaction wrote nothing before the commit failed"):
        assert_aborted_without_retry(run)


def test_an_abort_answered_with_another_error_fails(recording: Recording) -> None:
    run = recording("kip1319-java-abort-GROUP_ID_NOT_FOUND")
    run["commits"][0]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code("ILLEGAL_GENERATION")
    with pytest.raises(AssertionError, match=r"\['ILLEGAL_GENERATION\(22\)'\]\)\], expected one v6 answered "
                                             r"GROUP_ID_NOT_FOUND\(69\)"):
        assert_aborted_without_retry(run)


def test_aborted_records_visible_fail(recording: Recording) -> None:
    run = recording("kip1319-java-abort-GROUP_ID_NOT_FOUND")
    run["visible"] = [b"txn-value-0"]
    with pytest.raises(AssertionError, match=r"aborted records visible to read_committed: \[b'txn-value-0'\]"):
        assert_nothing_visible(run)


def test_an_aborted_offset_commit_visible_fails(recording: Recording) -> None:
    run = recording("kip1319-java-abort-STALE_MEMBER_EPOCH")
    run["fetched"][0]["offset"] = 5
    with pytest.raises(AssertionError, match=r"aborted offset commit visible: .*'offset': 5"):
        assert_nothing_visible(run)


# -- what read_committed sees -------------------------------------------------------------------------

@pytest.mark.parametrize("name", VISIBLE)
def test_recorded_committed_records_are_visible(recording: Recording, name: str) -> None:
    assert_visible_to_read_committed(recording(name))


def test_a_lost_committed_record_fails(recording: Recording) -> None:
    run = recording("kip1319-java-v6-copy")
    run["visible"] = run["visible"][:-1]
    with pytest.raises(AssertionError, match=r"read_committed sees 19 value\(s\) .*wrote 20"):
        assert_visible_to_read_committed(run)


def test_reordered_records_fail(recording: Recording) -> None:
    run = recording("kip1319-pre-kip-java-copy")
    run["visible"] = list(reversed(run["visible"]))
    with pytest.raises(AssertionError, match="read_committed sees 10 value\\(s\\) \\[b'old-9'"):
        assert_visible_to_read_committed(run)


def test_an_extra_record_fails(recording: Recording) -> None:
    run = recording("kip1319-librdkafka")
    run["visible"].append(b"aborted")
    with pytest.raises(AssertionError, match="read_committed sees 2 value\\(s\\)"):
        assert_visible_to_read_committed(run)


# -- premises and features -----------------------------------------------------------------------------

def test_recorded_fallback_topics_have_ids(recording: Recording) -> None:
    assert_topic_ids_assigned(recording("kip1319-java-fallback-v5"))


def test_a_topic_without_an_id_on_the_broker_fails(recording: Recording) -> None:
    run = recording("kip1319-java-fallback-v5")
    run["asked"][1]["topic_id"] = ZERO_UUID
    topic = run["asked"][1]["topic"]
    with pytest.raises(AssertionError, match=rf"topics without a topic ID on the broker itself: \['{topic}'\]"):
        assert_topic_ids_assigned(run)


def test_recorded_transaction_version_1_passes(recording: Recording) -> None:
    assert_transaction_version_finalized(recording("kip1319-tv1-features"), 1)


def _feature(features: dict[str, Any], side: str) -> dict[str, Any]:
    return next(f for f in features[side] if f["Name"] == "transaction.version")


def test_transaction_version_finalized_at_2_fails(recording: Recording) -> None:
    features = recording("kip1319-tv1-features")
    _feature(features, "finalized")["MaxVersionLevel"] = 2
    with pytest.raises(AssertionError, match=r"transaction\.version is not finalized at 1"):
        assert_transaction_version_finalized(features, 1)


def test_transaction_version_not_finalized_fails(recording: Recording) -> None:
    features = recording("kip1319-tv1-features")
    features["finalized"] = [f for f in features["finalized"] if f["Name"] != "transaction.version"]
    with pytest.raises(AssertionError, match=r"transaction\.version is not finalized at 1"):
        assert_transaction_version_finalized(features, 1)


def test_software_without_a_higher_transaction_version_fails(recording: Recording) -> None:
    features = recording("kip1319-tv1-features")
    _feature(features, "supported")["MaxVersion"] = 1
    with pytest.raises(AssertionError, match=r"supports no transaction\.version above 1"):
        assert_transaction_version_finalized(features, 1)


# -- the librdkafka version check ------------------------------------------------------------------------

def test_recorded_librdkafka_is_the_known_gap(recording: Recording) -> None:
    """librdkafka 2.16 sent v3: the check raises the one exception the known-gap verdict covers."""
    with pytest.raises(OlderVersionSent, match=r"librdkafka .* sent TxnOffsetCommit \[3\], not v6 .*used .*"
                                               r"TxnOffsetCommit:v3"):
        assert_client_sends_v6(recording("kip1319-librdkafka"))


def test_a_client_sending_v6_passes_the_version_check(recording: Recording) -> None:
    assert_client_sends_v6(recording("kip1319-java-v6-copy"))


def test_a_client_sending_no_commit_is_a_failure_not_the_gap(recording: Recording) -> None:
    run = recording("kip1319-librdkafka")
    run["commits"] = []
    with pytest.raises(AssertionError, match="sent no TxnOffsetCommit") as caught:
        assert_client_sends_v6(run)
    assert not isinstance(caught.value, OlderVersionSent)


def test_a_v6_client_falling_back_once_fails(recording: Recording) -> None:
    run = recording("kip1319-java-v6-copy")
    run["commits"][0]["version"] = 5
    with pytest.raises(OlderVersionSent, match=r"sent TxnOffsetCommit \[5, 6\], not v6"):
        assert_client_sends_v6(run)


def test_recorded_recreated_topic_answers_pass(recording: Recording) -> None:
    commit = recording("kip1319-recreated-topic-old-id")
    old, new = _fact(commit, exists=False)["topic_id"], _fact(commit, exists=True)["topic_id"]
    assert old != new
    assert_error_precedence(commit)


def test_an_old_topic_id_resolved_to_the_recreated_topic_fails(recording: Recording) -> None:
    """A broker that resolved a deleted topic's TopicId by name would commit it: the first rule forbids it."""
    commit = recording("kip1319-recreated-topic-old-id")
    old = _fact(commit, exists=False)["topic_id"]
    for t in commit["exchange"]["response"]["Topics"]:
        if t["TopicId"] == old:
            for p in t["Partitions"]:
                p["ErrorCode"] = 0
    with pytest.raises(AssertionError, match="UNKNOWN_TOPIC_ID"):
        assert_error_precedence(commit)


@pytest.mark.parametrize("name", ["kip1319-unknown-group", "kip1319-stale-member-epoch"])
def test_recorded_older_versions_keep_the_old_mapping(recording: Recording, name: str) -> None:
    answers = recording(name)
    older = (answers["stale"] if "stale" in answers else answers)["older"]
    assert set(older) >= {"v3", "v4"}, f"premise: v3 and v4 were asked: {sorted(older)}"


@pytest.mark.parametrize("version", ["v3", "v4"])
def test_an_older_version_returning_the_new_error_fails(recording: Recording, version: str) -> None:
    """KIP-1319: "For v0-5, all existing error mappings are preserved": GROUP_ID_NOT_FOUND is v6's alone."""
    answers = recording("kip1319-unknown-group")
    answers["older"][version]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code("GROUP_ID_NOT_FOUND")
    with pytest.raises(AssertionError, match=rf"{version} .* GROUP_ID_NOT_FOUND\(69\), expected ILLEGAL_GENERATION"):
        assert_group_error_mapping(answers, "GROUP_ID_NOT_FOUND")


def test_a_stale_epoch_on_v4_returned_as_stale_member_epoch_fails(recording: Recording) -> None:
    answers = recording("kip1319-stale-member-epoch")
    answers["stale"]["older"]["v4"]["response"]["Topics"][0]["Partitions"][0]["ErrorCode"] = error_code(
        "STALE_MEMBER_EPOCH")
    with pytest.raises(AssertionError, match=r"stale v4 .* STALE_MEMBER_EPOCH\(113\), expected ILLEGAL_GENERATION"):
        assert_stale_epoch_mapping(answers)


def test_recorded_mixed_answer_retry_passes(recording: Recording) -> None:
    run = recording("kip1319-java-mixed-outcome")
    failed = _failed_topic(run)
    assert_mixed_answer_retried(run, failed)


def _failed_topic(run: dict[str, Any]) -> Any:
    first = run["commits"][0]["response"]["Topics"]
    return next(t["TopicId"] for t in first if any(p["ErrorCode"] == 100 for p in t["Partitions"]))


def test_a_retry_that_drops_the_failed_topic_fails(recording: Recording) -> None:
    """A client that mapped the error to the wrong topic would retry the committed one, not the failed one."""
    run = recording("kip1319-java-mixed-outcome")
    failed = _failed_topic(run)
    for c in run["commits"][1:]:
        c["request"]["Topics"] = [t for t in c["request"]["Topics"] if t["TopicId"] != failed]
    with pytest.raises(AssertionError, match=rf"#1 \(a retry\) is v6 without the failed topic {failed}"):
        assert_mixed_answer_retried(run, failed)


def test_a_retry_that_changes_an_offset_fails(recording: Recording) -> None:
    run = recording("kip1319-java-mixed-outcome")
    run["commits"][1]["request"]["Topics"][0]["Partitions"][0]["CommittedOffset"] += 1
    with pytest.raises(AssertionError, match=r"#1 \(a retry\) changed or added offsets"):
        assert_mixed_answer_retried(run, _failed_topic(run))


@pytest.mark.parametrize("error", ["GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH"])
def test_recorded_franz_go_abort_on_a_group_error_passes(recording: Recording, error: str) -> None:
    assert_copier_aborted_without_retry(recording(f"kip1319-franz-go-abort-{error}"))


def test_a_copier_that_retries_a_group_error_fails(recording: Recording) -> None:
    run = recording("kip1319-franz-go-abort-GROUP_ID_NOT_FOUND")
    run["commits"].insert(1, run["commits"][0])  # the same commit sent again within the transaction
    with pytest.raises(AssertionError, match=r"\d+ TxnOffsetCommit\(s\) for \d+ transaction\(s\) ended: a retry"):
        assert_copier_aborted_without_retry(run)


def test_a_copier_that_commits_despite_a_group_error_fails(recording: Recording) -> None:
    run = recording("kip1319-franz-go-abort-GROUP_ID_NOT_FOUND")
    first = next(e for e in run["events"] if e.get("event") == "transaction_aborted")
    first["event"] = "transaction_committed"
    with pytest.raises(AssertionError, match=r"the transaction whose commit got GROUP_ID_NOT_FOUND\(69\) ended"):
        assert_copier_aborted_without_retry(run)


def _mixed_topics(run: dict[str, Any]) -> tuple[str, str]:
    """(the committed topic, the failed topic) of the recorded franz-go mixed answer."""
    failed_id = run["injected"]["rule"].split("TopicId ")[1].split(" ")[0]
    failed = next(a["topic"] for a in run["asked"] if str(a["topic_id"]) == failed_id)
    return next(a["topic"] for a in run["asked"] if a["topic"] != failed), failed


def test_recorded_franz_go_mixed_answer_names_the_failed_topic(recording: Recording) -> None:
    run = recording("kip1319-franz-go-mixed-outcome")
    committed, failed = _mixed_topics(run)
    assert_failed_topic_named(run, failed, committed)


def test_blaming_the_committed_topic_fails(recording: Recording) -> None:
    run = recording("kip1319-franz-go-mixed-outcome")
    committed, failed = _mixed_topics(run)
    aborted = next(e for e in run["events"] if e.get("event") == "transaction_aborted")
    aborted["error"] = aborted["error"].replace(failed, committed)
    with pytest.raises(AssertionError, match=rf"the failed transaction reports .*: not {re.escape(failed)} alone"):
        assert_failed_topic_named(run, failed, committed)
