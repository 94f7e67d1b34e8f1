"""The replay catalogue (harness/replays.toml) and what runs it: the loader's checks, the verdict read
from a results.json, a rule that reads the request through the proxy, and a cluster behind the proxy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cluster.base import Cluster, NodeState
from harness.cluster.target import parse
from harness.errors import KctsError
from harness.layout import ROOT
from harness.protocol.client import RawClient
from harness.protocol.spec import SpecSet
from harness.proxy import CurrentEpochInListOffsets, IgnoreCurrentLeaderEpoch, Proxy
from harness.proxy.cluster import ProxiedCluster
from harness.replay import Replay, ReplayOutcome, judge, load
from tests.proxy.fake_broker import ADVERTISED, FakeBroker


def test_every_replay_of_the_catalogue_names_a_promise_rules_and_tests_that_exist() -> None:
    replays = load()
    assert replays, "the catalogue is empty"
    for r in replays.values():
        assert r.link.startswith("https://github.com/"), r
        assert all((ROOT / t.split("::")[0]).exists() for t in r.tests), r.tests
        assert r.make_rules() and all(rule.count is None for rule in r.make_rules()), (
            f"{r.id}: a replay's rules act on every answer, for the whole run")
        assert r.caught_by, f"{r.id}: say which check caught it on a live run"


def _catalogue(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "replays.toml"
    path.write_text(text)
    return path


ENTRY = """
[[replay]]
id = "one"
title = "a bug"
link = "https://github.com/o/r/issues/1"
promise = "kip320.metadata.leader-epoch"
tests = ["suites/kip320/test_epoch_lineage.py"]
[[replay.rules]]
rule = "CurrentEpochInListOffsets"
lookups = ["earliest"]
"""


def test_the_loader_turns_arrays_into_tuples_for_the_rules(tmp_path: Path) -> None:
    (replay,) = load(_catalogue(tmp_path, ENTRY)).values()
    (rule,) = replay.make_rules()
    assert isinstance(rule, CurrentEpochInListOffsets) and rule.lookups == ("earliest",)
    assert replay.rules[0].describe() == "CurrentEpochInListOffsets(lookups=('earliest',))"


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace('"kip320.metadata.leader-epoch"', '"kip999.nothing"'), "not in harness/promises.toml"),
    (lambda t: t.replace('"CurrentEpochInListOffsets"', '"NoSuchRule"'), "no rule of harness/proxy/rules/"),
    (lambda t: t.replace('"CurrentEpochInListOffsets"', '"Proxy"'), "no rule of harness/proxy/rules/"),
    (lambda t: t.replace("lookups =", "lookup ="), "unexpected keyword argument 'lookup'"),
    (lambda t: t.replace('link = "https://github.com/o/r/issues/1"\n', ""), "missing link"),
    (lambda t: t + t, "id 'one' is used twice"),
    (lambda t: t.replace('rule = "CurrentEpochInListOffsets"\n', ""), "without its `rule` name"),
])
def test_the_loader_refuses_a_broken_entry_naming_it(tmp_path: Path, edit: Any, message: str) -> None:
    with pytest.raises(KctsError, match=message):
        load(_catalogue(tmp_path, edit(ENTRY)))


def test_an_unreadable_catalogue_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(KctsError, match="cannot read the replay catalogue"):
        load(_catalogue(tmp_path, "[[replay]\n"))


def _results(*checks: tuple[str, str, list[str]]) -> dict[str, Any]:
    return {"checks": [{"nodeid": f"suites/x.py::{n}", "cell": c, "promises": p} for n, c, p in checks]}


def test_a_replay_is_caught_only_by_a_fail_of_the_promise_it_broke() -> None:
    replay = next(iter(load().values()))
    promise = replay.promise
    caught, cells = judge(replay, _results(("test_a", "fail", [promise]), ("test_b", "fail", ["other"]),
                                           ("test_c", "target-refused", [promise]), ("test_d", "pass", [promise])))
    assert caught == ("test_a",)
    assert cells == {"fail": 2, "target-refused": 1, "pass": 1}
    missed, _ = judge(replay, _results(("test_b", "fail", ["other"]), ("test_c", "error", [promise])))
    assert missed == (), "an ERROR or another promise's FAIL is no catch"


def test_a_replay_is_one_line_on_the_terminal_and_its_details_go_to_its_folder() -> None:
    """The terminal gets one line per replay (its verdict, link, the FAILs that caught it, the run folder);
    the rules and the checks that caught it go to replay.md there."""
    replay = next(iter(load().values()))
    caught = ReplayOutcome(replay, ("test_a", "test_b"), {"fail": 2, "pass": 3}, Path("/r/x"), 1, 12.0)
    line = caught.render()
    assert "\n" not in line
    assert line.startswith(f"CAUGHT {replay.id} ({replay.link}): 2 FAIL of {replay.promise}; 2 fail, 3 pass; 12 s")
    assert "- caught by `test_a`" in caught.details() and replay.link in caught.details()
    missed = ReplayOutcome(replay, (), {}, Path("/r/x"), 3, 1.0, "the run wrote no results.json (exit 3)")
    assert missed.render().startswith(f"MISSED {replay.id}") and "no results.json" in missed.render()
    assert "\n" not in missed.render()


# -- through the proxy ----------------------------------------------------------------------------
class ListOffsetsBroker(FakeBroker):
    """Answers ListOffsets v7 as a broker with a log of two epochs: offset 0 in epoch 0, the end (10) in 3."""

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key == 18:
            answered = super().answer(key, version, body)
            answered["ApiKeys"].append({"ApiKey": 2, "MinVersion": 0, "MaxVersion": 7})
            answered["ApiKeys"].sort(key=lambda k: k["ApiKey"])
            return answered
        if key != 2:
            return super().answer(key, version, body)
        topics = [{"Name": t["Name"], "Partitions": [
            {"PartitionIndex": p["PartitionIndex"], "ErrorCode": 0, "Timestamp": -1,
             "Offset": 0 if p["Timestamp"] == -2 else 10, "LeaderEpoch": 0 if p["Timestamp"] == -2 else 3}
            for p in t["Partitions"]]} for t in body["Topics"]]
        return {"ThrottleTimeMs": 0, "Topics": topics}


def _earliest(client: RawClient, current: int) -> dict[str, Any]:
    body = {"ReplicaId": -1, "IsolationLevel": 0, "Topics": [{"Name": "t", "Partitions": [
        {"PartitionIndex": 0, "CurrentLeaderEpoch": current, "Timestamp": -2}]}]}
    return client.send("ListOffsets", 7, body)["Topics"][0]["Partitions"][0]


def test_a_rule_that_needs_the_request_reads_it_through_the_proxy(specs: SpecSet) -> None:
    assert 2 not in ADVERTISED, "premise: the plain fake does not answer ListOffsets"
    with ListOffsetsBroker(specs, 1) as broker:
        broker.peers = {1: broker.address}
        with Proxy([broker.address], specs) as proxy:
            rule = proxy.add(CurrentEpochInListOffsets())
            with RawClient.connect(*proxy.address_of(broker.address), spec=specs, timeout=5) as client:
                assert _earliest(client, 3)["LeaderEpoch"] == 3, "the epoch the request carried"
                proxy.remove(rule)
                assert _earliest(client, 3)["LeaderEpoch"] == 0, "the broker's own answer once the rule is gone"
            proxy.check()
            (edited, plain) = proxy.recording.exchanges("ListOffsets")
            assert edited.rules and not plain.rules


class FakeCluster(Cluster):
    """A cluster of fake brokers, with the node control a proxied cluster must hand through."""

    def __init__(self, brokers: dict[int, FakeBroker]) -> None:
        self.target = parse("external:127.0.0.1:1")
        self.version = "fake"
        self.brokers = brokers
        self.calls: list[str] = []

    def start(self) -> FakeCluster:
        self.calls.append("start")
        return self

    def close(self) -> None:
        self.calls.append("close")

    @property
    def bootstrap_servers(self) -> str:
        return ",".join("{}:{}".format(*b.address) for b in self.brokers.values())

    @property
    def broker_ids(self) -> list[int]:
        return list(self.brokers)

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        return self.brokers[broker_id].address

    def node_state(self, broker_id: int) -> NodeState:
        return NodeState.RUNNING

    def start_node(self, broker_id: int) -> None:
        self.calls.append(f"start_node {broker_id}")

    def stop_node(self, broker_id: int) -> None:
        self.calls.append(f"stop_node {broker_id}")

    def kill_node(self, broker_id: int) -> None:
        self.calls.append(f"kill_node {broker_id}")

    def pause_node(self, broker_id: int) -> None:
        self.calls.append(f"pause_node {broker_id}")

    def resume_node(self, broker_id: int) -> None:
        self.calls.append(f"resume_node {broker_id}")

    def only_here(self) -> str:
        return "inner"


@pytest.fixture
def fakes(specs: SpecSet) -> Iterator[dict[int, FakeBroker]]:
    with FakeBroker(specs, 1) as one, FakeBroker(specs, 2) as two:
        one.peers = two.peers = {1: one.address, 2: two.address}
        yield {1: one, 2: two}


def test_a_proxied_cluster_hands_out_proxy_addresses_and_node_control_of_its_own(
    fakes: dict[int, FakeBroker], specs: SpecSet
) -> None:
    inner = FakeCluster(fakes)
    rule = CurrentEpochInListOffsets()
    cluster = ProxiedCluster(inner, [rule], "a replay").start()
    try:
        proxy = cluster.proxy
        assert rule in proxy.rules
        for b, fake in fakes.items():
            assert cluster.broker_address(b) == proxy.address_of(fake.address) != fake.address
            assert cluster.probe_address(b) == cluster.broker_address(b)
        assert cluster.client_config()["bootstrap.servers"] == cluster.bootstrap_servers
        assert set(cluster.bootstrap_servers.split(",")) == {"{}:{}".format(*proxy.address_of(f.address))
                                                              for f in fakes.values()}
        with RawClient.connect(*cluster.broker_address(2), spec=specs, timeout=5) as client:
            assert client.send("Metadata", 12, {"Topics": [], "AllowAutoTopicCreation": False})["ClusterId"] == "fake-2"
        cluster.stop_node(1)
        cluster.start_node(1)
        assert cluster.only_here() == "inner" and cluster.version == "fake"
        assert cluster.environment()["replay"] == "a replay"
    finally:
        cluster.close()
    assert inner.calls == ["start", "stop_node 1", "start_node 1", "close"]
    assert cluster.proxy._stopped


def test_a_proxied_cluster_that_cannot_start_its_proxy_closes_the_inner_one(fakes: dict[int, FakeBroker]) -> None:
    inner = FakeCluster(fakes)
    broken = Replay("x", "x", "x", "x", (), ())
    cluster = ProxiedCluster(inner, [CurrentEpochInListOffsets(api="NoSuchApi")], broken.id)
    with pytest.raises(Exception, match="NoSuchApi"):
        cluster.start()
    assert inner.calls == ["start", "close"]


class FetchEchoBroker(FakeBroker):
    """Answers Fetch v12 with the CurrentLeaderEpoch it was asked at as the HighWatermark: what the broker saw."""

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key == 18:
            answered = super().answer(key, version, body)
            answered["ApiKeys"].append({"ApiKey": 1, "MinVersion": 0, "MaxVersion": 12})
            answered["ApiKeys"].sort(key=lambda k: k["ApiKey"])
            return answered
        if key != 1:
            return super().answer(key, version, body)
        parts = [{"PartitionIndex": p["Partition"], "ErrorCode": 0, "HighWatermark": p["CurrentLeaderEpoch"],
                  "LastStableOffset": 0, "LogStartOffset": 0, "AbortedTransactions": [], "PreferredReadReplica": -1,
                  "Records": b""} for t in body["Topics"] for p in t["Partitions"]]
        return {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": "t", "Partitions": parts}]}


def test_a_request_rule_edits_what_the_broker_sees_and_the_recording_keeps_what_was_sent(specs: SpecSet) -> None:
    fetch = {"ReplicaId": -1, "MaxWaitMs": 0, "MinBytes": 1, "MaxBytes": 1024, "IsolationLevel": 0, "SessionId": 0,
             "SessionEpoch": -1, "Topics": [{"Topic": "t", "Partitions": [
                 {"Partition": 0, "CurrentLeaderEpoch": 3, "FetchOffset": 0, "LastFetchedEpoch": -1,
                  "LogStartOffset": -1, "PartitionMaxBytes": 1024}]}], "ForgottenTopicsData": [], "RackId": ""}
    with FetchEchoBroker(specs, 1) as broker:
        broker.peers = {1: broker.address}
        with Proxy([broker.address], specs) as proxy:
            rule = proxy.add(IgnoreCurrentLeaderEpoch())
            with RawClient.connect(*proxy.address_of(broker.address), spec=specs, timeout=5) as client:
                seen = client.send("Fetch", 12, fetch)["Responses"][0]["Partitions"][0]["HighWatermark"]
            proxy.check()
            (ex,) = proxy.recording.exchanges("Fetch")
    assert seen == -1, "the broker was asked at epoch -1"
    assert rule.fired == 1 and ex.rules == [rule.describe()]
    assert ex.request is not None and ex.request["Topics"][0]["Partitions"][0]["CurrentLeaderEpoch"] == 3
