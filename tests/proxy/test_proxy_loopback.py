"""The proxy server end to end, in front of two stand-in brokers (no Kafka): addresses, rules, recording."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from harness.protocol.client import RawClient
from harness.protocol.exceptions import ConnectionFailed
from harness.protocol.spec import SpecSet
from harness.proxy import CapVersion, CloseConnection, Delay, Proxy, ReplaceErrors
from harness.proxy.recorder import ANSWERED, CLOSED_BY_PROXY
from tests.proxy.fake_broker import TOPIC_ID, FakeBroker

Brokers = dict[int, FakeBroker]


@pytest.fixture
def brokers(specs: SpecSet) -> Iterator[Brokers]:
    with FakeBroker(specs, 1) as one, FakeBroker(specs, 2) as two:
        peers = {1: one.address, 2: two.address}
        one.peers = two.peers = peers
        yield {1: one, 2: two}


@pytest.fixture
def proxy(specs: SpecSet, brokers: Brokers) -> Iterator[Proxy]:
    # Only broker 1 is given: the proxy must learn broker 2 from Metadata and open a port for it.
    with Proxy([brokers[1].address], specs, labels={brokers[1].address: "broker 1"}) as p:
        yield p
        p.check()


def _connect(address: tuple[str, int], specs: SpecSet) -> RawClient:
    return RawClient.connect(*address, spec=specs, timeout=5)


def _txn_commit(client: RawClient) -> dict[str, object]:
    body = {"TransactionalId": "t", "GroupId": "g", "ProducerId": 1, "ProducerEpoch": 0,
            "Topics": [{"TopicId": TOPIC_ID, "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 1,
                                                            "CommittedMetadata": None}]}]}
    return client.send("TxnOffsetCommit", 6, body)


def test_listeners_bind_loopback_only(proxy: Proxy, brokers: Brokers) -> None:
    host, port = proxy.address_of(brokers[1].address)
    assert host == "127.0.0.1" and port != brokers[1].address[1]
    assert proxy.bootstrap_servers == f"127.0.0.1:{port}"


def test_metadata_keeps_clients_behind_the_proxy(proxy: Proxy, specs: SpecSet, brokers: Brokers) -> None:
    with _connect(proxy.address_of(brokers[1].address), specs) as client:
        md = client.send("Metadata", 12, {"Topics": None, "AllowAutoTopicCreation": False})
    advertised = {b["NodeId"]: (b["Host"], b["Port"]) for b in md["Brokers"]}
    assert advertised == {n: proxy.address_of(b.address) for n, b in brokers.items()}
    assert all(addr != b.address for addr, b in zip(advertised.values(), brokers.values(), strict=True))
    # The port opened for broker 2 leads to broker 2.
    with _connect(advertised[2], specs) as second:
        assert second.send("Metadata", 12, {"Topics": [], "AllowAutoTopicCreation": False})["ClusterId"] == "fake-2"
    recorded = proxy.recording.exchanges("Metadata")
    assert [e.upstream for e in recorded] == ["broker 1", "{}:{}".format(*brokers[2].address)]
    assert all(e.outcome == ANSWERED and e.error_codes == [0] for e in recorded)


def test_cap_version_is_what_the_client_negotiates(proxy: Proxy, specs: SpecSet, brokers: Brokers) -> None:
    address = proxy.address_of(brokers[1].address)
    with _connect(address, specs) as before:
        assert before.max_version("TxnOffsetCommit") == 6
    rule = proxy.add(CapVersion("TxnOffsetCommit", max_version=5))
    with _connect(address, specs) as capped:
        assert capped.max_version("TxnOffsetCommit") == 5
    proxy.remove(rule)
    with _connect(address, specs) as after:
        assert after.max_version("TxnOffsetCommit") == 6
    assert rule.fired == 1


def test_replace_errors_on_the_first_responses_only(proxy: Proxy, specs: SpecSet, brokers: Brokers) -> None:
    rule = proxy.add(ReplaceErrors("TxnOffsetCommit", error=100, count=2, versions=(6, 6)))
    with _connect(proxy.address_of(brokers[1].address), specs) as client:
        codes = [_txn_commit(client)["Topics"][0]["Partitions"][0]["ErrorCode"] for _ in range(3)]
    assert codes == [100, 100, 0]
    recorded = proxy.recording.exchanges("TxnOffsetCommit")
    assert [e.error_codes for e in recorded] == [[100], [100], [0]]
    assert [bool(e.rules) for e in recorded] == [True, True, False] and rule.spent


def test_close_connection_drops_the_request_and_the_connection(
    proxy: Proxy, specs: SpecSet, brokers: Brokers
) -> None:
    proxy.add(CloseConnection("TxnOffsetCommit"))
    address = proxy.address_of(brokers[1].address)
    with _connect(address, specs) as client, pytest.raises(ConnectionFailed):
        _txn_commit(client)
    with _connect(address, specs) as again:
        assert _txn_commit(again)["Topics"][0]["Partitions"][0]["ErrorCode"] == 0
    outcomes = [e.outcome for e in proxy.recording.exchanges("TxnOffsetCommit")]
    assert outcomes == [CLOSED_BY_PROXY, ANSWERED]


def test_delay_holds_the_response(proxy: Proxy, specs: SpecSet, brokers: Brokers) -> None:
    proxy.add(Delay("TxnOffsetCommit", seconds=0.3, count=1))
    with _connect(proxy.address_of(brokers[1].address), specs) as client:
        _txn_commit(client)
        slow = client.last
        _txn_commit(client)
        fast = client.last
    assert slow is not None and fast is not None
    assert slow.elapsed >= 0.3 > fast.elapsed


def test_stop_is_idempotent_and_closes_client_connections(specs: SpecSet, brokers: Brokers) -> None:
    proxy = Proxy([brokers[1].address], specs).start()
    client = _connect(proxy.address_of(brokers[1].address), specs)
    proxy.stop()
    proxy.stop()
    with pytest.raises(ConnectionFailed):
        client.send("Metadata", 12, {"Topics": [], "AllowAutoTopicCreation": False})
    client.close()
    assert proxy.errors == []


def test_a_broker_that_is_down_is_not_a_proxy_error(specs: SpecSet) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[:2]  # nothing listens there once the socket is closed
    with Proxy([closed], specs) as proxy:
        with pytest.raises(ConnectionFailed):
            _connect(proxy.address_of(closed), specs)
        proxy.check()
        assert len(proxy.unreachable) == 1 and "broker unreachable 1x" in proxy.describe()


def test_unknown_rule_api_fails_at_add(proxy: Proxy) -> None:
    with pytest.raises(Exception, match="NoSuchApi"):
        proxy.add(ReplaceErrors("NoSuchApi", error=1))
