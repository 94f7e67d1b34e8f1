"""Frame parsing: the request header fields the proxy reads, and Produce's acks=0 detection."""

from __future__ import annotations

import pytest

from harness.protocol.codec import encode, encode_request_header
from harness.protocol.spec import SpecSet
from harness.proxy.frames import (
    FrameError,
    header_length,
    parse_request_header,
    produce_expects_response,
    request_body,
    response_correlation_id,
)

# librdkafka 2.16.0's all-topics Metadata v12 (AdminClient.list_topics()), as it sent it: its Topics count
# is the null varint 0 followed by three more bytes of a 4-byte placeholder (confluentinc/librdkafka#5049).
LIBRDKAFKA_ALL_TOPICS_V12 = bytes.fromhex("0003000c00000003000772646b61666b610000000000010000")


def _request(specs: SpecSet, api: str, version: int, body: dict[str, object], client_id: str | None = "cli") -> bytes:
    a = specs.api(api)
    header = encode_request_header(a, version, {"CorrelationId": 77, "ClientId": client_id})
    return header + encode(a.request, version, body)


@pytest.mark.parametrize(("api", "version"), [("Metadata", 8), ("Metadata", 12), ("ApiVersions", 3)])
def test_header_fields_of_flexible_and_legacy_headers(specs: SpecSet, api: str, version: int) -> None:
    frame = _request(specs, api, version, {})
    header = parse_request_header(frame)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        specs.api(api).key, version, 77, "cli"
    )
    flexible = specs.api(api).request_header_version(version) >= 2
    body_start = header_length(frame, flexible)
    assert frame[body_start:] == encode(specs.api(api).request, version, {})


def test_null_client_id(specs: SpecSet) -> None:
    assert parse_request_header(_request(specs, "Metadata", 12, {}, client_id=None)).client_id is None


def test_header_tagged_fields_are_skipped(specs: SpecSet) -> None:
    a = specs.api("Metadata")
    tagged = encode_request_header(a, 12, {"CorrelationId": 5, "ClientId": "c", "_unknown_tagged_fields": {3: b"xyz"}})
    body = encode(a.request, 12, {})
    assert header_length(tagged + body, flexible=True) == len(tagged)


def test_truncated_frames_are_refused() -> None:
    with pytest.raises(FrameError):
        parse_request_header(b"\x00\x03\x00")
    with pytest.raises(FrameError):
        parse_request_header(b"\x00\x03\x00\x0c\x00\x00\x00\x01\x00\x09abc")  # client id of 9, 3 given
    with pytest.raises(FrameError):
        response_correlation_id(b"\x00\x01")


def test_response_correlation_id() -> None:
    assert response_correlation_id(b"\x00\x00\x01\x02rest") == 258


@pytest.mark.parametrize("version", [3, 8, 9, 12, 13])
@pytest.mark.parametrize("transactional_id", [None, "txn-1"])
@pytest.mark.parametrize("acks", [0, 1, -1])
def test_produce_acks_decides_whether_a_response_comes(
    specs: SpecSet, version: int, transactional_id: str | None, acks: int
) -> None:
    frame = _request(specs, "Produce", version, {"TransactionalId": transactional_id, "Acks": acks, "TimeoutMs": 1000})
    assert produce_expects_response(frame, parse_request_header(frame)) is (acks != 0)


def test_other_requests_always_expect_a_response(specs: SpecSet) -> None:
    frame = _request(specs, "Metadata", 12, {})
    assert produce_expects_response(frame, parse_request_header(frame))


def test_a_request_is_read_as_the_broker_reads_it_bytes_after_the_message_included(specs: SpecSet) -> None:
    """Apache Kafka reads past what follows the message (librdkafka's list_topics works against it), and
    so does the proxy: its rules and its recording get the body, not an error."""
    frame = LIBRDKAFKA_ALL_TOPICS_V12
    body = request_body(specs.api("Metadata"), 12, frame, header_length(frame, flexible=True))
    assert body["Topics"] is None and body["AllowAutoTopicCreation"] is False, body
