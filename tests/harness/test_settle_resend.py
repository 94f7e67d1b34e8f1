"""A setup request that timed out under load is sent again, opted in; a judged one never is.

`transactions.settle` used to turn one RequestTimeout of a coordinator into `Unrecoverable` at once,
so a single slow answer under load made the scene an ERROR. A caller preparing the scene now opts
in (`resend_on`), and on a reconnecting client the next attempt goes out on a new connection; a
caller whose answer a check judges does not, and still ends at once. No Kafka broker: a stand-in
on 127.0.0.1 that reads a request and never answers it, as a coordinator slow under load.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from harness.clients import transactions as tx
from harness.errors import TargetRefused, Unrecoverable
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.codec import decode_request
from harness.protocol.spec import load_specs
from tests.proxy.fake_broker import ADVERTISED, FakeBroker

SPECS = load_specs("4.4.0")
SILENT = "silent"  # a request read and never answered: the client times out and closes the connection
END_TXN = 26
FIND_COORDINATOR = 10
TIMEOUT = 1.0  # each request's deadline on the client (connecting and ApiVersions have 5 s, as the machine is shared)


class SlowCoordinator(FakeBroker):
    """Answers ApiVersions, FindCoordinator and EndTxn. The requests of `api` meet `script` in turn:
    SILENT, or an error code answered; once it is spent, ErrorCode 0."""

    def __init__(self, api: int, script: list[int | str]) -> None:
        super().__init__(SPECS, 1)
        self.api = api
        self.script = list(script)
        self.asked = 0  # requests of `api` read
        self.next: int | str = 0  # what the last of them met
        self.connections = 0
        self._lock = threading.Lock()  # each connection is served on a thread of its own

    def serve(self, sock: socket.socket) -> None:
        with self._lock:
            self.connections += 1
        super().serve(sock)

    def respond(self, sock: socket.socket, frame: bytes) -> bool:
        if decode_request(SPECS, frame).api.key == self.api:
            with self._lock:
                self.asked += 1
                self.next = self.script.pop(0) if self.script else 0
            if self.next == SILENT:
                sock.recv(1)  # until the client gives up and closes
                return False
        return super().respond(sock, frame)

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        code = self.next if key == self.api else 0
        if key == 18:
            keys = sorted({**ADVERTISED, END_TXN: (0, 5)}.items())
            return {"ErrorCode": 0, "ThrottleTimeMs": 0,
                    "ApiKeys": [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, (lo, hi) in keys]}
        if key == FIND_COORDINATOR:
            return {"ThrottleTimeMs": 0, "Coordinators": [
                {"Key": k, "NodeId": 1, "Host": "127.0.0.1", "Port": self.address[1], "ErrorCode": code,
                 "ErrorMessage": None} for k in body["CoordinatorKeys"]]}
        if key == END_TXN:
            return {"ThrottleTimeMs": 0, "ErrorCode": code, "ProducerId": body["ProducerId"],
                    "ProducerEpoch": body["ProducerEpoch"]}
        return super().answer(key, version, body)


@pytest.fixture
def coordinator_once_silent() -> Iterator[SlowCoordinator]:
    with SlowCoordinator(FIND_COORDINATOR, [SILENT]) as b:
        yield b


def _client(broker: SlowCoordinator, reconnect: bool) -> RawClient:
    client = RawClient.connect(*broker.address, spec=SPECS, timeout=5, reconnect=reconnect)
    client.timeout = TIMEOUT  # the requests' own; a new connection negotiates with the 5 s it was made with
    return client


def _find(client: RawClient) -> tx.Answer:
    return client.exchange("FindCoordinator", 4, {"KeyType": tx.GROUP_KEY, "CoordinatorKeys": ["g"]})


def test_opted_in_a_timed_out_request_is_sent_again_on_a_new_connection(
        coordinator_once_silent: SlowCoordinator) -> None:
    with _client(coordinator_once_silent, reconnect=True) as client:
        answer = tx.settle(lambda: _find(client), tx.COORDINATOR_TRANSIENT, "FindCoordinator", timeout=10,
                           resend_on=lambda: client)
        assert isinstance(answer, tx.Exchange) and answer.response["Coordinators"][0]["NodeId"] == 1
        assert client.reconnects == 1
    assert (coordinator_once_silent.asked, coordinator_once_silent.connections) == (2, 2)


def test_without_opt_in_a_timeout_is_unrecoverable_at_once(coordinator_once_silent: SlowCoordinator) -> None:
    """A judged request: sent again, a write that landed may be answered otherwise; the client reconnecting
    changes nothing."""
    started = time.monotonic()
    with _client(coordinator_once_silent, reconnect=True) as client:
        with pytest.raises(Unrecoverable, match=r"^FindCoordinator: .*no response to FindCoordinator"):
            tx.settle(lambda: _find(client), tx.COORDINATOR_TRANSIENT, "FindCoordinator", timeout=10)
    assert time.monotonic() - started < 5  # not waited out until settle's deadline
    assert (coordinator_once_silent.asked, coordinator_once_silent.connections) == (1, 1)


def test_opted_in_on_a_client_that_does_not_reconnect_a_timeout_is_unrecoverable_at_once(
        coordinator_once_silent: SlowCoordinator) -> None:
    """Every later attempt would fail on the closed connection until the deadline."""
    with _client(coordinator_once_silent, reconnect=False) as client:
        with pytest.raises(Unrecoverable, match="no response to FindCoordinator"):
            tx.settle(lambda: _find(client), tx.COORDINATOR_TRANSIENT, "FindCoordinator", timeout=10,
                      resend_on=lambda: client)
    assert coordinator_once_silent.asked == 1


def test_the_coordinator_lookup_is_a_setup_call_asked_again(coordinator_once_silent: SlowCoordinator) -> None:
    with _client(coordinator_once_silent, reconnect=True) as client:
        assert tx.coordinator_id(client, "g", tx.GROUP_KEY) == 1
    assert coordinator_once_silent.asked == 2


@pytest.mark.parametrize("follows", [False, True], ids=["fixed-coordinator", "coordinator-found-again"])
def test_end_txn_is_sent_again_and_waits_out_the_first_still_completing(follows: bool) -> None:
    """The first EndTxn landed and its answer was lost: the one sent again meets CONCURRENT_TRANSACTIONS
    while the markers are written, then NONE (Kafka's coordinator; see `Transaction.end`)."""
    with SlowCoordinator(END_TXN, [SILENT, errors.CONCURRENT_TRANSACTIONS]) as broker, \
            _client(broker, reconnect=True) as client:
        txn = tx.Transaction("t", 7, 3, client, (lambda: client) if follows else None)
        ex = txn.end(commit=True)
        assert ex.response["ErrorCode"] == 0 and client.reconnects == 1
    assert broker.asked == 3


def test_the_deadline_shows_the_last_answer_and_the_timeout_after_it() -> None:
    with SlowCoordinator(END_TXN, [errors.COORDINATOR_LOAD_IN_PROGRESS] + [SILENT] * 20) as broker, \
            _client(broker, reconnect=True) as client:
        txn = tx.Transaction("t", 7, 3, client)
        with pytest.raises(TargetRefused) as raised:
            tx.settle(lambda: client.exchange("EndTxn", 5, {**txn.producer, "Committed": True}),
                      tx.TRANSACTION_TRANSIENT, "EndTxn", timeout=1.5, resend_on=lambda: client)
    message = str(raised.value)
    assert "EndTxn: last answer" in message and "ErrorCode: 14 COORDINATOR_LOAD_IN_PROGRESS" in message, message
    assert "\nthen: " in message and "no response to EndTxn v5" in message, message
    assert broker.asked >= 2
