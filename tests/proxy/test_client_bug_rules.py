"""The rules that replay broker answers which made a client misbehave (harness/replays.toml entries
with a `client_stack`), on decoded bodies: what each edits, what it leaves alone, and that the edited
body still encodes."""

from __future__ import annotations

from typing import Any

import pytest

from harness.protocol.codec import encode_response
from harness.protocol.records import control_batch, encode_batch
from harness.protocol.spec import SpecSet
from harness.proxy.rule_specs import parse_rule
from harness.proxy.rules import (
    FETCH,
    AbortedTransactionsAtReadUncommitted,
    AbortedTransactionsNewestFirst,
    Rule,
    UnconfirmedEndTxnCommit,
)
from harness.proxy.rules.txn_ends import END_TXN

PID = 7
A, C = {"ProducerId": PID, "FirstOffset": 0}, {"ProducerId": PID, "FirstOffset": 6}


def _log() -> bytes:
    """One producer's transactions: A aborted (0-1, marker 2), B committed (3-4, marker 5), C aborted
    (6-7, marker 8): franz-go's own trace of its unsorted-list bug (twmb/franz-go b9b50cce)."""
    txn = {"transactional": True, "producer_id": PID, "producer_epoch": 0}
    return b"".join([
        encode_batch([b"a0", b"a1"], base_offset=0, base_sequence=0, **txn),
        control_batch("ABORT", producer_id=PID, producer_epoch=0, base_offset=2),
        encode_batch([b"b0", b"b1"], base_offset=3, base_sequence=2, **txn),
        control_batch("COMMIT", producer_id=PID, producer_epoch=0, base_offset=5),
        encode_batch([b"c0", b"c1"], base_offset=6, base_sequence=4, **txn),
        control_batch("ABORT", producer_id=PID, producer_epoch=0, base_offset=8),
    ])


def _fetch(isolation: int, aborted: list[dict[str, int]] | None, replica: int = -1, error: int = 0,
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {"ReplicaId": replica, "IsolationLevel": isolation, "Topics": [{"Topic": "t", "Partitions": [
        {"Partition": 0, "CurrentLeaderEpoch": 3, "FetchOffset": 0, "LogStartOffset": -1,
         "PartitionMaxBytes": 1 << 20}]}]}
    body = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": "t", "Partitions": [
        {"PartitionIndex": 0, "ErrorCode": error, "HighWatermark": 9, "LastStableOffset": 9, "LogStartOffset": 0,
         "AbortedTransactions": aborted, "PreferredReadReplica": -1, "Records": b"" if error else _log()}]}]}
    return request, body


def _aborted(body: dict[str, Any]) -> Any:
    return body["Responses"][0]["Partitions"][0]["AbortedTransactions"]


def _encodes(specs: SpecSet, api: str, version: int, body: dict[str, Any]) -> None:
    encode_response(specs.api(api), version, {"CorrelationId": 7}, body)


# -- Redpanda #18852: aborted ranges in read_uncommitted answers ----------------------------------
def test_a_read_uncommitted_answer_lists_the_aborted_transactions_it_carries(specs: SpecSet) -> None:
    rule = AbortedTransactionsAtReadUncommitted()
    assert rule.acts_on_response(FETCH, 4) and not rule.acts_on_response(FETCH, 3), "IsolationLevel from v4"
    request, body = _fetch(0, None)
    assert rule.edit_answer(specs.api("Fetch"), 12, request, body) and rule.fired == 1
    assert _aborted(body) == [A, C]
    _encodes(specs, "Fetch", 12, body)


@pytest.mark.parametrize(("isolation", "aborted", "replica", "error"), [
    (1, None, -1, 0),  # read_committed: Apache Kafka's own list stands
    (0, None, 2, 0),  # a replica's Fetch: replication as it is
    (0, None, -1, 6),  # a refused partition
    (0, [A], -1, 0),  # a list the broker gave
])
def test_a_read_uncommitted_list_is_added_to_consumer_answers_without_one_only(
    specs: SpecSet, isolation: int, aborted: list[dict[str, int]] | None, replica: int, error: int
) -> None:
    request, body = _fetch(isolation, aborted, replica, error)
    assert not AbortedTransactionsAtReadUncommitted().edit_answer(specs.api("Fetch"), 12, request, body)
    assert _aborted(body) == aborted


# -- franz-go v1.21.4: an aborted-transaction list out of offset order (Redpanda) ---------------------
def test_a_read_committed_list_is_given_newest_first(specs: SpecSet) -> None:
    rule = AbortedTransactionsNewestFirst()
    request, body = _fetch(1, [A, C])
    assert rule.edit_answer(specs.api("Fetch"), 12, request, body) and rule.fired == 1
    assert _aborted(body) == [C, A]
    assert not rule.edit_answer(specs.api("Fetch"), 12, request, body), "already newest first"
    _encodes(specs, "Fetch", 12, body)


@pytest.mark.parametrize(("isolation", "aborted", "replica"), [(0, [A, C], -1), (1, [A], -1), (1, [A, C], 1)])
def test_newest_first_leaves_read_uncommitted_single_entries_and_replicas(
    specs: SpecSet, isolation: int, aborted: list[dict[str, int]], replica: int
) -> None:
    request, body = _fetch(isolation, list(aborted), replica)
    assert not AbortedTransactionsNewestFirst().edit_answer(specs.api("Fetch"), 12, request, body)
    assert _aborted(body) == aborted


# -- franz-go v1.21.4: EndTxn answered UNKNOWN_SERVER_ERROR (Redpanda) --------------------------------
def _end_txn(tid: str, committed: bool) -> dict[str, Any]:
    return {"TransactionalId": tid, "ProducerId": 5, "ProducerEpoch": 1, "Committed": committed}


def _answer(error: int = 0) -> dict[str, Any]:
    return {"ThrottleTimeMs": 0, "ErrorCode": error, "ProducerId": 5, "ProducerEpoch": 2}


def _exchange(rule: UnconfirmedEndTxnCommit, specs: SpecSet, sent: dict[str, Any], broker_error: int = 0,
              ) -> tuple[bool, dict[str, Any]]:
    """What the broker was asked (Committed) and the answer the client got, as the proxy runs a rule."""
    seen = dict(sent)
    rule.edit_request(specs.api("EndTxn"), 5, seen)
    answer = _answer(broker_error)
    rule.edit_answer(specs.api("EndTxn"), 5, sent, answer)
    return seen["Committed"], answer


def test_the_first_commit_of_each_transactional_id_is_aborted_and_answered_unknown_server_error(
    specs: SpecSet
) -> None:
    rule = UnconfirmedEndTxnCommit()
    assert rule.acts_on_request(END_TXN, 5) and rule.acts_on_response(END_TXN, 0) and rule.needs_request
    assert _exchange(rule, specs, _end_txn("t1", True)) == (False, _answer(-1))
    assert rule.fired == 1
    assert _exchange(rule, specs, _end_txn("t1", True)) == (True, _answer()), "one unconfirmed commit per id"
    assert _exchange(rule, specs, _end_txn("t2", True)) == (False, _answer(-1))
    _encodes(specs, "EndTxn", 5, _answer(-1))


def test_an_abort_passes_and_a_refused_abort_keeps_the_brokers_answer(specs: SpecSet) -> None:
    rule = UnconfirmedEndTxnCommit()
    assert _exchange(rule, specs, _end_txn("t", False)) == (False, _answer())
    # CONCURRENT_TRANSACTIONS (51) to the abort the rule sent: the client hears it and retries its
    # commit, which is turned again.
    assert _exchange(rule, specs, _end_txn("t", True), broker_error=51) == (False, _answer(51))
    assert rule.fired == 0
    assert _exchange(rule, specs, _end_txn("t", True)) == (False, _answer(-1))


@pytest.mark.parametrize("text", [
    "AbortedTransactionsAtReadUncommitted", "AbortedTransactionsNewestFirst", "UnconfirmedEndTxnCommit",
])
def test_the_client_bug_rules_are_named_on_the_command_line(text: str) -> None:
    assert isinstance(parse_rule(text).make(), Rule)
