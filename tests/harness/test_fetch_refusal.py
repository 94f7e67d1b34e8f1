"""A Fetch answered without the partition asked is the target's refusal to serve the read ("target
refused"), not an IndexError (an ERROR): Nisshi 0.8.1 answers a Fetch of MaxWaitMs 0 with no topics
(tests/harness/data/nisshi-0.8.1-refusals.json); an answer that holds the partition is returned."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from harness.clients import raw
from harness.errors import TargetRefused
from harness.protocol.codec import decode, encode
from harness.protocol.spec import load_specs

RECORDED = json.loads((Path(__file__).parent / "data" / "nisshi-0.8.1-refusals.json").read_text())


def test_a_fetch_answered_without_the_partition_is_refused_not_an_index_error() -> None:
    f = RECORDED["fetch_max_wait_0"]
    assert f["response"]["Responses"] == [], "Nisshi's answer to MaxWaitMs 0"
    with pytest.raises(TargetRefused, match="without that partition"):
        raw.fetched_partition(f["response"], f["version"], "t", 0, f["request"])


def test_a_fetch_answered_with_the_partition_returns_it() -> None:
    f = RECORDED["fetch_max_wait_0"]
    tid = uuid.UUID(f["request"]["Topics"][0]["TopicId"])
    answer = {"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 5, "Records": b""}
    other = {**answer, "PartitionIndex": 1}
    resp = {**f["response"], "Responses": [{"TopicId": tid, "Partitions": [other, answer]}]}
    assert raw.fetched_partition(resp, f["version"], "t", 0, f["request"]) is answer


def test_an_answer_decoded_by_the_schema_is_found_by_its_partition_index() -> None:
    """The answer names the partition PartitionIndex (FetchResponse.json), the request Partition:
    c67a83c looked for Partition in the answer, a KeyError on every answer that held a partition."""
    f = RECORDED["fetch_max_wait_0"]
    response = load_specs("4.4.0").api("Fetch").response
    tid = uuid.UUID(f["request"]["Topics"][0]["TopicId"])
    body = {**f["response"], "Responses": [{"TopicId": tid, "Partitions": [
        {"PartitionIndex": i, "ErrorCode": 0, "HighWatermark": 5 + i, "Records": b""} for i in (1, 0)]}]}
    resp = decode(response, f["version"], encode(response, f["version"], body))
    assert raw.fetched_partition(resp, f["version"], "t", 0, f["request"])["HighWatermark"] == 5
