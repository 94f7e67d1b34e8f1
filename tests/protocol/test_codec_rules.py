"""Codec rules beyond round trips: exact bytes, defaults, ignorable fields, tags, errors, the fast path."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocol.codec import (
    UNKNOWN_TAGS,
    compile_decoder,
    decode,
    decode_request,
    decode_response,
    encode,
    encode_request,
    encode_response,
    frame,
    generated_source,
    index_by_map_key,
    map_key_fields,
    split_response,
)
from harness.protocol.exceptions import DecodeError, EncodeError, UnsupportedVersionError
from harness.protocol.records import RecordBatch, encode_batch, parse_batches
from harness.protocol.spec import load_specs
from harness.protocol.types import ZERO_UUID, kafka_uuid_str

SPECS = load_specs("4.4.0")
METADATA = SPECS.api("Metadata")


def test_request_header_and_body_bytes() -> None:
    raw = encode_request(METADATA, 12, {"CorrelationId": 7, "ClientId": "kc"}, {"Topics": None})
    # key 3, version 12, correlation 7, client id as a *legacy* string even in header v2, no tags;
    # then Topics null (compact), AllowAutoTopicCreation true, IncludeTopicAuthorizedOperations false, no tags.
    assert raw.hex() == "0003000c00000007" + "00026b63" + "00" + "00010000"
    req = decode_request(SPECS, raw)
    assert (req.api.key, req.version) == (3, 12)
    assert req.header == {"RequestApiKey": 3, "RequestApiVersion": 12, "CorrelationId": 7, "ClientId": "kc"}
    assert req.body == {"Topics": None, "AllowAutoTopicCreation": True, "IncludeTopicAuthorizedOperations": False}
    # Header v1 (non-flexible request): no tag buffer, null client id as length -1.
    v1 = encode_request(METADATA, 8, {"CorrelationId": 1, "ClientId": None}, {"Topics": []})
    assert v1.startswith(bytes.fromhex("0003000800000001ffff"))
    assert frame(raw)[:4] == len(raw).to_bytes(4, "big")


def test_api_versions_response_header_is_always_v0() -> None:
    api = SPECS.api("ApiVersions")
    body = {"ErrorCode": 0, "ApiKeys": [{"ApiKey": 3, "MinVersion": 0, "MaxVersion": 13}], "ThrottleTimeMs": 0}
    raw = encode_response(api, 3, {"CorrelationId": 9}, body)
    assert raw[:4] == (9).to_bytes(4, "big") and raw[4:6] == b"\0\0"  # no header tag buffer before ErrorCode
    header, decoded = decode_response(api, 3, raw)
    assert header == {"CorrelationId": 9}
    assert decoded["ApiKeys"] == body["ApiKeys"] and decoded["FinalizedFeaturesEpoch"] == -1
    flexible = encode_response(METADATA, 12, {"CorrelationId": 9}, {})
    assert flexible[:5] == bytes.fromhex("0000000900")  # header v1 has a tag buffer
    assert split_response(METADATA, 12, flexible)[1] == encode(METADATA.response, 12, {})


def test_defaults_fill_absent_fields() -> None:
    spec = SPECS.request("TxnOffsetCommit")
    body = {"TransactionalId": "t", "GroupId": "g", "ProducerId": 1, "ProducerEpoch": 0, "Topics": []}
    decoded = decode(spec, 6, encode(spec, 6, body))
    assert decoded == {**body, "GenerationIdOrMemberEpoch": -1, "MemberId": "", "GroupInstanceId": None}
    assert decode(SPECS.request("Fetch"), 18, encode(SPECS.request("Fetch"), 18, {}))["MaxBytes"] == 0x7FFFFFFF


def test_ignorable_fields_are_dropped_others_refused() -> None:
    spec = SPECS.request("TxnOffsetCommit")
    topic = {"Name": "t", "TopicId": uuid.uuid4(), "Partitions": []}
    body = {"TransactionalId": "t", "GroupId": "g", "ProducerId": 1, "ProducerEpoch": 0, "Topics": [topic]}
    # TopicId is ignorable: v5 writes the name and drops the id; v6 the other way round.
    assert decode(spec, 5, encode(spec, 5, body))["Topics"][0] == {"Name": "t", "Partitions": []}
    assert decode(spec, 6, encode(spec, 6, body))["Topics"][0] == {"TopicId": topic["TopicId"], "Partitions": []}
    # ForgottenTopicsData (Fetch v7+) is not ignorable: a non-default value at v4 is an error...
    fetch = SPECS.request("Fetch")
    with pytest.raises(UnsupportedVersionError, match="ForgottenTopicsData at version 4"):
        encode(fetch, 4, {"ForgottenTopicsData": [{"Topic": "t", "Partitions": [0]}]})
    # ...while the default (empty) is fine.
    encode(fetch, 4, {"ForgottenTopicsData": []})
    with pytest.raises(UnsupportedVersionError, match="Key at version 6"):
        encode(SPECS.request("FindCoordinator"), 6, {"Key": "g"})


def test_encode_errors_name_the_field() -> None:
    spec = SPECS.request("TxnOffsetCommit")
    good = {"PartitionIndex": 0, "CommittedOffset": 1, "CommittedMetadata": None}
    bad = {"PartitionIndex": 0, "CommittedOffset": "x", "CommittedMetadata": None}
    body = {"TransactionalId": "t", "GroupId": "g", "ProducerId": 1, "ProducerEpoch": 0}
    with pytest.raises(EncodeError, match=r"Topics\[0\]\.Partitions\[1\]\.CommittedOffset: expected int64"):
        encode(spec, 5, {**body, "Topics": [{"Name": "t", "Partitions": [good, bad]}]})
    with pytest.raises(EncodeError, match=r"unknown field.*Topicz"):
        encode(spec, 5, {**body, "Topicz": []})
    with pytest.raises(EncodeError, match="out of range for int16"):
        encode(spec, 5, {**body, "ProducerEpoch": 40000, "Topics": []})
    with pytest.raises(EncodeError, match="GroupId: None given"):
        encode(spec, 5, {**body, "GroupId": None, "Topics": []})
    with pytest.raises(UnsupportedVersionError, match="no version 7"):
        encode(spec, 7, body)


def test_decode_errors() -> None:
    spec = METADATA.response
    raw = encode(spec, 12, {"Brokers": [{"NodeId": 1, "Host": "h", "Port": 1}], "Topics": []})
    assert decode(spec, 12, raw)["Brokers"][0]["Host"] == "h"
    for cut in (1, 5, len(raw) - 1):
        with pytest.raises(DecodeError, match="MetadataResponse v12"):
            decode(spec, 12, raw[:cut])
    with pytest.raises(DecodeError, match="1 trailing bytes"):
        decode(spec, 12, raw + b"\0")
    assert decode(spec, 12, raw + b"\0", allow_trailing=True)["Brokers"][0]["Port"] == 1
    # Brokers is not nullable: a null array (compact length 0) is refused.
    null_brokers = raw[:4] + b"\0" + raw[raw.index(b"\0", 4) + 1 :]
    with pytest.raises(DecodeError):
        decode(spec, 12, null_brokers)


def test_tagged_fields_only_when_not_default_and_unknown_tags_survive() -> None:
    spec = SPECS.response("ApiVersions")
    base = {"ErrorCode": 0, "ApiKeys": [], "ThrottleTimeMs": 0}
    plain = encode(spec, 3, base)
    assert plain.endswith(b"\0")  # no tagged fields at all
    with_epoch = encode(spec, 3, {**base, "FinalizedFeaturesEpoch": 5})
    # one tagged field: count 1, tag 1, size 8, int64 5
    assert with_epoch.endswith(bytes.fromhex("0101080000000000000005"))
    assert decode(spec, 3, with_epoch)["FinalizedFeaturesEpoch"] == 5
    unknown = {**base, UNKNOWN_TAGS: {7: b"\x01\x02"}, "FinalizedFeaturesEpoch": 5}
    raw = encode(spec, 3, unknown)
    back = decode(spec, 3, raw)
    assert back[UNKNOWN_TAGS] == {7: b"\x01\x02"} and encode(spec, 3, back) == raw
    with pytest.raises(EncodeError, match="not flexible"):
        encode(spec, 2, {**base, UNKNOWN_TAGS: {7: b"x"}})
    with pytest.raises(EncodeError, match="both a known field"):
        encode(spec, 3, {**base, UNKNOWN_TAGS: {1: b"x"}})


def test_nullable_struct_marker() -> None:
    spec = SPECS.response("ConsumerGroupHeartbeat")
    field = spec.struct.field("Assignment")
    assert field.type.is_struct and not field.type.is_array
    v = spec.valid_versions.high
    none = encode(spec, v, {"Assignment": None})
    some = encode(spec, v, {"Assignment": {"TopicPartitions": []}})
    assert decode(spec, v, none)["Assignment"] is None
    assert decode(spec, v, some)["Assignment"] == {"TopicPartitions": []}
    assert len(some) == len(none) + 2  # marker 0x01 instead of 0xff, an empty array, a tag buffer


def test_uuid_inputs() -> None:
    spec = SPECS.request("Metadata")
    u = uuid.uuid4()
    for given_as in (u, u.bytes, kafka_uuid_str(u), str(u)):
        raw = encode(spec, 12, {"Topics": [{"TopicId": given_as, "Name": None}]})
        assert decode(spec, 12, raw)["Topics"][0]["TopicId"] == u
    raw = encode(spec, 12, {"Topics": [{"TopicId": None, "Name": "t"}]})
    assert decode(spec, 12, raw)["Topics"][0]["TopicId"] == ZERO_UUID


def test_records_as_bytes_or_parsed() -> None:
    spec = SPECS.request("Produce")
    batch = encode_batch([b"a", b"b"], partition_leader_epoch=4)
    body = {"Acks": 1, "TimeoutMs": 1, "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": batch}]}]}
    raw = encode(spec, 12, body)
    assert decode(spec, 12, raw)["TopicData"][0]["PartitionData"][0]["Records"] == batch
    parsed = decode(spec, 12, raw, records="parse")["TopicData"][0]["PartitionData"][0]["Records"]
    assert isinstance(parsed[0], RecordBatch) and parsed[0].partition_leader_epoch == 4
    # Parsed batches are accepted on encode too.
    again = {
        "Acks": 1,
        "TimeoutMs": 1,
        "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": parsed}]}],
    }
    assert parse_batches(decode(spec, 12, encode(spec, 12, again))["TopicData"][0]["PartitionData"][0]["Records"])


def test_records_as_zero_copy_view() -> None:
    spec = SPECS.request("Produce")
    batch = encode_batch([b"a", b"b"], partition_leader_epoch=4)
    body = {"Acks": 1, "TimeoutMs": 1, "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": batch}]}]}
    raw = encode(spec, 12, body)
    view = decode(spec, 12, raw, records="view")["TopicData"][0]["PartitionData"][0]["Records"]
    assert isinstance(view, memoryview) and view.obj is raw and bytes(view) == batch
    assert parse_batches(bytes(view))[0].partition_leader_epoch == 4


def test_generated_source_is_inspectable() -> None:
    src = generated_source(METADATA.response, 13)
    assert src.startswith("def decode(buf, pos):") and "'TopicId'" in src
    assert generated_source(METADATA.request, 13, "encode").startswith("def encode(d, w):")


# The shape-speculative path must agree with the generic code, whatever the mix of shapes.

_PARTITION = st.fixed_dictionaries(
    {
        "ErrorCode": st.sampled_from([0, 5, 6]),
        "PartitionIndex": st.integers(0, 2000),
        "LeaderId": st.integers(-1, 5),
        "LeaderEpoch": st.integers(-1, 2**31 - 1),
        "ReplicaNodes": st.lists(st.integers(0, 5), max_size=4),
        "IsrNodes": st.lists(st.integers(0, 5), max_size=4),
        "OfflineReplicas": st.lists(st.integers(0, 5), max_size=2),
    }
)
_BROKER = st.fixed_dictionaries(
    {
        "NodeId": st.integers(0, 9),
        "Host": st.sampled_from(["127.0.0.1", "localhost", "h", "ĥost"]),
        "Port": st.integers(1, 65535),
        "Rack": st.none() | st.sampled_from(["a", "rack-2"]),
    }
)


def _metadata_response(brokers: list[Any], partitions: list[Any], copies: int) -> dict[str, Any]:
    # Repeat the partitions so that runs of equal shapes occur, as in real responses.
    parts = [dict(p, PartitionIndex=i) for i, p in enumerate(partitions * copies)]
    topic = {"Name": "t", "TopicId": uuid.uuid4(), "Partitions": parts, "ErrorCode": 0}
    return {"Brokers": brokers, "Topics": [topic, dict(topic, Name="u")]}


@settings(max_examples=25, derandomize=True, database=None, deadline=None)
@given(
    brokers=st.lists(_BROKER, max_size=5),
    partitions=st.lists(_PARTITION, min_size=1, max_size=6),
    copies=st.integers(1, 20),
    version=st.sampled_from([1, 5, 8, 9, 12, 13]),
)
def test_flat_struct_fast_path_matches_generic_code(brokers: Any, partitions: Any, copies: int, version: int) -> None:
    spec = METADATA.response
    value = _metadata_response(brokers, partitions, copies)
    raw = encode(spec, version, value)
    fast = compile_decoder(spec, version)(raw, 0)
    plain = compile_decoder(spec, version, speculate=False)(raw, 0)
    assert fast == plain
    assert fast[1] == len(raw)
    assert fast[0]["Topics"][0]["Partitions"] == [
        {k: v for k, v in p.items() if k in fast[0]["Topics"][0]["Partitions"][0]}
        for p in value["Topics"][0]["Partitions"]
    ]


def test_fast_path_with_a_tagged_field_in_one_element() -> None:
    spec = METADATA.response
    parts = [{"PartitionIndex": i, "ReplicaNodes": [1, 2], "IsrNodes": [1], "OfflineReplicas": []} for i in range(50)]
    parts[30][UNKNOWN_TAGS] = {5: b"\x09"}
    value = {"Brokers": [], "Topics": [{"Name": "t", "Partitions": parts}]}
    raw = encode(spec, 12, value)
    decoded = decode(spec, 12, raw)["Topics"][0]["Partitions"]
    assert decoded[30][UNKNOWN_TAGS] == {5: b"\x09"}
    assert all(UNKNOWN_TAGS not in p for i, p in enumerate(decoded) if i != 30)
    assert decoded == compile_decoder(spec, 12, speculate=False)(raw, 0)[0]["Topics"][0]["Partitions"]


def test_map_keys_give_a_keyed_view() -> None:
    produce = SPECS.request("Produce")
    topics = produce.struct.field("TopicData")
    assert map_key_fields(topics, 12) == ("Name",) and map_key_fields(topics, 13) == ("TopicId",)
    ids = [uuid.uuid4(), uuid.uuid4()]
    body = {"Acks": 1, "TimeoutMs": 1, "TopicData": [{"TopicId": i, "PartitionData": []} for i in ids]}
    decoded = decode(produce, 13, encode(produce, 13, body))
    keyed = index_by_map_key(topics, 13, decoded["TopicData"])
    assert list(keyed) == ids and keyed[ids[1]]["PartitionData"] == []
