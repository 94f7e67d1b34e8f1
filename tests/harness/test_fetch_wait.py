"""The MaxWaitMs of the harness's own Fetch requests comes from the target's profile
(`fetch_max_wait_ms`, through `RawConnector`): 0 for every target but Nisshi, whose profiles ask 500 ms
because Nisshi 0.8.1 answers a wait of 0 with no topics at all (harness/profiles/nisshi-memory.toml says
why 500). A default target's Fetches are the bytes they were before the setting (recorded at 63841a0,
tests/harness/data/fetch-requests-max-wait-0.json), and a target that answers without the partition
asked still refuses the premise (c67a83c) whatever the wait.

No broker: a stand-in on 127.0.0.1 answers ApiVersions and Fetch and keeps every Fetch frame it read.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.cluster.target import FETCH_MAX_WAIT_LIMIT_MS, TargetSpec, parse
from harness.errors import KctsError, TargetRefused
from harness.protocol.client import RawClient
from harness.protocol.codec import decode, decode_request, encode_request_header
from harness.protocol.spec import load_specs
from tests.proxy.fake_broker import FakeBroker

DATA = Path(__file__).parent / "data"
BEFORE = json.loads((DATA / "fetch-requests-max-wait-0.json").read_text())
NISSHI_EMPTY = json.loads((DATA / "nisshi-0.8.1-refusals.json").read_text())["fetch_max_wait_0"]["response"]
SPECS = load_specs("4.4.0")
FETCH = SPECS.api("Fetch")
VERSIONS = range(FETCH.valid_versions.low, FETCH.valid_versions.high + 1)
TOPIC, TID = BEFORE["topic"], uuid.UUID(BEFORE["topic_id"])
CASES = [(c["current_epoch"], c["isolation"]) for c in BEFORE["cases"]]
DEFAULT_TARGETS = ("4.4.0", "kfake", "tansu", "tansu-memory", "tansu-docker")
NISSHI = ("nisshi", "nisshi-memory", "nisshi-docker")


class StandIn(FakeBroker):
    """Answers ApiVersions (Fetch v4-v18) and every Fetch (one partition, nothing in it; or, `empty`, no
    topics at all); keeps the Fetch frames it read (header and body, no size prefix)."""

    def __init__(self, empty: bool = False) -> None:
        super().__init__(SPECS, 1)
        self.empty = empty
        self.fetches: list[bytes] = []
        self.port = self.address[1]

    def respond(self, sock: socket.socket, frame: bytes) -> bool:
        if decode_request(SPECS, frame).api.key == FETCH.key:
            self.fetches.append(frame)
        return super().respond(sock, frame)

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key == 18:
            return {"ErrorCode": 0, "ApiKeys": [
                {"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3},
                {"ApiKey": FETCH.key, "MinVersion": VERSIONS[0], "MaxVersion": VERSIONS[-1]}]}
        if key != FETCH.key:
            return super().answer(key, version, body)
        if self.empty:  # Nisshi 0.8.1's answer to MaxWaitMs 0, recorded
            return {**NISSHI_EMPTY, "Responses": []}
        (topic,) = body["Topics"]
        name = {"TopicId": topic["TopicId"]} if version >= 13 else {"Topic": topic["Topic"]}
        part = {"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 0, "LastStableOffset": 0, "Records": b""}
        return {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{**name, "Partitions": [part]}]}


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    with StandIn() as s:
        yield s


@pytest.fixture
def empty_answers() -> Iterator[StandIn]:
    with StandIn(empty=True) as s:
        yield s


def connector(target: TargetSpec, port: int) -> rr.RawConnector:
    """A RawConnector as the scenes make one, to the stand-in, for a cluster of `target`."""
    address = ("127.0.0.1", port)
    cluster: Any = SimpleNamespace(broker_ids=[1], probe_address=lambda b: address, broker_address=lambda b: address,
                                   client_config=lambda: {}, target=target)
    return rr.RawConnector(cast(Cluster, cluster))


def target(name: str) -> TargetSpec:
    """A target as `kcts run --target NAME` names it (a shipped profile's name, kfake, a release)."""
    return parse(name)


def fetch_all(client: RawClient) -> None:
    for v in VERSIONS:
        for epoch, isolation in CASES:
            rr.fetch(client, v, TOPIC, TID, BEFORE["partition"], BEFORE["offset"], current_epoch=epoch,
                     isolation=isolation)


def bodies(frames: list[bytes]) -> list[tuple[int, bytes]]:
    """Each Fetch frame's version and body, its header checked to be the header alone."""
    out = []
    for frame in frames:
        req = decode_request(SPECS, frame)
        header = encode_request_header(FETCH, req.version, {"CorrelationId": req.header["CorrelationId"],
                                                             "ClientId": req.header["ClientId"]})
        assert frame.startswith(header)
        out.append((req.version, frame[len(header):]))
    return out


def before() -> list[tuple[int, bytes]]:
    return [(v, bytes.fromhex(h)) for v in VERSIONS for h in BEFORE["requests"][str(v)]]


@pytest.mark.parametrize("name", DEFAULT_TARGETS)
def test_a_default_targets_fetches_are_the_bytes_sent_before_the_setting(name: str, stand_in: StandIn) -> None:
    """Apache Kafka, kfake and Tansu: MaxWaitMs 0, every other byte as before, at every version."""
    spec = target(name)
    assert spec.fetch_max_wait_ms == 0
    with connector(spec, stand_in.port) as raw:
        fetch_all(raw())
    assert bodies(stand_in.fetches) == before()


def test_a_client_made_without_a_connector_sends_the_bytes_sent_before(stand_in: StandIn) -> None:
    with RawClient.connect("127.0.0.1", stand_in.port, spec=SPECS, timeout=5) as client:
        fetch_all(client)
    assert bodies(stand_in.fetches) == before()


@pytest.mark.parametrize("name", NISSHI)
def test_nisshis_fetches_wait_500_ms_and_differ_in_nothing_else(name: str, stand_in: StandIn) -> None:
    spec = target(name)
    assert spec.fetch_max_wait_ms == 500 and spec.environment()["fetch_max_wait_ms"] == "500"
    with connector(spec, stand_in.port) as raw:
        fetch_all(raw(reconnect=True))
    sent = bodies(stand_in.fetches)
    assert [v for v, _ in sent] == [v for v, _ in before()]
    for (v, now), (_, then) in zip(sent, before(), strict=True):
        asked, asked_before = decode(FETCH.request, v, now), decode(FETCH.request, v, then)
        assert (asked["MaxWaitMs"], asked_before["MaxWaitMs"]) == (500, 0), f"v{v}"
        assert {**asked, "MaxWaitMs": 0} == asked_before, f"v{v}"


def test_the_wait_of_any_profile_reaches_the_wire(stand_in: StandIn) -> None:
    spec = replace(parse("4.4.0"), fetch_max_wait_ms=10)
    with connector(spec, stand_in.port) as raw:
        rr.fetch(raw(), 12, TOPIC, TID, 0, 0)
    ((v, body),) = bodies(stand_in.fetches)
    assert decode(FETCH.request, v, body)["MaxWaitMs"] == 10


def test_a_target_that_still_answers_without_the_partition_refuses_the_premise(empty_answers: StandIn) -> None:
    """c67a83c kept: a wait does not turn Nisshi's empty answer into an IndexError or a verdict."""
    with connector(target("nisshi-memory"), empty_answers.port) as raw:
        with pytest.raises(TargetRefused, match="without that partition"):
            rr.fetch(raw(), 17, TOPIC, TID, 0, 0)
    ((v, body),) = bodies(empty_answers.fetches)
    assert decode(FETCH.request, v, body)["MaxWaitMs"] == 500


@pytest.mark.parametrize("wait", [-1, FETCH_MAX_WAIT_LIMIT_MS + 1, 0.5, "10", True])
def test_a_profiles_wait_is_a_whole_number_of_ms_within_the_raw_clients_timeout(wait: object) -> None:
    with pytest.raises(KctsError, match="fetch_max_wait_ms"):
        replace(parse("4.4.0"), fetch_max_wait_ms=wait)


def test_the_default_wait_is_not_in_the_report() -> None:
    assert "fetch_max_wait_ms" not in parse("4.4.0").environment()
