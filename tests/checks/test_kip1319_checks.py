"""The KIP-1319 checks pass on recorded 4.4.0 histories and fail on copies altered to break one promise.

Every check of harness/checks/kip1319.py is here twice: on the recorded history (a live run against
Apache Kafka 4.4.0 and its 4.3.1 / transaction.version=1 side clusters) it passes, and on a copy with
one field changed (an error code, a key, a version, a topic ID, a retry count) it fails, with the
altered value among its evidence. The alterations are a table: the recording, the field, the value,
the check, and the promise that check judges in the suites.
"""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any

import pytest
from alterations import Alteration, Check, alteration, altered, apply, raw, typed

from harness.checks.kip1319 import (
    BLOCK_MARGIN_MS,
    MAX_BLOCK_ERROR,
    OlderVersionSent,
    assert_aborted_without_retry,
    assert_advertises_v6,
    assert_client_sends,
    assert_client_sends_v6,
    assert_commit_accepted,
    assert_copier_aborted_without_retry,
    assert_error_precedence,
    assert_group_error_aborted,
    assert_group_error_mapping,
    assert_injected,
    assert_keyed_by_topic_id,
    assert_metadata_wait_bounded,
    assert_mixed_answer_mapped,
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
from harness.errors import SceneUnmet
from harness.histories.kip1319 import (
    Advertised,
    ClientRun,
    Features,
    GroupErrorAnswers,
    PersistedCommit,
    StaleEpochAnswers,
    TopicFact,
    TxnCommit,
)
from harness.promises import catalogue
from harness.protocol.errors import error_code
from harness.protocol.types import ZERO_UUID

PRE_KIP = "4.3.1"
OTHER_ID = uuid.UUID(int=0x0C75)  # a TopicId no recording holds

# The history type of each recording (tests/checks/data/kip1319-<name>.json); the rest are ClientRuns.
KINDS: dict[str, type] = {
    "advertised-v6": Advertised, "pre-kip-advertised": Advertised, "tv1-features": Features,
    "v6-commit": TxnCommit, "unknown-topic-id": TxnCommit, "missing-partition": TxnCommit,
    "unauthorized-topic": TxnCommit, "mixed-request": TxnCommit, "recreated-topic-old-id": TxnCommit,
    "unknown-group": GroupErrorAnswers, "stale-member-epoch": StaleEpochAnswers,
    "persisted-topic-id": PersistedCommit, "pre-kip-persisted": PersistedCommit,
}


def kind(name: str) -> type:
    return KINDS.get(name.removeprefix("kip1319-"), ClientRun)


def recorded(name: str) -> Any:
    return typed(kind(name), raw(name))


# -- the checks, as the suites call them -----------------------------------------------------------

def _accepted_commit(p: PersistedCommit) -> None:
    assert_commit_accepted(p.commit)


def _mixed_retried_by_topic_id(run: ClientRun) -> None:
    assert_mixed_answer_mapped(run)


advertises_v6 = assert_advertises_v6
tops_out_at_v5 = partial(assert_tops_out_at_v5, release=PRE_KIP)
zero_topic_id = partial(assert_persisted_zero_topic_id, release=PRE_KIP)
group_id_not_found_mapping = partial(assert_group_error_mapping, error="GROUP_ID_NOT_FOUND")
committed = partial(assert_transaction_outcome, outcome="committed")
copied = partial(assert_transaction_outcome, outcome="copied")
retried_later = partial(assert_retried_unchanged, later_transactions=True)
finalized_at_1 = partial(assert_transaction_version_finalized, level=1)


def sends(version: int) -> Check:
    return partial(assert_client_sends, version=version)


def injected(exactly: int | None = None) -> Check:
    return partial(assert_injected, exactly=exactly)


# -- changes that are more than one value -----------------------------------------------------------

def drop_last(old: list[Any], _: Any) -> list[Any]:
    return old[:-1]


def reverse(old: list[Any], _: Any) -> list[Any]:
    return list(reversed(old))


def without_event(name: str) -> Any:
    return lambda old, _: [e for e in old if e["event"] != name]


def with_feature(name: str, **values: int) -> Any:
    return lambda old, _: [{**f, **values} if f["name"] == name else f for f in old]


def without_feature(name: str) -> Any:
    return lambda old, _: [f for f in old if f["name"] != name]


def named_by_topic_id(old: list[Any], rec: Any) -> list[Any]:
    """A v5 request's topics named as v6 names them: by the TopicId of their name."""
    ids = {a["topic"]: a["topic_id"] for a in rec["asked"]}
    return [{"TopicId": ids[t["Name"]], "Partitions": t["Partitions"]} for t in old]


def without_failed_topic(old: list[Any], rec: Any) -> list[Any]:
    return [t for t in old if t["TopicId"] != rec["injected"]["topic_id"]]


def blaming_the_committed_topic(old: str, rec: Any) -> str:
    failed = next(a["topic"] for a in rec["asked"] if a["topic_id"] == rec["injected"]["topic_id"])
    other = next(a["topic"] for a in rec["asked"] if a["topic_id"] != rec["injected"]["topic_id"])
    return old.replace(failed, other)


def code(name: str) -> int:
    return error_code(name)


# -- every recording passes the checks the suites run on it ------------------------------------------

PASSES: list[tuple[str, Check]] = [
    ("kip1319-advertised-v6", advertises_v6),
    ("kip1319-pre-kip-advertised", tops_out_at_v5),
    ("kip1319-v6-commit", assert_keyed_by_topic_id),
    ("kip1319-v6-commit", assert_commit_accepted),
    ("kip1319-persisted-topic-id", _accepted_commit),
    ("kip1319-pre-kip-persisted", _accepted_commit),
    *[(name, assert_error_precedence) for name in ("kip1319-unknown-topic-id", "kip1319-missing-partition",
                                                  "kip1319-unauthorized-topic", "kip1319-mixed-request",
                                                  "kip1319-recreated-topic-old-id")],
    ("kip1319-unknown-group", group_id_not_found_mapping),
    ("kip1319-stale-member-epoch", assert_stale_epoch_mapping),
    ("kip1319-persisted-topic-id", assert_persisted_topic_id),
    ("kip1319-pre-kip-persisted", zero_topic_id),
    *[(name, assert_offsets_fetched_back) for name in (
        "kip1319-v6-commit", "kip1319-java-v6-copy", "kip1319-java-capped-v5", "kip1319-java-fallback-v5",
        "kip1319-java-retry-unknown-topic-id", "kip1319-pre-kip-java-copy", "kip1319-franz-go-v6-copy",
        "kip1319-franz-go-capped-v5", "kip1319-franz-go-fallback-v5", "kip1319-java-mixed-outcome")],
    *[(name, committed) for name in ("kip1319-java-capped-v5", "kip1319-java-fallback-v5",
                                     "kip1319-java-retry-unknown-topic-id", "kip1319-tv1-java-v4",
                                     "kip1319-java-mixed-outcome")],
    *[(name, copied) for name in ("kip1319-java-v6-copy", "kip1319-pre-kip-java-copy", "kip1319-franz-go-v6-copy",
                                  "kip1319-franz-go-capped-v5", "kip1319-franz-go-fallback-v5",
                                  "kip1319-franz-go-mixed-outcome")],
    *[(name, injected()) for name in (
        "kip1319-java-capped-v5", "kip1319-java-fallback-v5", "kip1319-java-retry-unknown-topic-id",
        "kip1319-java-abort-GROUP_ID_NOT_FOUND", "kip1319-java-abort-STALE_MEMBER_EPOCH",
        "kip1319-java-mixed-outcome", "kip1319-franz-go-capped-v5", "kip1319-franz-go-fallback-v5",
        "kip1319-franz-go-retry-unknown-topic-id", "kip1319-franz-go-abort-GROUP_ID_NOT_FOUND",
        "kip1319-franz-go-abort-STALE_MEMBER_EPOCH", "kip1319-franz-go-mixed-outcome")],
    *[(name, sends(v)) for name, v in (
        ("kip1319-java-v6-copy", 6), ("kip1319-java-capped-v5", 5), ("kip1319-java-fallback-v5", 5),
        ("kip1319-java-retry-unknown-topic-id", 6), ("kip1319-pre-kip-java-copy", 5), ("kip1319-tv1-java-v4", 4),
        ("kip1319-franz-go-v6-copy", 6), ("kip1319-franz-go-capped-v5", 5), ("kip1319-franz-go-fallback-v5", 5))],
    ("kip1319-java-v6-copy", assert_only_transient_retries),
    ("kip1319-franz-go-v6-copy", assert_only_transient_retries),
    ("kip1319-java-retry-unknown-topic-id", assert_retried_unchanged),
    *[(f"kip1319-{stack}-abort-{error}", assert_group_error_aborted)
      for stack in ("java", "franz-go") for error in ("GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH")],
    *[(name, assert_visible_to_read_committed) for name in (
        "kip1319-java-v6-copy", "kip1319-java-retry-unknown-topic-id", "kip1319-pre-kip-java-copy",
        "kip1319-librdkafka-v6-copy", "kip1319-franz-go-v6-copy", "kip1319-franz-go-capped-v5")],
    ("kip1319-java-fallback-v5", assert_topic_ids_assigned),
    ("kip1319-franz-go-fallback-v5", assert_topic_ids_assigned),
    ("kip1319-tv1-features", finalized_at_1),
    ("kip1319-java-v6-copy", assert_client_sends_v6),
    ("kip1319-franz-go-v6-copy", assert_client_sends_v6),
    ("kip1319-java-mixed-outcome", _mixed_retried_by_topic_id),
    ("kip1319-franz-go-mixed-outcome", assert_mixed_answer_mapped),
]


@pytest.mark.parametrize("name,check", PASSES, ids=[f"{n}-{getattr(c, '__name__', None) or c.func.__name__}"
                                                    for n, c in PASSES])
def test_the_recorded_history_passes(name: str, check: Check) -> None:
    check(recorded(name))


# Recorded failures: the client did not keep the promise on the live run.
RECORDED_FAILURES: list[tuple[str, Check, type[BaseException], str]] = [
    # librdkafka sent v3: the one exception the known-gap verdict covers.
    ("kip1319-librdkafka-v6-copy", assert_client_sends_v6, OlderVersionSent, "TxnOffsetCommit:v3"),
    # franz-go's GroupTransactSession ends the transaction on a per-partition TxnOffsetCommit error
    # (kgo txn.go, End: commitErr -> no commit) and the copier redoes it: no retry within it.
    ("kip1319-franz-go-retry-unknown-topic-id", retried_later, AssertionError, "2 transaction(s) aborted"),
]


@pytest.mark.parametrize("name,check,raises,shows", RECORDED_FAILURES, ids=[r[0] for r in RECORDED_FAILURES])
def test_the_recorded_failure_fails(name: str, check: Check, raises: type[BaseException], shows: str) -> None:
    with pytest.raises(raises) as caught:
        check(recorded(name))
    assert shows in str(caught.value)


# -- every alteration fails its check ----------------------------------------------------------------

P = "kip1319."  # the promise ids below are of harness/promises.toml, without this prefix
ERR = "response.Topics[0].Partitions[0].ErrorCode"  # the first partition's error in an answer

ALTERATIONS: list[Alteration] = [
    # -- versions advertised
    *[alteration(f"range-without-v6-{label}", P + "broker.advertises-v6", "kip1319-advertised-v6", "versions",
                 versions, advertises_v6, "validVersions 0-6")
      for label, versions in (("max-5", [0, 5]), ("min-7", [7, 8]), ("absent", None))],
    *[alteration(f"pre-kip-broker-not-topping-out-at-v5-{label}", P + "old-broker.advertises-v5",
                 "kip1319-pre-kip-advertised", "versions", versions, tops_out_at_v5, "tops out at v5")
      for label, versions in (("v6", [0, 6]), ("v4", [0, 4]), ("absent", None))],
    # -- v6 keyed by TopicId
    alteration("response-with-a-name", P + "v6.topic-id-keyed", "kip1319-v6-commit",
               "exchange.response.Topics[0].Name", "leaked-name", assert_keyed_by_topic_id,
               "fields ['Name', 'Partitions', 'TopicId']"),
    alteration("response-keyed-by-another-topic-id", P + "v6.topic-id-keyed", "kip1319-v6-commit",
               "exchange.response.Topics[0].TopicId", OTHER_ID, assert_keyed_by_topic_id, str(OTHER_ID)),
    alteration("request-by-name", P + "v6.topic-id-keyed", "kip1319-v6-commit", "exchange.request.Topics[0].Name",
               "t", assert_keyed_by_topic_id, "not by TopicId only"),
    alteration("v5-exchange-is-no-v6-commit", P + "v6.topic-id-keyed", "kip1319-v6-commit", "exchange.version", 5,
               assert_keyed_by_topic_id, "the exchange is v5"),
    # -- accepted commits
    alteration("refused-partition-fails-the-commit", P + "v6.topic-id-keyed", "kip1319-v6-commit",
               "exchange.response.Topics[0].Partitions[1].ErrorCode", code("COORDINATOR_NOT_AVAILABLE"),
               assert_commit_accepted, "partition 1: COORDINATOR_NOT_AVAILABLE(15)"),
    alteration("unanswered-partition-fails-the-commit", P + "old-broker.zero-topic-id", "kip1319-pre-kip-persisted",
               "commit.exchange.response.Topics[0].Partitions", [], _accepted_commit,
               "partition 0 was in the request but not answered"),
    # -- error precedence (unknown-topic-id: Topics[0] is the made-up TopicId, Topics[1] the real topic;
    # missing-partition answers partitions 5, 0, 1; mixed-request: Topics[0] is the allowed topic, answered 9, 0)
    alteration("unknown-topic-id-answered-as-a-missing-partition", P + "v6.unknown-topic-id",
               "kip1319-unknown-topic-id", "exchange.response.Topics[0].Partitions[2].ErrorCode",
               code("UNKNOWN_TOPIC_OR_PARTITION"), assert_error_precedence,
               "partition 2: UNKNOWN_TOPIC_OR_PARTITION(3), expected UNKNOWN_TOPIC_ID(100) (first rule"),
    alteration("unknown-topic-error-leaking-to-the-known-topic", P + "v6.unknown-topic-id",
               "kip1319-unknown-topic-id", "exchange.response.Topics[1].Partitions[0].ErrorCode",
               code("UNKNOWN_TOPIC_ID"), assert_error_precedence,
               "partition 0: UNKNOWN_TOPIC_ID(100), expected NONE(0)"),
    alteration("missing-partition-error-on-every-partition", P + "v6.missing-partition-only",
               "kip1319-missing-partition", "exchange.response.Topics[0].Partitions[1].ErrorCode",
               code("UNKNOWN_TOPIC_OR_PARTITION"), assert_error_precedence,
               "partition 0: UNKNOWN_TOPIC_OR_PARTITION(3), expected NONE(0)"),
    alteration("missing-partition-answered-without-an-error", P + "v6.missing-partition-only",
               "kip1319-missing-partition", "exchange.response.Topics[0].Partitions[0].ErrorCode", 0,
               assert_error_precedence, "partition 5: NONE(0), expected UNKNOWN_TOPIC_OR_PARTITION(3) (third rule"),
    alteration("partition-validation-before-authorization", P + "v6.authorization-after-resolution",
               "kip1319-unauthorized-topic", "exchange.response.Topics[0].Partitions[2].ErrorCode",
               code("UNKNOWN_TOPIC_OR_PARTITION"), assert_error_precedence, "ACLs of alice"),
    alteration("unauthorized-topic-that-commits", P + "v6.authorization-after-resolution",
               "kip1319-unauthorized-topic", "exchange.response.Topics[0].Partitions[0].ErrorCode", 0,
               assert_error_precedence, "partition 0: NONE(0), expected TOPIC_AUTHORIZATION_FAILED(29)"),
    alteration("authorization-error-leaking-into-the-allowed-topic", P + "v6.authorization-after-resolution",
               "kip1319-mixed-request", "exchange.response.Topics[0].Partitions[1].ErrorCode",
               code("TOPIC_AUTHORIZATION_FAILED"), assert_error_precedence,
               "partition 0: TOPIC_AUTHORIZATION_FAILED(29), expected NONE(0)"),
    Alteration("partition-answered-twice-or-not-asked", P + "v6.authorization-after-resolution",
               "kip1319-mixed-request", (
                   ("exchange.response.Topics[0].Partitions", lambda old, _: [*old, dict(old[0])]),
                   ("exchange.response.Topics[1].Partitions",
                    lambda old, _: [*old, {"PartitionIndex": 3, "ErrorCode": code("UNKNOWN_TOPIC_ID")}])),
               assert_error_precedence, "partition 3 answered UNKNOWN_TOPIC_ID(100) but was not in the request"),
    alteration("topic-left-unanswered", P + "v6.authorization-after-resolution", "kip1319-mixed-request",
               "exchange.response.Topics", drop_last, assert_error_precedence,
               "partition 0 was in the request but not answered"),
    alteration("precedence-judged-on-v6-only", P + "v6.unknown-topic-id", "kip1319-unknown-topic-id",
               "exchange.version", 5, assert_error_precedence, "the exchange is v5"),
    alteration("old-topic-id-resolved-to-the-recreated-topic", P + "v6.recreated-topic-old-id",
               "kip1319-recreated-topic-old-id", "exchange.response.Topics[0].Partitions[*].ErrorCode", 0,
               assert_error_precedence, "expected UNKNOWN_TOPIC_ID(100)"),
    # -- error mapping v6 / v5
    alteration("v6-still-mapping-to-illegal-generation", P + "v6.group-id-not-found", "kip1319-unknown-group",
               "v6." + ERR, code("ILLEGAL_GENERATION"), group_id_not_found_mapping,
               "ILLEGAL_GENERATION(22), expected GROUP_ID_NOT_FOUND(69)"),
    alteration("v5-returning-the-new-error", P + "v0-5.old-error-mapping", "kip1319-unknown-group", "v5." + ERR,
               code("GROUP_ID_NOT_FOUND"), group_id_not_found_mapping,
               "GROUP_ID_NOT_FOUND(69), expected ILLEGAL_GENERATION(22)"),
    *[alteration(f"{v}-returning-the-new-error", P + "v0-5.old-error-mapping", "kip1319-unknown-group",
                 f"older.{v}." + ERR, code("GROUP_ID_NOT_FOUND"), group_id_not_found_mapping,
                 f"{v} ") for v in ("v3", "v4")],
    alteration("v6-and-v5-requests-that-differ", P + "v6.group-id-not-found", "kip1319-unknown-group",
               "v5.request.MemberId", "someone-else", group_id_not_found_mapping,
               "differ in MemberId: 'kcts-member' and 'someone-else'"),
    alteration("mapping-judged-on-the-wrong-versions", P + "v6.group-id-not-found", "kip1319-unknown-group",
               "v6.version", 5, group_id_not_found_mapping, "the exchanges are v5 and v5"),
    alteration("stale-epoch-as-illegal-generation-on-v6", P + "v6.stale-member-epoch", "kip1319-stale-member-epoch",
               "stale.v6." + ERR, code("ILLEGAL_GENERATION"), assert_stale_epoch_mapping,
               "ILLEGAL_GENERATION(22), expected STALE_MEMBER_EPOCH(113)"),
    alteration("stale-epoch-on-v4-returned-as-stale-member-epoch", P + "v0-5.old-error-mapping",
               "kip1319-stale-member-epoch", "stale.older.v4." + ERR, code("STALE_MEMBER_EPOCH"),
               assert_stale_epoch_mapping, "STALE_MEMBER_EPOCH(113), expected ILLEGAL_GENERATION"),
    alteration("current-epoch-refused", P + "v6.stale-member-epoch", "kip1319-stale-member-epoch",
               "current.v5." + ERR, code("ILLEGAL_GENERATION"), assert_stale_epoch_mapping,
               "ILLEGAL_GENERATION(22), expected NONE(0)"),
    alteration("member-still-at-its-first-epoch", P + "v6.stale-member-epoch", "kip1319-stale-member-epoch",
               "member_epoch", 1, assert_stale_epoch_mapping, "did not move past its first epoch: 1"),
    alteration("stale-commit-carrying-the-current-epoch", P + "v6.stale-member-epoch", "kip1319-stale-member-epoch",
               "stale.v6.request.GenerationIdOrMemberEpoch", lambda _, rec: rec["member_epoch"],
               assert_stale_epoch_mapping, "the stale commits carry epoch(s) [1, 2]"),
    # -- persisted topic ids
    alteration("persisted-zero-topic-id-on-a-v6-broker", P + "v6.persists-topic-id", "kip1319-persisted-topic-id",
               "persisted[0].value.topic_id", ZERO_UUID, assert_persisted_topic_id, f"has topicId {ZERO_UUID}"),
    alteration("pre-v4-offset-commit-value", P + "v6.persists-topic-id", "kip1319-persisted-topic-id",
               "persisted[0].value_version", 3, assert_persisted_topic_id, "OffsetCommitValue v3"),
    alteration("persisted-offset-other-than-committed", P + "v6.persists-topic-id", "kip1319-persisted-topic-id",
               "persisted[0].value.leader_epoch", 4, assert_persisted_topic_id, "holds offset 42 epoch 4"),
    alteration("no-persisted-record", P + "v6.persists-topic-id", "kip1319-persisted-topic-id", "persisted", [],
               assert_persisted_topic_id, "in __consumer_offsets"),
    alteration("zero-topic-under-test", P + "v6.persists-topic-id", "kip1319-persisted-topic-id", "topic_id",
               ZERO_UUID, assert_persisted_topic_id, "the topic's own ID is the zero UUID"),
    alteration("real-topic-id-from-a-pre-kip-broker", P + "old-broker.zero-topic-id", "kip1319-pre-kip-persisted",
               "persisted[0].value.topic_id", lambda _, rec: rec["topic_id"], zero_topic_id,
               f"written by Kafka {PRE_KIP} has topicId"),
    alteration("pre-kip-record-with-another-offset", P + "old-broker.zero-topic-id", "kip1319-pre-kip-persisted",
               "persisted[0].value.offset", 20, zero_topic_id, "holds offset 20 epoch 2, committed 21 epoch 2"),
    alteration("pre-kip-record-missing", P + "old-broker.zero-topic-id", "kip1319-pre-kip-persisted",
               "persisted[0].partition", 1, zero_topic_id, "no OffsetCommit record for"),
    # -- committed offsets read back
    *[alteration(f"fetched-offset-unlike-the-commit-{field}", P + "v6.topic-id-keyed", "kip1319-v6-commit",
                 f"fetched[0].{field}", value, assert_offsets_fetched_back, f"OffsetFetch returned {shown}")
      for field, value, shown in (("offset", 41, "NONE(0) offset 41 epoch 3"),
                                  ("leader_epoch", -1, "NONE(0) offset 42 epoch -1"),
                                  ("error", 16, "NOT_COORDINATOR(16) offset 42 epoch 3"))],
    alteration("client-commit-that-did-not-land", P + "client.sends-v6", "kip1319-java-v6-copy", "fetched", [],
               assert_offsets_fetched_back, "committed offset 20 epoch None, OffsetFetch returned nothing"),
    alteration("fallback-losing-one-topic", P + "client.fallback-v5-without-topic-id", "kip1319-java-fallback-v5",
               "fetched[1].offset", -1, assert_offsets_fetched_back, "committed offset 7 epoch None"),
    alteration("offset-fetched-for-a-partition-not-committed", P + "client.negotiates-lower-version",
               "kip1319-java-capped-v5", "fetched", lambda old, _: [*old, {**old[0], "partition": 1}],
               assert_offsets_fetched_back, "for a partition not committed"),
    # -- the client: outcome, injection, versions (Java events: initialized, produced, offsets_sent, committed, done)
    alteration("aborted-transaction-is-no-commit", P + "client.negotiates-lower-version", "kip1319-java-capped-v5",
               "events[4].detail.outcome", "aborted", committed, "ended 'aborted' (exit 0)"),
    alteration("driver-that-exits-with-an-error", P + "client.sends-v6", "kip1319-java-v6-copy", "exit_code", 1,
               copied, "(exit 1)"),
    alteration("driver-that-never-finished", P + "client.v4-without-transaction-v2", "kip1319-tv1-java-v4",
               "events", without_event("done"), committed, "ended None"),
    alteration("fault-that-never-acted", P + "client.negotiates-lower-version", "kip1319-java-capped-v5",
               "injected.fired", 0, injected(), "acted 0 time(s), expected at least 1"),
    alteration("fault-that-acted-too-often", P + "client.retries-unknown-topic-id",
               "kip1319-java-retry-unknown-topic-id", "injected.fired", 3, injected(2), "acted 3 time(s), expected 2"),
    alteration("fault-that-acted-more-than-its-limit", P + "client.retries-unknown-topic-id",
               "kip1319-franz-go-retry-unknown-topic-id", "injected.fired", 3, injected(),
               "acted 3 time(s), expected 2"),
    alteration("run-without-a-fault", P + "client.v4-without-transaction-v2", "kip1319-tv1-java-v4", "injected",
               None, injected(), "fault None acted 0 time(s)"),
    alteration("one-v5-commit-among-v6", P + "client.sends-v6", "kip1319-java-v6-copy", "commits[1].version", 5,
               sends(6), "#1 is v5"),
    alteration("v6-commit-naming-another-topic-id", P + "client.sends-v6", "kip1319-java-v6-copy",
               "commits[0].request.Topics[0].TopicId", OTHER_ID, sends(6), f"#0 names ['TopicId {OTHER_ID}']"),
    alteration("fallback-that-drops-a-topic", P + "client.fallback-v5-without-topic-id", "kip1319-java-fallback-v5",
               "commits[0].request.Topics", drop_last, sends(5), "#0 names ['Name "),
    Alteration("fallback-sending-v6", P + "client.fallback-v5-without-topic-id", "kip1319-java-fallback-v5",
               (("commits[0].version", 6), ("commits[0].request.Topics", named_by_topic_id)), sends(5),
               "#0 is v6\n  #0 names ['TopicId"),
    alteration("transaction-version-1-client-sending-v5", P + "client.v4-without-transaction-v2",
               "kip1319-tv1-java-v4", "commits[-1].version", 5, sends(4), "#0 is v5"),
    alteration("client-that-sent-no-commit", P + "client.negotiates-lower-version", "kip1319-pre-kip-java-copy",
               "commits", [], sends(5), "sent no TxnOffsetCommit"),
    alteration("franz-go-capped-sending-v6", P + "client.negotiates-lower-version", "kip1319-franz-go-capped-v5",
               "commits[0].version", 6, sends(5), "#0 is v6"),
    # -- retries (java-retry: two injected answers, then the accepted retry)
    alteration("last-commit-refused", P + "client.sends-v6", "kip1319-java-v6-copy", "commits[-1]." + ERR,
               code("NOT_COORDINATOR"), assert_only_transient_retries, "the last answer is ['NOT_COORDINATOR(16)']"),
    alteration("non-transient-answer-on-the-way", P + "client.sends-v6", "kip1319-java-v6-copy", "commits[0]." + ERR,
               code("INVALID_COMMIT_OFFSET_SIZE"), assert_only_transient_retries,
               "#0 answered ['INVALID_COMMIT_OFFSET_SIZE(28)']"),
    alteration("retry-that-changes-the-request", P + "client.retries-unknown-topic-id",
               "kip1319-java-retry-unknown-topic-id", "commits[-1].request.Topics[0].Partitions[0].CommittedOffset", 6,
               assert_retried_unchanged, "#2 differs from the first request"),
    alteration("retry-that-drops-a-topic", P + "client.retries-unknown-topic-id",
               "kip1319-java-retry-unknown-topic-id", "commits[1].request.Topics", drop_last,
               assert_retried_unchanged, "#1 differs from the first request"),
    alteration("retry-at-v5", P + "client.retries-unknown-topic-id", "kip1319-java-retry-unknown-topic-id",
               "commits[-1].version", 5, assert_retried_unchanged, "(a retry) is v5 answered ['NONE(0)']"),
    alteration("client-that-gives-up-after-unknown-topic-id", P + "client.retries-unknown-topic-id",
               "kip1319-java-retry-unknown-topic-id", "commits", lambda old, _: old[:2], assert_retried_unchanged,
               "2 TxnOffsetCommit(s) for 2 injected answers: no retry was accepted"),
    alteration("more-injected-answers-than-seen", P + "client.retries-unknown-topic-id",
               "kip1319-java-retry-unknown-topic-id", "injected.fired", 3, assert_retried_unchanged,
               "#2 (injected) is v6 answered ['NONE(0)'], not v6 UNKNOWN_TOPIC_ID(100)"),
    Alteration("copier-retrying-within-its-transaction-judged-as-one-request", P + "client.retries-unknown-topic-id",
               "kip1319-franz-go-retry-unknown-topic-id", (
                   ("events", without_event("transaction_aborted")),
                   ("commits[1].request", lambda _, rec: rec["commits"][0]["request"]),
                   ("commits[2].request", lambda _, rec: rec["commits"][0]["request"])),
               assert_retried_unchanged, "differs from the first request"),
    # -- mixed answers (java-mixed: two answers failing the second topic, then the accepted retry)
    Alteration("retry-that-drops-the-failed-topic", P + "client.response-mapped-by-topic-id",
               "kip1319-java-mixed-outcome", (("commits[1].request.Topics", without_failed_topic),
                                              ("commits[2].request.Topics", without_failed_topic)),
               assert_mixed_answer_mapped, "#1 (a retry) is v6 without the failed topic"),
    alteration("retry-that-changes-an-offset", P + "client.response-mapped-by-topic-id",
               "kip1319-java-mixed-outcome", "commits[1].request.Topics[0].Partitions[0].CommittedOffset",
               lambda old, _: old + 1, assert_mixed_answer_mapped, "#1 (a retry) changed or added offsets"),
    alteration("blaming-the-committed-topic", P + "client.response-mapped-by-topic-id",
               "kip1319-franz-go-mixed-outcome", "events[0].detail.error", blaming_the_committed_topic,
               assert_mixed_answer_mapped, "the failed transaction reports"),
    # -- aborts (java-abort events: initialized, produced, transaction_failed, aborted, done)
    *[alteration(f"retried-abortable-error-{error}", P + "client.group-errors-abortable", f"kip1319-java-abort-{error}",
                 "commits", lambda old, _: [*old, old[0]], assert_aborted_without_retry,
                 "an abortable error must not be retried") for error in ("GROUP_ID_NOT_FOUND", "STALE_MEMBER_EPOCH")],
    alteration("client-that-commits-after-an-abortable-error", P + "client.group-errors-abortable",
               "kip1319-java-abort-GROUP_ID_NOT_FOUND", "events[4].detail.outcome", "committed",
               assert_aborted_without_retry, "the driver ended 'committed' (exit 0), not 'aborted'"),
    alteration("abort-without-a-failed-send", P + "client.group-errors-abortable",
               "kip1319-java-abort-STALE_MEMBER_EPOCH", "events", without_event("transaction_failed"),
               assert_aborted_without_retry, "0 transaction_failed events, expected 1"),
    alteration("abort-of-an-empty-transaction", P + "client.group-errors-abortable",
               "kip1319-java-abort-STALE_MEMBER_EPOCH", "events[1].detail.offsets", [], assert_aborted_without_retry,
               "the transaction wrote nothing before the commit failed"),
    alteration("abort-answered-with-another-error", P + "client.group-errors-abortable",
               "kip1319-java-abort-GROUP_ID_NOT_FOUND", "commits[0]." + ERR, code("ILLEGAL_GENERATION"),
               assert_aborted_without_retry, "['ILLEGAL_GENERATION(22)'])], expected one v6 answered "
                                             "GROUP_ID_NOT_FOUND(69)"),
    alteration("aborted-records-visible", P + "client.group-errors-abortable", "kip1319-java-abort-GROUP_ID_NOT_FOUND",
               "visible", [b"txn-value-0"], assert_nothing_visible, "aborted records visible to read_committed"),
    alteration("aborted-offset-commit-visible", P + "client.group-errors-abortable",
               "kip1319-java-abort-STALE_MEMBER_EPOCH", "fetched[0].offset", 5, assert_nothing_visible,
               "aborted offset commit visible"),
    alteration("aborted-records-visible-through-the-situation-check", P + "client.group-errors-abortable",
               "kip1319-java-abort-STALE_MEMBER_EPOCH", "visible", [b"txn-value-0"], assert_group_error_aborted,
               "aborted records visible to read_committed"),
    alteration("copier-that-retries-a-group-error", P + "client.group-errors-abortable",
               "kip1319-franz-go-abort-GROUP_ID_NOT_FOUND", "commits", lambda old, _: [old[0], *old],
               assert_copier_aborted_without_retry, "transaction(s) ended: a retry"),
    alteration("copier-that-commits-despite-a-group-error", P + "client.group-errors-abortable",
               "kip1319-franz-go-abort-GROUP_ID_NOT_FOUND", "events[0].event", "transaction_committed",
               assert_copier_aborted_without_retry, "the transaction whose commit got GROUP_ID_NOT_FOUND(69) ended"),
    alteration("copier-that-shows-the-aborted-records", P + "client.group-errors-abortable",
               "kip1319-franz-go-abort-STALE_MEMBER_EPOCH", "visible", lambda old, _: [*old, old[0]],
               assert_group_error_aborted, "read_committed sees 11 value(s)"),
    # -- what read_committed sees
    alteration("lost-committed-record", P + "client.sends-v6", "kip1319-java-v6-copy", "visible", drop_last,
               assert_visible_to_read_committed, "read_committed sees 19 value(s)"),
    alteration("reordered-records", P + "client.negotiates-lower-version", "kip1319-pre-kip-java-copy", "visible",
               reverse, assert_visible_to_read_committed, "read_committed sees 10 value(s) [b'old-9'"),
    alteration("extra-record", P + "client.sends-v6", "kip1319-librdkafka-v6-copy", "visible",
               lambda old, _: [*old, b"aborted"], assert_visible_to_read_committed, "read_committed sees 2 value(s)"),
    # -- premises and features
    alteration("topic-without-an-id-on-the-broker", P + "client.fallback-v5-without-topic-id",
               "kip1319-java-fallback-v5", "asked[1].topic_id", ZERO_UUID, assert_topic_ids_assigned,
               "topics without a topic ID on the broker itself"),
    alteration("transaction-version-finalized-at-2", P + "txn-v2.finalized-level", "kip1319-tv1-features",
               "finalized", with_feature("transaction.version", max_level=2), finalized_at_1,
               "transaction.version is not finalized at 1"),
    alteration("transaction-version-not-finalized", P + "txn-v2.finalized-level", "kip1319-tv1-features",
               "finalized", without_feature("transaction.version"), finalized_at_1,
               "transaction.version is not finalized at 1"),
    alteration("software-without-a-higher-transaction-version", P + "txn-v2.finalized-level",
               "kip1319-tv1-features", "supported", with_feature("transaction.version", max_version=1),
               finalized_at_1, "supports no transaction.version above 1"),
    # -- the version check of the client matrix
    alteration("client-sending-no-commit-is-a-failure-not-the-gap", P + "client.sends-v6", "kip1319-librdkafka-v6-copy",
               "commits", [], assert_client_sends_v6, "sent no TxnOffsetCommit"),
    alteration("v6-client-falling-back-once", P + "client.sends-v6", "kip1319-java-v6-copy", "commits[0].version", 5,
               assert_client_sends_v6, "sent TxnOffsetCommit [5, 6], not v6", raises=OlderVersionSent),
]


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_history_fails_its_check(a: Alteration) -> None:
    """The check fails on the altered history, with the altered value among its evidence; a plain
    failure is never the one exception a known client gap may cover."""
    history = altered(a, kind(a.recording))
    with pytest.raises(a.raises) as caught:
        a.check(history)
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"
    if a.raises is AssertionError:
        assert not isinstance(caught.value, OlderVersionSent), "a plain failure raised as the known gap's exception"


def test_the_alterations_are_of_known_promises_and_unique() -> None:
    known = catalogue()
    assert not [a.id for a in ALTERATIONS if a.promise not in known], "alterations of promises not in the catalogue"
    ids = [a.id for a in ALTERATIONS]
    assert len(ids) == len(set(ids)), "two alterations share an id"


def test_a_copier_retrying_within_its_transaction_passes_despite_later_transactions() -> None:
    """Without the aborts, franz-go's commits up to the first accepted one are a retry of one request;
    the later transactions' commits (other offsets) are not judged. (Judged as one request, the same
    history fails: the alteration copier-retrying-within-its-transaction-judged-as-one-request.)"""
    a = next(a for a in ALTERATIONS if a.id == "copier-retrying-within-its-transaction-judged-as-one-request")
    run = altered(a, ClientRun)
    assert len({str(c.request) for c in run.commits}) > 1, "premise: later transactions commit other offsets"
    retried_later(run)


def test_the_precedence_table() -> None:
    a, d = uuid.UUID(int=0xA), uuid.UUID(int=0xD)
    topics = [TopicFact("a", a, 2), TopicFact("d", d, 2, authorized=False)]
    assert expected_precedence(topics, (uuid.UUID(int=0xF), 0))[0] == "UNKNOWN_TOPIC_ID"
    assert expected_precedence(topics, (d, 5))[0] == "TOPIC_AUTHORIZATION_FAILED"
    assert expected_precedence(topics, (a, 2))[0] == "UNKNOWN_TOPIC_OR_PARTITION"
    assert expected_precedence(topics, (a, 1))[0] == "NONE"


def test_the_recreated_topic_has_a_new_topic_id() -> None:
    commit = recorded("kip1319-recreated-topic-old-id")
    old = next(f.topic_id for f in commit.topics if not f.exists)
    new = next(f.topic_id for f in commit.topics if f.exists)
    assert old != new


@pytest.mark.parametrize("name", ["kip1319-unknown-group", "kip1319-stale-member-epoch"])
def test_recorded_older_versions_keep_the_old_mapping(name: str) -> None:
    answers = recorded(name)
    older = (answers.stale if isinstance(answers, StaleEpochAnswers) else answers).older
    assert set(older) >= {"v3", "v4"}, f"premise: v3 and v4 were asked: {sorted(older)}"


def test_an_alteration_reaches_every_item_of_a_star() -> None:
    data = {"a": [{"b": 1}, {"b": 2}]}
    assert apply(data, "a[*].b", lambda old, _: old * 10) == {"a": [{"b": 10}, {"b": 20}]}
    assert apply(data, "a[-1].b", 0) == {"a": [{"b": 10}, {"b": 0}]}


# -- the bounded wait for topic IDs (max.block.ms), on the Java producer's recorded run ----------------

WAIT = "kip1319-java-bounded-metadata-wait"
WAITED = P + "client.topic-id-wait-bounded"


def _timed(change: Any) -> Any:
    """A Change of the recording's events: `change(event)` applied to the event that timed
    sendOffsetsToTransaction."""
    def edit(events: Any, _: Any) -> Any:
        for e in events:
            if "send_offsets_ms" in e["detail"]:
                change(e)
        return events
    return edit


def _slower(e: Any) -> None:
    e["detail"]["send_offsets_ms"] = 5000 + BLOCK_MARGIN_MS + 1


def _failed_with(error: str) -> Any:
    def change(e: Any) -> None:
        e["event"] = "transaction_failed"
        e["detail"] = {"error": error, "message": "altered", "send_offsets_ms": e["detail"]["send_offsets_ms"]}
    return change


def test_the_recorded_bounded_wait_passes() -> None:
    run = recorded(WAIT)
    assert run.injected is not None and run.injected.fired >= 1, f"premise: the IDs were withheld: {run.proxy}"
    assert_metadata_wait_bounded(run)


def test_a_wait_that_ends_in_the_max_block_timeout_within_the_bound_passes() -> None:
    assert_metadata_wait_bounded(altered(Alteration("timed-out", WAITED, WAIT, (
        ("events", _timed(_failed_with(MAX_BLOCK_ERROR))),), assert_metadata_wait_bounded), ClientRun))


BOUNDED_WAIT_ALTERATIONS: list[Alteration] = [
    alteration("wait-past-max-block-ms", WAITED, WAIT, "events", _timed(_slower), assert_metadata_wait_bounded,
               f"took {5000 + BLOCK_MARGIN_MS + 1} ms while the topic ID was withheld, more than max.block.ms 5000"),
    alteration("v6-sent-without-the-topic-id", WAITED, WAIT, "commits[*].version", 6, assert_metadata_wait_bounded,
               "not v5 for the whole request"),
    alteration("failed-with-another-error", WAITED, WAIT, "events",
               _timed(_failed_with("org.apache.kafka.common.KafkaException")), assert_metadata_wait_bounded,
               "neither the org.apache.kafka.common.errors.TimeoutException of max.block.ms"),
    alteration("the-call-never-timed", WAITED, WAIT, "events",
               lambda events, _: [e for e in events if "send_offsets_ms" not in e["detail"]],
               assert_metadata_wait_bounded, "did not reach sendOffsetsToTransaction", SceneUnmet),
]


@pytest.mark.parametrize("a", BOUNDED_WAIT_ALTERATIONS, ids=[a.id for a in BOUNDED_WAIT_ALTERATIONS])
def test_a_wait_past_max_block_ms_or_without_fallback_fails(a: Alteration) -> None:
    assert a.promise in catalogue(), f"{a.id} names no promise of harness/promises.toml: {a.promise}"
    with pytest.raises(a.raises) as caught:
        a.check(altered(a, ClientRun))
    assert a.shows in str(caught.value), f"{a.id}: the failure does not show {a.shows!r}: {caught.value}"


def test_a_client_answered_unknown_topic_id_on_the_way_passes() -> None:
    """KIP-1319, "Producer-Side": UNKNOWN_TOPIC_ID is retriable, so a client whose first commit was
    answered with it and whose retry was accepted kept the promise (a lagging coordinator is legal)."""
    data = apply(raw("kip1319-java-v6-copy"), "commits[0]." + ERR, code("UNKNOWN_TOPIC_ID"))
    assert_only_transient_retries(typed(ClientRun, data))


def test_which_raw_commit_answers_are_sent_again() -> None:
    """The raw scenes retry what a client retries and judge what KIP-1319's rules give as final."""
    from harness.scenarios.kip1319 import retriable

    known, denied, gone = uuid.UUID(int=0xA), uuid.UUID(int=0xD), uuid.UUID(int=0xF)
    again = retriable([TopicFact("a", known, 2), TopicFact("d", denied, 2, authorized=False),
                       TopicFact(None, gone, 0, exists=False)])
    uti, utp = code("UNKNOWN_TOPIC_ID"), code("UNKNOWN_TOPIC_OR_PARTITION")
    assert again(known, 0, uti) and again(known, 5, uti) and again(denied, 0, uti), "a topic that exists: a lag"
    assert again(known, 1, utp), "a partition that exists: a lag"
    assert not again(known, 2, utp), "a partition past the count: the third rule's final answer"
    assert not again(gone, 0, uti), "a TopicId that does not exist: the first rule's final answer"
    assert not again(known, 0, code("TOPIC_AUTHORIZATION_FAILED")) and not again(known, 0, 0)
