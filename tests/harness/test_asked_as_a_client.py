"""The harness's raw requests to a target are asked again as a client asks again (harness.clients.raw
`as_a_client_asks`, the one place that decides it), and only then:

- NOT_LEADER_OR_FOLLOWER or LEADER_NOT_AVAILABLE from a broker whose own Metadata names it the
  partition's leader (protocol guide, "Partitioning and bootstrapping": "If we get an appropriate
  error, refresh the metadata and try again"); from a broker that names another leader the answer
  stands at once (the probes of followers judge it);
- a served Fetch with nothing at or after its FetchOffset below the high watermark (KIP-74, KIP-1018);
- never FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH (the epoch checks judge them);
- the answers replaced are kept under `REPLACED`; one that persists through the bound is returned as
  it stands, and the same kind of answer for the partition is not waited out again on that client.

No broker: a stand-in on 127.0.0.1 answers Metadata with the leader a test sets and each Fetch,
ListOffsets and OffsetForLeaderEpoch from a script of answers.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.cluster.target import parse
from harness.protocol import errors
from harness.protocol.client import RawClient
from harness.protocol.records import encode_batch
from harness.protocol.spec import load_specs
from tests.proxy.fake_broker import FakeBroker

SPECS = load_specs("4.4.0")
TOPIC, TID = "t", uuid.UUID(int=7)
FETCH, LIST_OFFSETS, OFLE, METADATA = 1, 2, 23, 3
ADVERTISED = {18: (0, 3), METADATA: (0, 12), FETCH: (4, 17), LIST_OFFSETS: (1, 9), OFLE: (2, 4)}
SERVED = "served"
EMPTY = "empty"  # served, no records, HighWatermark 15
HW = 15
BATCH = encode_batch([b"a", b"b", b"c", b"d", b"e"], base_offset=10)  # offsets 10..14


class ScriptedBroker(FakeBroker):
    """Node 1. Metadata names `leader` the leader of TOPIC-0; each Fetch, ListOffsets and
    OffsetForLeaderEpoch takes the next item of its script (an error code, SERVED or EMPTY), the
    last one again once the script is spent. Counts what it was asked."""

    def __init__(self, leader: int = 1) -> None:
        super().__init__(SPECS, 1)
        self.leader = leader
        self.port = self.address[1]
        self.scripts: dict[int, list[int | str]] = {FETCH: [SERVED], LIST_OFFSETS: [SERVED], OFLE: [SERVED]}
        self.asked: dict[int, int] = {}

    def _next(self, key: int) -> int | str:
        self.asked[key] = self.asked.get(key, 0) + 1
        script = self.scripts[key]
        return script.pop(0) if len(script) > 1 else script[0]

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key == 18:
            keys = [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, (lo, hi) in sorted(ADVERTISED.items())]
            return {"ErrorCode": 0, "ApiKeys": keys, "ThrottleTimeMs": 0}
        if key == METADATA:
            self.asked[key] = self.asked.get(key, 0) + 1
            part = {"ErrorCode": 0, "PartitionIndex": 0, "LeaderId": self.leader, "LeaderEpoch": 3,
                    "ReplicaNodes": [1, 2], "IsrNodes": [1, 2], "OfflineReplicas": []}
            topic = {"ErrorCode": 0, "Name": TOPIC, "TopicId": TID, "IsInternal": False, "Partitions": [part]}
            return {"ThrottleTimeMs": 0, "Brokers": [], "ClusterId": "c", "ControllerId": 1, "Topics": [topic]}
        step = self._next(key)
        code = step if isinstance(step, int) else 0
        if key == FETCH:
            p = {"PartitionIndex": 0, "ErrorCode": code, "HighWatermark": -1 if code else HW,
                 "LastStableOffset": -1 if code else HW, "LogStartOffset": 0,
                 "Records": BATCH if step == SERVED else b""}
            name = {"TopicId": TID} if version >= 13 else {"Topic": TOPIC}
            return {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{**name, "Partitions": [p]}]}
        if key == LIST_OFFSETS:
            p = {"PartitionIndex": 0, "ErrorCode": code, "Timestamp": -1, "Offset": -1 if code else 0,
                 "LeaderEpoch": -1 if code else 0}
            return {"ThrottleTimeMs": 0, "Topics": [{"Name": TOPIC, "Partitions": [p]}]}
        if key == OFLE:
            p = {"ErrorCode": code, "Partition": 0, "LeaderEpoch": -1 if code else 0, "EndOffset": -1 if code else 5}
            return {"ThrottleTimeMs": 0, "Topics": [{"Topic": TOPIC, "Partitions": [p]}]}
        raise AssertionError(f"the stand-in does not answer api {key}")


@pytest.fixture(autouse=True)
def short_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound stays the client's own: a test whose answer changes ends as soon as it does, and a short
    # bound would let the scheduler, not the client, decide how often it was asked (the gate runs these
    # tests in the idle class).
    monkeypatch.setattr(rr, "RETRY_BACKOFF_S", 0.01)


@pytest.fixture
def broker() -> Iterator[ScriptedBroker]:
    with ScriptedBroker() as b:
        yield b


def target_client(port: int) -> rr.TargetClient:
    """A client made as the scenes make one (a RawConnector), for broker 1 at the stand-in."""
    address = ("127.0.0.1", port)
    cluster: Any = SimpleNamespace(broker_ids=[1], probe_address=lambda b: address, broker_address=lambda b: address,
                                   client_config=lambda: {}, target=parse("4.4.0"))
    return rr.RawConnector(cast(Cluster, cluster))(1)


def ask(client: RawClient, api: int) -> dict[str, Any]:
    if api == FETCH:
        return rr.fetch(client, 12, TOPIC, TID, 0, 11)
    if api == LIST_OFFSETS:
        return rr.list_offsets(client, 7, TOPIC, 0, -2, current_epoch=3)
    return rr.offsets_for_leader_epoch(client, 4, TOPIC, 0, 3, current_epoch=3)


@pytest.mark.parametrize("api", [FETCH, LIST_OFFSETS, OFLE])
@pytest.mark.parametrize("code", [errors.NOT_LEADER_OR_FOLLOWER, errors.LEADER_NOT_AVAILABLE])
def test_a_leader_moving_answer_from_the_leader_is_asked_again(broker: ScriptedBroker, api: int, code: int) -> None:
    broker.scripts[api] = [code, SERVED]
    client = target_client(broker.port)
    answer = ask(client, api)
    assert answer["ErrorCode"] == 0
    assert [r["ErrorCode"] for r in answer[rr.REPLACED]] == [code]
    assert broker.asked[api] == 2 and broker.asked[METADATA] == 1


@pytest.mark.parametrize("api", [FETCH, LIST_OFFSETS, OFLE])
def test_a_leader_moving_answer_from_a_follower_stands_at_once(api: int) -> None:
    with ScriptedBroker(leader=2) as broker:
        broker.scripts[api] = [errors.NOT_LEADER_OR_FOLLOWER, SERVED]
        answer = ask(target_client(broker.port), api)
    assert answer["ErrorCode"] == errors.NOT_LEADER_OR_FOLLOWER and rr.REPLACED not in answer
    assert broker.asked[api] == 1


@pytest.mark.parametrize("api", [FETCH, LIST_OFFSETS, OFLE])
@pytest.mark.parametrize("code", [errors.FENCED_LEADER_EPOCH, errors.UNKNOWN_LEADER_EPOCH])
def test_an_epoch_error_is_never_asked_again(broker: ScriptedBroker, api: int, code: int) -> None:
    broker.scripts[api] = [code, SERVED]
    answer = ask(target_client(broker.port), api)
    assert answer["ErrorCode"] == code and rr.REPLACED not in answer
    assert broker.asked[api] == 1 and METADATA not in broker.asked


def test_a_fetch_served_short_of_the_high_watermark_is_asked_again(broker: ScriptedBroker) -> None:
    broker.scripts[FETCH] = [EMPTY, EMPTY, SERVED]
    answer = ask(target_client(broker.port), FETCH)
    assert answer["Records"] == BATCH and len(answer[rr.REPLACED]) == 2
    assert METADATA not in broker.asked  # emptiness is no leader's question


def test_a_fetch_at_the_high_watermark_served_empty_is_the_answer(broker: ScriptedBroker) -> None:
    broker.scripts[FETCH] = [EMPTY, SERVED]
    answer = rr.fetch(target_client(broker.port), 12, TOPIC, TID, 0, HW)
    assert answer["Records"] == b"" and rr.REPLACED not in answer and broker.asked[FETCH] == 1


def test_a_persisting_answer_is_returned_as_it_stands_and_not_waited_out_twice(
        broker: ScriptedBroker, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rr, "READ_RETRY_S", 0.3)  # waited out once here
    broker.scripts[LIST_OFFSETS] = [errors.NOT_LEADER_OR_FOLLOWER]
    client = target_client(broker.port)
    first = ask(client, LIST_OFFSETS)
    assert first["ErrorCode"] == errors.NOT_LEADER_OR_FOLLOWER and len(first[rr.REPLACED]) >= 1
    asked = broker.asked[LIST_OFFSETS]
    second = ask(client, LIST_OFFSETS)
    assert second["ErrorCode"] == errors.NOT_LEADER_OR_FOLLOWER and rr.REPLACED not in second
    assert broker.asked[LIST_OFFSETS] == asked + 1
    # Another kind of answer, or another API, is still asked again.
    broker.scripts[FETCH] = [EMPTY, SERVED]
    assert ask(client, FETCH)["Records"] == BATCH


def test_a_plain_raw_client_is_asked_once(broker: ScriptedBroker) -> None:
    broker.scripts[LIST_OFFSETS] = [errors.NOT_LEADER_OR_FOLLOWER, SERVED]
    with RawClient.connect("127.0.0.1", broker.port, spec=SPECS) as client:
        assert ask(client, LIST_OFFSETS)["ErrorCode"] == errors.NOT_LEADER_OR_FOLLOWER
    assert broker.asked[LIST_OFFSETS] == 1


def _message_v1(offset: int, value: bytes) -> bytes:
    """A magic 1 message (offset, size, crc, magic, attributes, timestamp, key -1, value)."""
    inner = struct.pack(">bbqi", 1, 0, 0, -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qi", offset, 4 + len(inner)) + struct.pack(">I", 0) + inner


def test_entries_reach_reads_batches_and_old_messages_by_their_headers() -> None:
    assert rr.entries_reach(BATCH, 14) and not rr.entries_reach(BATCH, 15)
    assert rr.entries_reach(BATCH + encode_batch([b"f"], base_offset=15), 15)
    assert not rr.entries_reach(BATCH[:-1], 10)  # a cut entry is no entry
    assert not rr.entries_reach(None, 0) and not rr.entries_reach(b"", 0)
    old = _message_v1(3, b"x") + _message_v1(4, b"y")
    assert rr.entries_reach(old, 4) and not rr.entries_reach(old, 5)


def test_fetched_short_reads_the_stable_offset_under_read_committed() -> None:
    answer = {"ErrorCode": 0, "HighWatermark": 20, "LastStableOffset": 12, "Records": b""}
    assert rr.fetched_short(answer, 15) and not rr.fetched_short(answer, 15, isolation=1)
    assert rr.fetched_short(answer, 11, isolation=1)
    assert not rr.fetched_short({**answer, "PreferredReadReplica": 2}, 15)  # KIP-392: read elsewhere
    assert not rr.fetched_short({**answer, "ErrorCode": errors.OFFSET_OUT_OF_RANGE}, 15)
