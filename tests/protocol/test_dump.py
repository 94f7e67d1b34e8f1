"""The readable dump of messages (for logs and Allure attachments)."""

from __future__ import annotations

import uuid

from harness.protocol.codec import UNKNOWN_TAGS
from harness.protocol.dump import dump
from harness.protocol.records import control_batch, encode_batch
from harness.protocol.spec import load_specs
from harness.protocol.types import kafka_uuid_str

SPECS = load_specs("4.4.0")


def test_dump_names_errors_uuids_and_tags() -> None:
    topic_id = uuid.uuid4()
    body = {
        "ThrottleTimeMs": 0,
        "Topics": [{"TopicId": topic_id, "Partitions": [{"PartitionIndex": 0, "ErrorCode": 74}]}],
    }
    text = dump(SPECS.api("TxnOffsetCommit"), 6, body, direction="response")
    assert text.splitlines()[0] == "TxnOffsetCommitResponse v6 (api 28, flexible)"
    assert "ErrorCode: 74 FENCED_LEADER_EPOCH" in text
    assert f"TopicId: {kafka_uuid_str(topic_id)} ({topic_id})" in text
    assert "- PartitionIndex: 0" in text
    fetch = dump(
        "ApiVersions",
        3,
        {"ErrorCode": 0, "FinalizedFeaturesEpoch": 3, UNKNOWN_TAGS: {9: b"\x01"}},
        direction="response",
    )
    assert "FinalizedFeaturesEpoch (tag 1): 3" in fetch and "<unknown tag 9>: 0x01" in fetch


def test_dump_summarizes_records() -> None:
    blob = encode_batch([b"a", b"b"], base_offset=10, partition_leader_epoch=3) + control_batch(
        "commit", producer_id=4, producer_epoch=0, base_offset=12
    )
    body = {"Acks": -1, "TimeoutMs": 1, "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": blob}]}]}
    text = dump(SPECS.request("Produce"), 12, body)
    assert "Records: " in text and "2 batch(es)" in text
    assert "offsets 10..11 records=2 leader_epoch=3" in text and "crc=ok" in text
    assert "control=COMMIT" in text
    broken = dump(
        SPECS.request("Produce"),
        12,
        {**body, "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": b"\x00" * 70}]}]},
    )
    assert "not parseable" in broken or "batch(es)" in broken


def test_dump_of_a_request_with_nulls_and_unexpected_keys() -> None:
    text = dump(SPECS.api("Metadata"), 12, {"Topics": None, "Oops": 1})
    assert "Topics: null" in text and "Oops?: 1  (not in the spec)" in text
