"""Rules on decoded bodies: what each edits, when it matches, and how its budget is spent."""

from __future__ import annotations

import uuid

import pytest

from harness.protocol.codec import decode_response
from harness.protocol.spec import SpecSet
from harness.protocol.types import ZERO_UUID
from harness.proxy.rules import CapVersion, CloseConnection, Delay, ReplaceErrors, StripTopicIds
from tests.proxy.recorded import recorded

TXN_OFFSET_COMMIT = 28


def _api_versions(specs: SpecSet) -> dict[str, object]:
    return decode_response(specs.api("ApiVersions"), 3, recorded("api-versions-v3"))[1]


def _metadata(specs: SpecSet) -> dict[str, object]:
    return decode_response(specs.api("Metadata"), 12, recorded("metadata-v12"))[1]


def _txn_response(version: int) -> dict[str, object]:
    key = {"TopicId": uuid.uuid4()} if version >= 6 else {"Name": "t"}
    partitions = [{"PartitionIndex": p, "ErrorCode": 0} for p in (0, 1)]
    return {"ThrottleTimeMs": 0, "Topics": [{**key, "Partitions": partitions}, {**key, "Partitions": partitions[:1]}]}


def test_cap_version_lowers_only_the_named_api(specs: SpecSet) -> None:
    body = _api_versions(specs)
    before = {k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in body["ApiKeys"]}
    assert before[TXN_OFFSET_COMMIT] == (0, 6)
    rule = CapVersion("TxnOffsetCommit", max_version=5)
    rule.bind(specs)
    api = specs.api("ApiVersions")
    assert rule.acts_on_response(api.key, 3) and not rule.acts_on_response(3, 12)

    assert rule.edit_response(api, 3, body)

    after = {k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in body["ApiKeys"]}
    assert after[TXN_OFFSET_COMMIT] == (0, 5)
    assert {k: v for k, v in after.items() if k != TXN_OFFSET_COMMIT} == {
        k: v for k, v in before.items() if k != TXN_OFFSET_COMMIT
    }
    assert rule.fired == 1
    assert not rule.edit_response(api, 3, body), "a second pass has nothing left to lower"


def test_cap_version_never_goes_below_the_min_version(specs: SpecSet) -> None:
    body = _api_versions(specs)
    rule = CapVersion("Produce", max_version=0)
    rule.bind(specs)
    rule.edit_response(specs.api("ApiVersions"), 3, body)
    produce = next(k for k in body["ApiKeys"] if k["ApiKey"] == 0)
    assert produce["MaxVersion"] == produce["MinVersion"]


def test_strip_topic_ids_of_named_topics_only(specs: SpecSet) -> None:
    body = _metadata(specs)
    (topic,) = body["Topics"]
    assert topic["TopicId"] != ZERO_UUID
    other = StripTopicIds(topics=frozenset({"another-topic"}))
    assert not other.edit_response(specs.api("Metadata"), 12, body) and topic["TopicId"] != ZERO_UUID
    rule = StripTopicIds(topics=frozenset({topic["Name"]}))
    assert rule.acts_on_response(3, 12) and not rule.acts_on_response(3, 9), "Metadata has topic IDs from v10"
    assert rule.edit_response(specs.api("Metadata"), 12, body)
    assert topic["TopicId"] == ZERO_UUID and rule.fired == 1


def test_strip_topic_ids_of_every_topic(specs: SpecSet) -> None:
    body = _metadata(specs)
    assert StripTopicIds().edit_response(specs.api("Metadata"), 12, body)
    assert {t["TopicId"] for t in body["Topics"]} == {ZERO_UUID}


def test_replace_errors_hits_the_first_n_matching_responses(specs: SpecSet) -> None:
    rule = ReplaceErrors("TxnOffsetCommit", error=100, count=2, versions=(6, 6))
    rule.bind(specs)
    api = specs.api("TxnOffsetCommit")
    assert rule.acts_on_response(TXN_OFFSET_COMMIT, 6)
    assert not rule.acts_on_response(TXN_OFFSET_COMMIT, 5), "outside its versions"
    assert not rule.acts_on_response(3, 6), "another API"
    edited = []
    for _ in range(3):
        body = _txn_response(6)
        changed = rule.acts_on_response(TXN_OFFSET_COMMIT, 6) and rule.edit_response(api, 6, body)
        edited.append((changed, sorted({p["ErrorCode"] for t in body["Topics"] for p in t["Partitions"]})))
    assert edited == [(True, [100]), (True, [100]), (False, [0])]
    assert rule.fired == 2 and rule.spent
    assert "2/2 used" in rule.describe() and "-> 100" in rule.describe()


def test_replace_errors_reaches_top_level_and_nested_codes(specs: SpecSet) -> None:
    body = {"ErrorCode": 0, "Groups": [{"ErrorCode": 0, "Topics": [{"Partitions": [{"ErrorCode": 0}]}]}]}
    rule = ReplaceErrors("OffsetFetch", error=16)
    rule.bind(specs)
    assert rule.edit_response(specs.api("OffsetFetch"), 9, body)
    assert body == {"ErrorCode": 16, "Groups": [{"ErrorCode": 16, "Topics": [{"Partitions": [{"ErrorCode": 16}]}]}]}


def test_delay_on_requests_or_responses(specs: SpecSet) -> None:
    on_request = Delay("Fetch", seconds=0.25, on="request", count=1)
    on_request.bind(specs)
    assert on_request.response_delay(1, 16) == 0
    action = on_request.on_request(1, 16)
    assert action is not None and action.delay == 0.25 and not action.close
    assert on_request.on_request(1, 16) is None, "its one act is spent"
    on_response = Delay("Fetch", seconds=0.5)
    assert on_response.on_request(1, 16) is None and on_response.response_delay(1, 16) == 0.5
    with pytest.raises(ValueError, match="request' or 'response"):
        Delay("Fetch", seconds=1, on="both")


def test_close_connection_acts_once_by_default(specs: SpecSet) -> None:
    rule = CloseConnection("TxnOffsetCommit")
    rule.bind(specs)
    assert rule.matches(TXN_OFFSET_COMMIT, 6) and not rule.matches(0, 9)
    first = rule.on_request(TXN_OFFSET_COMMIT, 6)
    assert first is not None and first.close
    assert rule.on_request(TXN_OFFSET_COMMIT, 6) is None


def test_unknown_api_names_fail_when_bound(specs: SpecSet) -> None:
    with pytest.raises(Exception, match="TxnOffsetComit"):
        ReplaceErrors("TxnOffsetComit", error=1).bind(specs)
