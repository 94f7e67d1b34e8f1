"""A raw connection kept across a wait's attempts: one attempt timed out or hung up on must not doom
the rest (the soak's ElectLeaders wait retried on its closed connection for 60 s, aa9abde).

`RawClient.connect(reconnect=True)` sends a request that follows a close on a new connection; the
request that met the close still fails as it did. No Kafka broker: a socket server on 127.0.0.1
that stays silent on, or hangs up, the first connection's first Metadata.

Only the silent Metadata is asked with a short timeout (QUICK): the new connection's ApiVersions and
Metadata get the client's own (ANSWERED), as in the gate these tests run in the idle class beside the
conformance run, where a live answer may take longer than QUICK, and a second timeout would open a
third connection.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest

from harness.clients.raw import RawConnector, again_on_timeout
from harness.cluster.base import Cluster
from harness.protocol.client import RawClient
from harness.protocol.codec import decode_request
from harness.protocol.exceptions import ConnectionFailed, RequestTimeout
from harness.protocol.spec import load_specs
from harness.waiting import WaitTimeout, wait_until
from tests.proxy.fake_broker import FakeBroker

SPECS = load_specs("4.4.0")
API_KEYS = [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}, {"ApiKey": 3, "MinVersion": 0, "MaxVersion": 12}]
QUICK = 0.3  # the silent Metadata's timeout
ANSWERED = 10.0  # every other request's
METADATA = {"Brokers": [{"NodeId": 1, "Host": "127.0.0.1", "Port": 1}], "ClusterId": "c", "Topics": []}


class OnceBroken(FakeBroker):
    """Answers ApiVersions and Metadata; on the first connection only, its first Metadata is met with
    `first` ("silent": read and never answered; "hang up": the connection closed)."""

    def __init__(self, first: str) -> None:
        super().__init__(SPECS, 1)
        self.first = first
        self.connections = 0
        self.port = self.address[1]
        self._first_connection: socket.socket | None = None
        self._lock = threading.Lock()  # each connection is served on a thread of its own

    def serve(self, sock: socket.socket) -> None:
        with self._lock:
            self.connections += 1
            if self.connections == 1:
                self._first_connection = sock
        super().serve(sock)

    def respond(self, sock: socket.socket, frame: bytes) -> bool:
        if sock is self._first_connection and decode_request(SPECS, frame).api.name == "Metadata":
            if self.first == "silent":
                sock.recv(1)  # until the client gives up and closes
            return False  # hang up (or, silent, the client has)
        return super().respond(sock, frame)

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        return {"ErrorCode": 0, "ApiKeys": API_KEYS} if key == 18 else METADATA


@pytest.fixture
def silent_once() -> Iterator[OnceBroken]:
    with OnceBroken("silent") as b:
        yield b


@pytest.fixture
def hangs_up_once() -> Iterator[OnceBroken]:
    with OnceBroken("hang up") as b:
        yield b


def _metadata(client: RawClient, timeout: float | None = None) -> dict[str, object]:
    return client.send("Metadata", 12, {"Topics": [], "AllowAutoTopicCreation": False}, timeout=timeout)


def _metadata_quick_once(client: RawClient) -> Callable[[], dict[str, object]]:
    """Metadata, the first time with the QUICK timeout (it meets the silent connection), then with the
    client's own."""
    timeouts = iter([QUICK])
    return lambda: _metadata(client, next(timeouts, None))


def test_without_reconnect_a_wait_retries_on_the_closed_connection_until_its_deadline(silent_once: OnceBroken) -> None:
    """The defect, as the default keeps it (a check sees every close): one timeout, then every attempt
    fails on the closed connection."""
    with RawClient.connect("127.0.0.1", silent_once.port, spec=SPECS, timeout=0.3) as client:
        with pytest.raises(WaitTimeout, match="connection is closed"):
            wait_until(lambda: _metadata(client), 1.5, lambda: "Metadata", interval=0.05)
    assert silent_once.connections == 1


def test_a_wait_on_a_reconnecting_client_gets_its_answer_after_a_timed_out_attempt(silent_once: OnceBroken) -> None:
    with RawClient.connect("127.0.0.1", silent_once.port, spec=SPECS, timeout=ANSWERED, reconnect=True) as client:
        answer = wait_until(_metadata_quick_once(client), 2 * ANSWERED, lambda: "Metadata", interval=0.05)
        assert answer["ClusterId"] == "c"
        assert client.reconnects == 1 and not client.closed
    assert silent_once.connections == 2


def test_the_request_that_met_the_close_still_fails_as_it_did(hangs_up_once: OnceBroken) -> None:
    """The close stays visible to the request it ended; only the next goes out on a new connection."""
    with RawClient.connect("127.0.0.1", hangs_up_once.port, spec=SPECS, timeout=2, reconnect=True) as client:
        with pytest.raises(ConnectionFailed, match="closed the connection"):
            _metadata(client)
        assert client.closed and client.reconnects == 0
        assert _metadata(client)["ClusterId"] == "c"
        assert client.reconnects == 1
        assert client.broker_versions[3] == (0, 12)  # negotiated again on the new connection


def test_again_on_timeout_reads_again_on_a_new_connection(silent_once: OnceBroken) -> None:
    with RawClient.connect("127.0.0.1", silent_once.port, spec=SPECS, timeout=ANSWERED, reconnect=True) as client:
        assert again_on_timeout(_metadata_quick_once(client))["ClusterId"] == "c"
        assert client.reconnects == 1


def test_again_on_timeout_gives_up_after_its_tries(silent_once: OnceBroken) -> None:
    with RawClient.connect("127.0.0.1", silent_once.port, spec=SPECS, timeout=0.3) as client:
        with pytest.raises(RequestTimeout):
            again_on_timeout(lambda: _metadata(client), tries=1)


def test_again_on_timeout_passes_a_hang_up_through(hangs_up_once: OnceBroken) -> None:
    """A broker closing the connection is its answer, never read again."""
    with RawClient.connect("127.0.0.1", hangs_up_once.port, spec=SPECS, timeout=2, reconnect=True) as client:
        with pytest.raises(ConnectionFailed):
            again_on_timeout(lambda: _metadata(client))


def test_the_scenes_connector_hands_the_option_on(silent_once: OnceBroken) -> None:
    """The scenes ask `raw(broker, reconnect=True)` of a RawConnector (network splits, read committed, KIP-320)."""
    address = ("127.0.0.1", silent_once.port)
    cluster: Any = SimpleNamespace(
        broker_ids=[1], probe_address=lambda b: address, broker_address=lambda b: address,
        client_config=lambda: {}, target=SimpleNamespace(protocol_specs=SPECS, fetch_max_wait_ms=0))
    with RawConnector(cast(Cluster, cluster)) as raw:
        client = raw(1, reconnect=True, timeout=ANSWERED)
        answer = wait_until(_metadata_quick_once(client), 2 * ANSWERED, lambda: "Metadata", interval=0.05)
        assert answer["ClusterId"] == "c"
        assert client.reconnects == 1
    assert client.closed
