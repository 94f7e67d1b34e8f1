"""Coordinator records (__consumer_offsets, __transaction_state) with the coordinator jars' specs."""

from __future__ import annotations

import struct
import uuid

import pytest

from harness.kafka.dist import cache_root
from harness.protocol.codec import decode, decode_versioned, encode, encode_versioned
from harness.protocol.coordinator import decode_coordinator_record
from harness.protocol.exceptions import DecodeError
from harness.protocol.spec import load_specs

SPECS = load_specs("4.4.0")


def test_offset_commit_record_with_topic_id() -> None:
    key_spec, value_spec = SPECS.message("OffsetCommitKey"), SPECS.message("OffsetCommitValue")
    key = struct.pack(">h", key_spec.api_key) + encode(key_spec, 0, {"group": "g", "topic": "t", "partition": 2})
    topic_id = uuid.uuid4()
    value = encode_versioned(
        value_spec, 4, {"offset": 42, "leaderEpoch": 7, "metadata": "", "commitTimestamp": 1, "topicId": topic_id}
    )
    rec = decode_coordinator_record(SPECS, "__consumer_offsets", key, value)
    assert (rec.record_type, rec.key_schema, rec.value_schema, rec.value_version) == (
        1,
        "OffsetCommitKey",
        "OffsetCommitValue",
        4,
    )
    assert rec.key == {"group": "g", "topic": "t", "partition": 2}
    assert rec.value is not None and rec.value["topicId"] == topic_id and rec.value["leaderEpoch"] == 7
    # v3 has no topicId at all; a tombstone has no value.
    v3 = encode_versioned(value_spec, 3, {"offset": 1, "leaderEpoch": 2, "metadata": "", "commitTimestamp": 1})
    assert "topicId" not in decode_coordinator_record(SPECS, "group", key, v3).value  # type: ignore[operator]
    assert decode_coordinator_record(SPECS, "__consumer_offsets", key, None).value is None
    assert decode_versioned(value_spec, v3)[0] == 3


def test_transaction_log_family_and_unknown_types() -> None:
    key_spec = SPECS.message("TransactionLogKey")
    key = struct.pack(">h", 0) + encode(key_spec, 0, {"TransactionalId": "tx"})
    rec = decode_coordinator_record(SPECS, "__transaction_state", key, None)
    assert rec.key_schema == "TransactionLogKey" and rec.key == {"TransactionalId": "tx"}
    with pytest.raises(DecodeError, match="record type 99"):
        decode_coordinator_record(SPECS, "__consumer_offsets", struct.pack(">h", 99), None)


def test_tagged_null_struct_decodes_like_kafka_does() -> None:
    """A 4.4.0 ConsumerGroupMemberMetadataValue for a consumer-protocol member ends with tag 0 of one
    byte 0x00: Kafka reads that varint marker as null ClassicMemberMetadata (recorded from a real broker)."""
    specs = load_specs("4.4.0")
    spec = specs.messages["ConsumerGroupMemberMetadataValue"]
    value = bytes.fromhex(
        "00000000056b6374730b2f3132372e302e302e31020f7265636f726465642d746f70696301000075300001000100"
    )
    body = decode(spec, 0, value, offset=2)
    assert body["ClassicMemberMetadata"] is None and body["RebalanceTimeoutMs"] == 30000
    # And back: a null tagged struct is simply absent; a present one round-trips.
    present = {**body, "ClassicMemberMetadata": {"SessionTimeoutMs": 45000, "SupportedProtocols": []}}
    again = decode(spec, 0, encode(spec, 0, present))
    assert again["ClassicMemberMetadata"]["SessionTimeoutMs"] == 45000


@pytest.mark.skipif(not (cache_root() / "kafka" / "3.3.2" / "manifest.json").exists(),
                    reason="Kafka 3.3.2 is not in the user cache (kcts run --target 3.3.2 fetches it)")
def test_a_3_3_offset_commit_record_is_read_from_the_brokers_data_specs() -> None:
    """3.3 has no coordinator jars: OffsetCommitKey is a `data` spec of the broker's jar and the record
    type (1) is the key's version."""
    old = load_specs("3.3.2")
    key_spec, value_spec = old.message("OffsetCommitKey"), old.message("OffsetCommitValue")
    assert key_spec.type == "data"
    key = struct.pack(">h", 1) + encode(key_spec, 1, {"group": "g", "topic": "t", "partition": 2})
    value = encode_versioned(value_spec, 3, {"offset": 42, "leaderEpoch": 7, "metadata": "m", "commitTimestamp": 1})
    rec = decode_coordinator_record(old, "__consumer_offsets", key, value)
    assert (rec.record_type, rec.key_schema, rec.value_schema, rec.value_version) == (
        1, "OffsetCommitKey", "OffsetCommitValue", 3)
    assert rec.key == {"group": "g", "topic": "t", "partition": 2}
    assert rec.value is not None and (rec.value["offset"], rec.value["leaderEpoch"]) == (42, 7)
    with pytest.raises(DecodeError, match="no group coordinator key schema for record type 9"):
        decode_coordinator_record(old, "__consumer_offsets", struct.pack(">h", 9), None)
