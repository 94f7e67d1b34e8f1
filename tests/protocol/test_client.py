"""The raw client against a fake broker on 127.0.0.1: negotiation, deadlines, SASL, broken peers."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from harness.protocol.client import RawClient
from harness.protocol.codec import decode_request, encode_response
from harness.protocol.exceptions import AuthenticationFailed, ConnectionFailed, ProtocolError, RequestTimeout
from harness.protocol.spec import ApiSpec, load_specs

SPECS = load_specs("4.4.0")
UNSUPPORTED_VERSION = 35

# What a handler may answer: a body dict, a body's bytes, or one of these.
SILENCE = object()  # read the request, never answer
HANG_UP = object()  # close the connection
Handler = Callable[[ApiSpec, int, dict[str, Any]], Any]


class FakeBroker:
    """Decodes each request with the codec and answers what the handler returns."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests: list[tuple[str, int, dict[str, Any]]] = []
        self.correlation_offset = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self.server.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:  # closed by close()
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = conn.recv(n - len(out))
            if not chunk:
                raise ConnectionError
            out += chunk
        return out

    def _connection(self, conn: socket.socket) -> None:
        with conn:
            try:
                while True:
                    (size,) = struct.unpack(">i", self._read(conn, 4))
                    req = decode_request(SPECS, self._read(conn, size))
                    self.requests.append((req.api.name, req.version, req.body))
                    answer = self.handler(req.api, req.version, req.body)
                    if answer is SILENCE:
                        time.sleep(2)
                        return
                    if answer is HANG_UP:
                        return
                    if answer is None:
                        continue
                    cid = req.header["CorrelationId"] + self.correlation_offset
                    if isinstance(answer, bytes):  # a recorded body, sent as it is after a v0 header
                        payload = struct.pack(">i", cid) + answer
                    else:
                        version = answer.pop("_version", req.version)
                        payload = encode_response(req.api, version, {"CorrelationId": cid}, answer)
                    conn.sendall(struct.pack(">i", len(payload)) + payload)
            except (ConnectionError, OSError):
                return

    def close(self) -> None:
        self._stop.set()
        self.server.close()
        self._thread.join(2)


API_KEYS = [
    {"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3},
    {"ApiKey": 3, "MinVersion": 0, "MaxVersion": 12},
    {"ApiKey": 0, "MinVersion": 3, "MaxVersion": 11},
    {"ApiKey": 17, "MinVersion": 0, "MaxVersion": 1},
    {"ApiKey": 36, "MinVersion": 0, "MaxVersion": 2},
]


def default_handler(api: ApiSpec, version: int, body: dict[str, Any]) -> Any:
    if api.name == "ApiVersions":
        if version > 3:
            # KIP-511: too new a version gets UNSUPPORTED_VERSION, written as v0, with our range.
            return {"_version": 0, "ErrorCode": UNSUPPORTED_VERSION, "ApiKeys": API_KEYS}
        return {"ErrorCode": 0, "ApiKeys": API_KEYS}
    if api.name == "Metadata":
        topics = body["Topics"] or []
        if topics and topics[0]["Name"] == "slow":
            return SILENCE
        if topics and topics[0]["Name"] == "hang-up":
            return HANG_UP
        return {"Brokers": [{"NodeId": 1, "Host": "127.0.0.1", "Port": 1}], "ClusterId": "c", "Topics": []}
    if api.name == "SaslHandshake":
        ok = body["Mechanism"] == "PLAIN"
        return {"ErrorCode": 0 if ok else 33, "Mechanisms": ["PLAIN"]}
    if api.name == "SaslAuthenticate":
        ok = body["AuthBytes"] == b"\0alice\0secret"
        return {"ErrorCode": 0 if ok else 58, "ErrorMessage": None if ok else "Invalid username or password"}
    if api.name == "Produce":
        return None if body["Acks"] == 0 else {"Responses": []}
    raise AssertionError(f"unexpected {api.name}")


@pytest.fixture
def broker() -> Iterator[FakeBroker]:
    b = FakeBroker(default_handler)
    yield b
    b.close()


def test_negotiation_falls_back_to_the_brokers_api_versions(broker: FakeBroker) -> None:
    with RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5) as c:
        top = SPECS.api("ApiVersions").valid_versions.high
        assert [r[:2] for r in broker.requests] == [("ApiVersions", top), ("ApiVersions", 3)]
        assert broker.requests[0][2]["ClientSoftwareName"] == "kcts"
        assert c.max_version("Metadata") == 12 and c.max_version("ApiVersions") == 3
        assert c.supports("Produce", 3) and not c.supports("Produce", 12)
        with pytest.raises(ProtocolError, match=r"Fetch \(api 1\) is not supported by this target"):
            c.max_version("Fetch")
        md = c.send("Metadata", 12, {"Topics": None})
        assert md["ClusterId"] == "c" and md["Brokers"][0]["Host"] == "127.0.0.1"
        assert (
            c.last is not None and "MetadataResponse v12" in c.last.dump() and "-> MetadataRequest v12" in c.last.dump()
        )
    assert c.closed


def test_a_timeout_names_the_broker_the_api_and_the_version(broker: FakeBroker) -> None:
    c = RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5)
    t0 = time.monotonic()
    with pytest.raises(
        RequestTimeout, match=rf"127\.0\.0\.1:{broker.port}: no response to Metadata v12 .* within 0\.3s"
    ):
        c.send("Metadata", 12, {"Topics": [{"Name": "slow"}]}, timeout=0.3)
    assert time.monotonic() - t0 < 2
    assert c.closed  # a late answer must not be taken for the next call's
    with pytest.raises(ConnectionFailed, match="closed"):
        c.send("Metadata", 12, {})


def test_a_broker_that_hangs_up(broker: FakeBroker) -> None:
    c = RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5)
    with pytest.raises(ConnectionFailed, match="closed the connection while answering Metadata v12"):
        c.send("Metadata", 12, {"Topics": [{"Name": "hang-up"}]})


def test_a_wrong_correlation_id_is_an_error(broker: FakeBroker) -> None:
    c = RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5)
    broker.correlation_offset = 1000
    with pytest.raises(ProtocolError, match="correlation id"):
        c.send("Metadata", 12, {})
    assert c.closed


def test_sasl_plain(broker: FakeBroker) -> None:
    with RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5, sasl_plain=("alice", "secret")):
        assert [r[0] for r in broker.requests][-2:] == ["SaslHandshake", "SaslAuthenticate"]
    with pytest.raises(AuthenticationFailed, match=r"SASL_AUTHENTICATION_FAILED.*Invalid username"):
        RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5, sasl_plain=("alice", "wrong"))


def test_produce_with_acks_0_expects_no_response(broker: FakeBroker) -> None:
    with RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5) as c:
        body = {"Acks": 0, "TimeoutMs": 1, "TopicData": []}
        assert c.send("Produce", 9, body) == {}
        assert c.send("Produce", 9, {**body, "Acks": 1}) == {"Responses": [], "ThrottleTimeMs": 0}


def test_send_raw_and_no_negotiation(broker: FakeBroker) -> None:
    with RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5, negotiate=False) as c:
        assert broker.requests == []
        raw = c.send_raw("Metadata", 12, bytes.fromhex("00010000"))
        assert len(raw) > 8


def test_connection_refused_names_the_address() -> None:
    s = socket.create_server(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ConnectionFailed, match=rf"127\.0\.0\.1:{port}"):
        RawClient.connect("127.0.0.1", port, spec=SPECS, timeout=2)


# librdkafka 2.16.0's mock cluster (rd_kafka_mock) answering ApiVersions v4, recorded on 127.0.0.1:
# correlation id 7, UNSUPPORTED_VERSION (35), a one-byte count (1), ApiVersions v0-2, ThrottleTimeMs 0.
# 17 bytes that are neither a v4 nor a v0 ApiVersionsResponse (src/rdkafka_mock_handlers.c,
# rd_kafka_mock_handle_ApiVersion: "FIXME: uvarint", no tag buffers).
MOCK_V4_ANSWER = bytes.fromhex("0000000700230100120000000200000000")


def test_an_api_versions_error_in_no_known_layout_is_read_by_its_error_code() -> None:
    from harness.protocol.client import api_versions_error

    header, body = api_versions_error(MOCK_V4_ANSWER)
    assert header == {"CorrelationId": 7}
    assert body == {"ErrorCode": 35, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 2}]}
    # An error code and nothing readable after it: no versions listed, so v0.
    assert api_versions_error(bytes.fromhex("0000000700230102")) == ({"CorrelationId": 7},
                                                                    {"ErrorCode": 35, "ApiKeys": []})
    # No error code: a success answer that does not decode is corrupt, not an error answer.
    assert api_versions_error(bytes.fromhex("000000070000")) is None
    assert api_versions_error(bytes.fromhex("0000")) is None


def mock_cluster(api: ApiSpec, version: int, body: dict[str, Any]) -> Any:
    """librdkafka 2.16.0's mock: its error answer to an ApiVersions above v2 as recorded, v2 answered."""
    if api.name == "ApiVersions" and version > 2:
        return MOCK_V4_ANSWER[4:]  # the body as recorded, under this request's correlation id
    if api.name == "ApiVersions":
        return {"ErrorCode": 0, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 2},
                                            {"ApiKey": 3, "MinVersion": 0, "MaxVersion": 12}]}
    return default_handler(api, version, body)


def test_negotiation_falls_back_to_the_version_an_undecodable_error_answer_lists(broker: FakeBroker) -> None:
    """librdkafka's mock cluster: its error answer to v4 lists ApiVersions v0-2 in a layout of its own;
    kcts reads the error code, retries at v2 and negotiates, rather than taking it for a dead listener."""
    broker.handler = mock_cluster
    with RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5) as c:
        top = SPECS.api("ApiVersions").valid_versions.high
        assert [r[:2] for r in broker.requests] == [("ApiVersions", top), ("ApiVersions", 2)]
        assert c.max_version("Metadata") == 12 and c.max_version("ApiVersions") == 2
        # Read at the version asked, as the Java client reads it, the ApiVersions entry's bytes are a
        # ThrottleTimeMs of 1,179,648 ms (0x00120000): what Java kafka-clients 4.4.0 honoured, live.
        assert c.error_answer == (top, 1179648)


def test_one_zero_byte_after_a_flexible_answer_is_read_past_and_shown(broker: FakeBroker) -> None:
    """librdkafka's mock cluster writes Metadata v9+'s last empty tag buffer twice (its handler, then
    rd_kafka_mock_connection_send_response); clients read past it, and so does kcts, saying so."""
    from harness.protocol.codec import encode_response

    api = SPECS.api("Metadata")
    body = {"Brokers": [{"NodeId": 1, "Host": "127.0.0.1", "Port": 1}], "ClusterId": "c", "Topics": []}
    frame = encode_response(api, 12, {"CorrelationId": 0}, body)

    def padded(a: ApiSpec, version: int, req: dict[str, Any]) -> Any:
        if a.name == "Metadata":
            return frame[4:] + b"\0" + (b"\0" if req["Topics"] else b"")  # two bytes when a topic is named
        return default_handler(a, version, req)

    broker.handler = padded
    with RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5) as c:
        assert c.send("Metadata", 12, {"Topics": None})["ClusterId"] == "c"
        assert c.last is not None and c.last.trailing == 1 and "1 trailing zero byte" in c.last.dump()
    with RawClient.connect("127.0.0.1", broker.port, spec=SPECS, timeout=5) as c:
        with pytest.raises(ProtocolError, match="2 trailing bytes"):
            c.send("Metadata", 12, {"Topics": [{"Name": "t"}]})
