"""The consumer group protocol (KIP-848) is served only where a ConsumerGroupHeartbeat is answered, not
where ApiVersions merely lists it: Apache Kafka 3.7 to 3.9 list it and answer UNSUPPORTED_VERSION
(seen on 3.9.2: the KIP-1094 Java copier never started and its check ended an ERROR after 30 s)."""

from __future__ import annotations

import pytest

from harness.clients.transactions import consumer_protocol_probe_body
from harness.protocol.codec import decode, encode
from harness.protocol.spec import load_specs
from harness.scenarios.kip1319_clients import consumer_protocol_lacking

SPECS = load_specs("4.4.0")
RESPONSE = SPECS.response("ConsumerGroupHeartbeat")

# ConsumerGroupHeartbeatResponse v0 as 3.7-3.9's KafkaApis answers it with the new group coordinator
# off (`getErrorResponse(Errors.UNSUPPORTED_VERSION.exception)`): ThrottleTimeMs 0, ErrorCode 35, null
# ErrorMessage and MemberId, MemberEpoch 0, HeartbeatIntervalMs 0, null Assignment, no tags.
OFF_3_9 = bytes.fromhex("00000000" "0023" "00" "00" "00000000" "00000000" "ff" "00")
# 4.x's coordinator, asked to let a member it never had leave a group it does not have: GROUP_ID_NOT_FOUND.
SERVED_4_X = bytes.fromhex("00000000" "0045" "00" "00" "00000000" "00000000" "ff" "00")


def test_a_listed_heartbeat_answered_unsupported_version_is_no_consumer_protocol() -> None:
    lacking = consumer_protocol_lacking("127.0.0.1:9092", (0, 0), decode(RESPONSE, 0, OFF_3_9))
    assert lacking is not None
    assert "advertises ConsumerGroupHeartbeat v0-0 but answers" in lacking
    assert "UNSUPPORTED_VERSION" in lacking


def test_a_heartbeat_answered_with_a_group_error_is_the_protocol_served() -> None:
    assert consumer_protocol_lacking("127.0.0.1:9092", (0, 1), decode(RESPONSE, 0, SERVED_4_X)) is None


def test_an_unlisted_heartbeat_is_no_consumer_protocol_without_asking() -> None:
    lacking = consumer_protocol_lacking("127.0.0.1:9092", None, None)
    assert lacking == "127.0.0.1:9092 advertises no ConsumerGroupHeartbeat"


@pytest.mark.parametrize("version", [0, 1])
def test_the_probe_is_a_leave_every_version_encodes(version: int) -> None:
    """v0 (3.7 to 4.0) has no SubscribedTopicRegex: the probe sent to 3.9.2 was refused by the codec."""
    request = SPECS.request("ConsumerGroupHeartbeat")
    sent = decode(request, version, encode(request, version, consumer_protocol_probe_body("g", "m" * 22)))
    assert (sent["GroupId"], sent["MemberId"], sent["MemberEpoch"]) == ("g", "m" * 22, -1)
    assert sent["SubscribedTopicNames"] is None and sent["TopicPartitions"] is None
