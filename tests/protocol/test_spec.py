"""The spec loader: comments, version ranges, defaults, struct resolution, header versions."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from harness.kafka.dist import resolve
from harness.protocol.exceptions import SpecError
from harness.protocol.spec import (
    MAX_VERSION,
    NO_VERSIONS,
    Versions,
    load_jar,
    load_specs,
    parse_json,
    parse_message,
    strip_comments,
)
from harness.protocol.types import ZERO_UUID

SPECS = load_specs("4.4.0")


def test_comments_are_stripped_outside_strings_only() -> None:
    text = """
    // leading comment
    { "name": "A//B", /* block
       comment */ "about": "x /* not a comment */ y", // trailing
      "url": "http://example" }
    """
    assert parse_json(text) == {"name": "A//B", "about": "x /* not a comment */ y", "url": "http://example"}
    assert strip_comments('"a\\"//b" // c') == '"a\\"//b" '


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [("0+", 0, MAX_VERSION), ("3", 3, 3), ("1-12", 1, 12), ("none", 0, -1)],
)
def test_version_ranges(text: str, low: int, high: int) -> None:
    v = Versions.parse(text)
    assert (v.low, v.high) == (low, high)
    assert str(v) == text


def test_version_range_operations() -> None:
    assert 5 in Versions.parse("3+") and 2 not in Versions.parse("3+")
    assert Versions.parse("0-5").intersect(Versions.parse("3+")) == Versions(3, 5)
    assert Versions.parse("0-2").intersect(Versions.parse("3+")) == NO_VERSIONS
    assert list(Versions.parse("1-3")) == [1, 2, 3]
    assert NO_VERSIONS.empty and list(NO_VERSIONS) == []


def test_txn_offset_commit_v6_from_the_440_jar() -> None:
    api = SPECS.api("TxnOffsetCommit")
    assert api.key == 28 and SPECS.api(28) is api
    assert str(api.request.valid_versions) == "0-6" and str(api.request.flexible_versions) == "3+"
    topic = api.request.struct.field("Topics")
    assert topic.type.is_array and topic.type.is_struct and topic.struct is not None
    name, topic_id = topic.struct.field("Name"), topic.struct.field("TopicId")
    assert 5 in name.versions and 6 not in name.versions and name.ignorable
    assert 6 in topic_id.versions and 5 not in topic_id.versions and topic_id.type.text == "uuid"
    partition = topic.struct.field("Partitions").struct
    assert partition is not None
    epoch = partition.field("CommittedLeaderEpoch")
    assert epoch.default == -1 and epoch.ignorable and 2 in epoch.versions
    assert api.request.struct.field("GroupInstanceId").default is None
    assert SPECS.request("TxnOffsetCommitRequest") is api.request
    assert SPECS.response("TxnOffsetCommit").name == "TxnOffsetCommitResponse"


def test_tagged_fields_common_structs_and_defaults() -> None:
    fetch = SPECS.request("Fetch")
    replica_state = fetch.struct.field("ReplicaState")
    assert replica_state.tag == 1 and 15 in replica_state.tagged_versions and replica_state.type.is_struct
    partitions = fetch.struct.field("Topics").struct.field("Partitions").struct  # type: ignore[union-attr]
    assert partitions.field("HighWatermark").default == 2**63 - 1  # "9223372036854775807"
    assert fetch.struct.field("MaxBytes").default == 0x7FFFFFFF  # "0x7fffffff"
    assert SPECS.request("OffsetForLeaderEpoch").struct.field("ReplicaId").default == -2  # JSON number
    # A field typed by a common struct resolves to it.
    add = SPECS.request("AddPartitionsToTxn")
    assert "AddPartitionsToTxnTopic" in add.common_structs
    # InitProducerId v6 (KIP-939, 2PC) is unstable in 4.4.0: brokers advertise only up to v5.
    assert SPECS.api("InitProducerId").latest_version_unstable
    assert not SPECS.api("ListOffsets").latest_version_unstable
    # uuid, struct and array defaults
    metadata = SPECS.request("Metadata").struct.field("Topics").struct
    assert metadata is not None and metadata.field("TopicId").default == ZERO_UUID
    assert SPECS.response("Fetch").struct.field("NodeEndpoints").default == ()


def test_header_versions_follow_kafkas_generator() -> None:
    for api in SPECS.apis():
        for v in api.valid_versions:
            flexible_req, flexible_resp = api.request.is_flexible(v), api.response.is_flexible(v)
            assert api.request_header_version(v) == (2 if flexible_req else 1)
            expected = 0 if api.key == 18 else (1 if flexible_resp else 0)
            assert api.response_header_version(v) == expected
    # ControlledShutdown v0 (no longer valid in 4.x) had a header without client id.
    assert SPECS.api(7).request_header_version(0) == 0
    assert SPECS.request_header.struct.field("ClientId").flexible_versions == NO_VERSIONS


def test_apis_with_no_valid_versions_are_loaded() -> None:
    # 4.x keeps specs of removed APIs with validVersions "none".
    assert SPECS.api("ControlledShutdown").valid_versions.empty


def test_coordinator_and_data_records_are_loaded() -> None:
    value = SPECS.message("OffsetCommitValue")
    assert value.type == "coordinator-value" and value.api_key == 1
    assert value.struct.field("topicId").tag == 0 and 4 in value.struct.field("topicId").tagged_versions
    assert value.struct.field("leaderEpoch").default == -1
    assert SPECS.message("TransactionLogValue").type == "coordinator-value"
    assert SPECS.message("EndTxnMarker").type == "data"
    with pytest.raises(SpecError, match="NoSuchThing"):
        SPECS.message("NoSuchThing")
    with pytest.raises(SpecError, match="no API named"):
        SPECS.api("NoSuchApi")


def test_specs_of_one_jar_and_the_cache() -> None:
    jar = resolve("4.4.0").jar("kafka-clients")
    assert load_jar(jar) is load_jar(jar)
    only_clients = load_specs(jar)
    assert only_clients.api("Metadata").request.valid_versions == SPECS.api("Metadata").request.valid_versions
    with pytest.raises(SpecError):
        only_clients.message("OffsetCommitValue")  # that one lives in the group coordinator jar
    assert load_specs("4.4.0") is SPECS


def test_a_spec_in_a_made_up_jar(tmp_path: Path) -> None:
    spec = {
        "apiKey": 99,
        "type": "request",
        "name": "MadeUpRequest",
        "validVersions": "0-1",
        "flexibleVersions": "1+",
        "fields": [
            {
                "name": "Items",
                "type": "[]Item",
                "versions": "0+",
                "fields": [{"name": "X", "type": "int8", "versions": "0+"}],
            },
            {"name": "Shared", "type": "Common", "versions": "1+", "nullableVersions": "1+", "default": "null"},
            {"name": "Again", "type": "[]Item", "versions": "1+"},
        ],
        "commonStructs": [
            {"name": "Common", "versions": "0+", "fields": [{"name": "Y", "type": "string", "versions": "0+"}]}
        ],
    }
    response = {"apiKey": 99, "type": "response", "name": "MadeUpResponse", "validVersions": "0-1", "fields": []}
    jar = tmp_path / "made-up.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("common/message/MadeUpRequest.json", "// comment\n" + json.dumps(spec))
        z.writestr("common/message/MadeUpResponse.json", json.dumps(response))
    specs = load_specs(jar)
    req = specs.request(99)
    assert req.struct.field("Again").struct is req.struct.field("Items").struct  # referred to by name
    assert req.struct.field("Shared").struct is req.structs["Common"]
    assert specs.api("MadeUp").name == "MadeUp"


def test_invalid_specs_are_refused() -> None:
    with pytest.raises(SpecError, match="tag"):
        parse_message(
            {"name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "int8", "versions": "0+", "tag": 0}]}
        )
    with pytest.raises(SpecError, match="unknown struct"):
        parse_message({"name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "Nope", "versions": "0+"}]})
    with pytest.raises(SpecError, match="not valid JSON"):
        parse_json("{ nope }")


@pytest.mark.parametrize(("kind", "name"), [("request", "GroupId"), ("response", "GroupId"), ("data", "groupId")])
def test_request_and_response_field_names_are_pascal_case_in_every_release(kind: str, name: str) -> None:
    """OffsetFetch v8's `groupId` (3.3, 3.4) is 4.x's `GroupId`: the wire carries no names, and the harness
    asks for one spelling on every release; a coordinator record's own names are left as they are."""
    spec = parse_message({"name": "OffsetFetchRequest", "type": kind, "apiKey": 9, "validVersions": "8",
                          "flexibleVersions": "8+", "fields": [
                              {"name": "Groups", "type": "[]OffsetFetchRequestGroup", "versions": "8+", "fields": [
                                  {"name": "groupId", "type": "string", "versions": "8+"}]}]})
    groups = spec.struct.field("Groups").struct
    assert groups is not None and groups.field_names() == frozenset({name})


def test_kip890_renamed_add_partitions_to_txn_fields_get_the_newest_names() -> None:
    """3.3's AddPartitionsToTxn v0-3 `TransactionalId`/`Results`/`ErrorCode` are 4.x's V3AndBelow* names."""
    request = parse_message({"name": "AddPartitionsToTxnRequest", "type": "request", "apiKey": 24,
                             "validVersions": "0-3", "flexibleVersions": "3+", "fields": [
                                 {"name": "TransactionalId", "type": "string", "versions": "0+"}]})
    assert request.struct.field_names() == frozenset({"V3AndBelowTransactionalId"})
    response = parse_message({"name": "AddPartitionsToTxnResponse", "type": "response", "apiKey": 24,
                              "validVersions": "0-3", "flexibleVersions": "3+", "fields": [
                                  {"name": "Results", "type": "[]AddPartitionsToTxnTopicResult", "versions": "0+",
                                   "fields": [{"name": "Results", "type": "[]AddPartitionsToTxnPartitionResult",
                                               "versions": "0+", "fields": [
                                                   {"name": "ErrorCode", "type": "int16", "versions": "0+"}]}]}]})
    topics = response.struct.field("ResultsByTopicV3AndBelow").struct
    assert topics is not None and topics.field_names() == frozenset({"ResultsByPartition"})
    partitions = topics.field("ResultsByPartition").struct
    assert partitions is not None and partitions.field_names() == frozenset({"PartitionErrorCode"})
