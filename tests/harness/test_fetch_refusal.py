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

RECORDED = json.loads((Path(__file__).parent / "data" / "nisshi-0.8.1-refusals.json").read_text())


def test_a_fetch_answered_without_the_partition_is_refused_not_an_index_error() -> None:
    f = RECORDED["fetch_max_wait_0"]
    assert f["response"]["Responses"] == [], "Nisshi's answer to MaxWaitMs 0"
    with pytest.raises(TargetRefused, match="without that partition"):
        raw.fetched_partition(f["response"], f["version"], "t", 0, f["request"])


def test_a_fetch_answered_with_the_partition_returns_it() -> None:
    f = RECORDED["fetch_max_wait_0"]
    tid = uuid.UUID(f["request"]["Topics"][0]["TopicId"])
    answer = {"Partition": 0, "ErrorCode": 0, "HighWatermark": 5, "Records": b""}
    other = {**answer, "Partition": 1}
    resp = {**f["response"], "Responses": [{"TopicId": tid, "Partitions": [other, answer]}]}
    assert raw.fetched_partition(resp, f["version"], "t", 0, f["request"]) is answer
