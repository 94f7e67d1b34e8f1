"""The recording: lazy decoding of kept bytes, error codes, trimming of bulky bodies, queries."""

from __future__ import annotations

from harness.protocol.codec import encode, encode_request_header, encode_response
from harness.protocol.spec import SpecSet
from harness.proxy.recorder import ANSWERED, PENDING, ProxiedExchange, Recording
from tests.proxy.recorded import recorded


def _exchange(specs: SpecSet, api: str, version: int, request: dict[str, object], response: bytes) -> ProxiedExchange:
    a = specs.api(api)
    header = encode_request_header(a, version, {"CorrelationId": 9, "ClientId": "c"})
    frame = header + encode(a.request, version, request)
    return ProxiedExchange(specs, "broker 1", a.key, version, 9, "c", 0.0, request_bytes=frame, response_bytes=response,
                    latency=0.002, outcome=ANSWERED)


def test_error_codes_and_bodies_are_decoded_from_the_kept_bytes(specs: SpecSet) -> None:
    api = specs.api("TxnOffsetCommit")
    response = encode_response(api, 5, {"CorrelationId": 9}, {
        "ThrottleTimeMs": 0,
        "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0},
                                               {"PartitionIndex": 1, "ErrorCode": 22}]}],
    })
    request = {"TransactionalId": "x", "GroupId": "g", "ProducerId": 1, "ProducerEpoch": 0,
               "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 5,
                                                        "CommittedMetadata": None}]}]}
    ex = _exchange(specs, "TxnOffsetCommit", 5, request, response)
    assert ex.api == "TxnOffsetCommit"
    assert ex.error_codes == [0, 22]
    assert ex.request is not None and ex.request["GroupId"] == "g"
    text = ex.dump()
    assert "TxnOffsetCommit v5 correlation 9" in text and "22 ILLEGAL_GENERATION" in text and "GroupId: 'g'" in text


def test_api_versions_answered_at_v0_are_still_read(specs: SpecSet) -> None:
    """KIP-511: a broker answers an ApiVersions version it does not know with a v0 body."""
    api = specs.api("ApiVersions")
    v0 = encode_response(api, 0, {"CorrelationId": 9}, {"ErrorCode": 35, "ApiKeys": [
        {"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}]})
    ex = _exchange(specs, "ApiVersions", 4, {"ClientSoftwareName": "a", "ClientSoftwareVersion": "1"}, v0)
    assert ex.error_codes == [35]


def test_recording_filters_by_api_and_version_and_trims_bulky_bodies(specs: SpecSet) -> None:
    recording = Recording(specs, keep_body_bytes=100)
    metadata = _exchange(specs, "Metadata", 12, {}, recorded("metadata-v12"))
    small = _exchange(specs, "TxnOffsetCommit", 5, {}, b"")
    small.response_bytes = None
    for ex in (metadata, small):
        recording.add(ex)
        recording.trim(ex)
    assert len(recording) == 2
    assert recording.exchanges("Metadata") == [metadata] and recording.exchanges(28) == [small]
    assert recording.exchanges("Metadata", version=13) == []
    assert recording.versions("TxnOffsetCommit") == [5]
    assert metadata.response_bytes is None, "223 bytes > keep_body_bytes=100"
    assert metadata.request_bytes is not None and metadata.error_codes == []
    assert "2 exchanges" in recording.summary()
    found = recording.wait_for(lambda ex: len(ex) == 1, 1.0, "one Metadata", api="Metadata")
    assert found == [metadata]
    recording.clear()
    assert len(recording) == 0


def test_an_exchange_read_while_pending_shows_its_answer_once_it_came(specs: SpecSet) -> None:
    """A check polls the recording while the client runs: a response read before it arrived must not
    stay None (the reset-epoch check once missed a ListOffsets answer so)."""
    api = specs.api("TxnOffsetCommit")
    response = encode_response(api, 5, {"CorrelationId": 9}, {
        "ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 22}]}]})
    ex = _exchange(specs, "TxnOffsetCommit", 5, {}, response)
    ex.response_bytes, ex.outcome = None, PENDING
    assert ex.response is None and ex.error_codes == []
    ex.response_bytes, ex.outcome = response, ANSWERED
    assert ex.error_codes == [22]
