"""An admin request sent while no broker was unfenced is answered once one is (harness.confluent.admin_result).

Apache Kafka names only unfenced brokers in Metadata, and no controller (-1) when there is none: a
one-broker cluster's broker fenced for a missed session timeout on a loaded machine. librdkafka sends
CreateTopics, the ACLs and ElectLeaders to the controller its metadata names, and looks it up again
only on a broker state change; so a request made in that second waited, unsent, for its whole timeout
(a gate run's SASL side cluster: CreateTopics unanswered for 30 s, the topic never made, two kip1319
checks refused). The stand-in broker below answers Metadata as a fenced broker for its first second,
then as an unfenced one; the client is confluent-kafka's real AdminClient.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from harness import confluent
from harness.protocol.codec import encode_response
from harness.protocol.spec import load_specs
from tests.proxy.fake_broker import ADVERTISED, FakeBroker

FENCED_FOR = 1.0
METADATA, CREATE_TOPICS = 3, 19


class FencedAtFirst(FakeBroker):
    """Metadata names no broker and no controller for `FENCED_FOR` s, then itself as both; CreateTopics
    creates. `created` is when CreateTopics came, after the fence (None: it never came)."""

    def __init__(self) -> None:
        super().__init__(load_specs("4.4.0"), 1)
        self.unfenced_at = time.monotonic() + FENCED_FOR
        self.created: float | None = None

    def respond(self, sock: socket.socket, frame: bytes) -> bool:
        key, version, correlation = struct.unpack_from(">hhi", frame, 0)
        if key != METADATA:
            return super().respond(sock, frame)
        # Not decoded: librdkafka's all-topics Metadata (v9 on) leaves 3 bytes of its count's placeholder
        # on the wire (confluentinc/librdkafka#5049), which Apache Kafka reads past; this stand-in reads
        # strictly, and its answer does not depend on the request.
        api = self.specs.api(METADATA)
        out = encode_response(api, version, {"CorrelationId": correlation}, self._metadata())
        sock.sendall(struct.pack(">i", len(out)) + out)
        return True

    def _metadata(self) -> dict[str, Any]:
        fenced = time.monotonic() < self.unfenced_at
        brokers = [] if fenced else [{"NodeId": 1, "Host": self.address[0], "Port": self.address[1], "Rack": None}]
        return {"ThrottleTimeMs": 0, "Brokers": brokers, "ClusterId": "fenced-at-first",
                "ControllerId": -1 if fenced else 1, "Topics": []}

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key == 18:
            advertised = {**ADVERTISED, METADATA: (0, 12), CREATE_TOPICS: (0, 7)}
            keys = [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, (lo, hi) in sorted(advertised.items())]
            return {"ErrorCode": 0, "ApiKeys": keys, "ThrottleTimeMs": 0}
        if key == CREATE_TOPICS:
            self.created = time.monotonic() - self.unfenced_at
            return {"ThrottleTimeMs": 0, "Topics": [
                {"Name": t["Name"], "TopicId": None, "ErrorCode": 0, "ErrorMessage": None, "NumPartitions": 1,
                 "ReplicationFactor": 1, "Configs": []} for t in body["Topics"]]}
        return super().answer(key, version, body)


@pytest.fixture
def broker() -> Iterator[FencedAtFirst]:
    with FencedAtFirst() as b:
        yield b


@pytest.fixture
def admin(broker: FencedAtFirst) -> Iterator[AdminClient]:
    with confluent.admin({"bootstrap.servers": "{}:{}".format(*broker.address)}) as a:
        yield a


def test_librdkafka_alone_waits_out_the_request_timeout(broker: FencedAtFirst, admin: AdminClient) -> None:
    """Why admin_result asks for metadata: without it the request is never sent. If this fails,
    librdkafka looks the controller up again by itself, and admin_result's lookups may go."""
    future = admin.create_topics([NewTopic("t", 1, 1)], request_timeout=FENCED_FOR + 3)["t"]
    with pytest.raises(KafkaException, match="waiting for controller"):
        future.result(timeout=FENCED_FOR + 10)
    assert broker.created is None, f"CreateTopics came {broker.created:.1f} s after the fence ended"


def test_a_request_made_while_no_broker_was_unfenced_is_answered_once_one_is(
    broker: FencedAtFirst, admin: AdminClient
) -> None:
    start = time.monotonic()
    confluent.admin_result(admin, admin.create_topics([NewTopic("t", 1, 1)], request_timeout=30)["t"], 20)
    took = time.monotonic() - start
    assert broker.created is not None and broker.created < confluent.LOOKUP_EVERY + 2, (
        f"CreateTopics came {broker.created} s after the fence ended")
    assert took < FENCED_FOR + confluent.LOOKUP_EVERY + 2, f"answered after {took:.1f} s"
