"""The KIP-1094 phase-3 refresh suite's verdicts on recorded 4.4.0 runs: librdkafka's stale Fetch is the
known client gap librdkafka-committed-epoch-no-refresh, and only that, and only for the librdkafka
versions harness/client_gaps.toml names.

The suite's own test function runs here, its scene replaced by the recording (no cluster): librdkafka
2.16.0's recorded run (after reading the commit (25, epoch 1) with its metadata at epoch 0 it fetched
at CurrentLeaderEpoch 0 without asking Metadata) ends as the gap; the same run by a librdkafka outside
the gap's `affected` range FAILs; the Java recording passes; a Java run that fetched the same way, and
a librdkafka run that fails otherwise, FAIL.
"""

from __future__ import annotations

from typing import Any

import pytest
from alterations import raw, typed

import suites.kip1094.test_committed_epoch_refresh as suite
from fixtures.topics import RunNames
from harness.checks.committed_refresh import FetchedOnStaleMetadata
from harness.histories.committed_refresh import CommittedRefreshRun
from harness.histories.store import RECORD_ENV

LIBRDKAFKA, JAVA = "kip1094-committed-refresh-librdkafka", "kip1094-committed-refresh-java"
GAP = "librdkafka-committed-epoch-no-refresh"


def _judge(monkeypatch: pytest.MonkeyPatch, data: dict[str, Any]) -> None:
    """The suite's test for the recording's client, its scene answering with the (altered) recording."""
    run = typed(CommittedRefreshRun, data)
    monkeypatch.setattr(suite, "committed_epoch_refresh", lambda *args: run)
    monkeypatch.delenv(RECORD_ENV, raising=False)
    suite.test_a_committed_epoch_ahead_of_metadata_makes_the_consumer_refresh_before_it_fetches(
        None, lambda **kw: "topic", RunNames("unit"), run.client)  # type: ignore[arg-type]


def _as_librdkafka(data: dict[str, Any], version: str) -> dict[str, Any]:
    data["release"] = {**data["release"], "named": f"confluent-kafka {version} (librdkafka {version})",
                       "release": version}
    return data


def _refreshed(data: dict[str, Any]) -> dict[str, Any]:
    """The librdkafka run as a client that refreshed first: Metadata asked after the commit was read, the
    stale Fetch never sent."""
    read = data["commit_reads"][0]["at"]
    data["metadata_asked"] = [*data["metadata_asked"], read + 0.001]
    data["fetches"] = [f for f in data["fetches"] if f["current"] >= data["committed"]["epoch"]]
    return data


def test_the_recorded_librdkafka_run_is_the_known_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    data = raw(LIBRDKAFKA)
    assert data["release"]["release"] == "2.16.0"
    with pytest.raises(pytest.xfail.Exception,
                       match=r"KNOWN_CLIENT_GAP: librdkafka 2\.16\.0: a committed offset whose leader epoch is newer.*"
                             r"seen: librdkafka read the commit 25 at epoch 1.*asked no Metadata before its first "
                             r"Fetch.*rd_kafka_toppar_fetch_start"):
        _judge(monkeypatch, data)


@pytest.mark.parametrize("version", ["2.0.2", "1.9.2"])
def test_the_same_run_outside_the_affected_versions_fails(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    with pytest.raises(AssertionError) as caught:
        _judge(monkeypatch, _as_librdkafka(raw(LIBRDKAFKA), version))
    assert f"librdkafka {version} is outside the versions known to have this gap, >=2.1.0" in str(caught.value)
    assert "CurrentLeaderEpoch 0 -> FENCED_LEADER_EPOCH" in str(caught.value)


def test_the_recorded_java_run_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    _judge(monkeypatch, raw(JAVA))


def test_a_librdkafka_that_refreshes_first_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    _judge(monkeypatch, _refreshed(raw(LIBRDKAFKA)))


def test_the_gap_is_librdkafkas_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Java run altered to fetch at the stale epoch without a refresh, as librdkafka did: a FAIL."""
    data = raw(JAVA)
    read = data["commit_reads"][0]["at"]
    data["metadata_asked"] = [t for t in data["metadata_asked"] if t <= read]
    first = data["fetches"][0]
    data["fetches"] = [{**first, "at": first["at"] - 0.001, "current": data["committed"]["epoch"] - 1,
                        "answer": "FENCED_LEADER_EPOCH"}, *data["fetches"]]
    with pytest.raises(FetchedOnStaleMetadata, match=r"asked no Metadata before its first Fetch"):
        _judge(monkeypatch, data)


@pytest.mark.parametrize(("change", "shows"), [
    (lambda d: {**d, "fetches": [{**f, "current": -1} for f in d["fetches"]]}, "fenced none of its Fetches"),
    (lambda d: {**_refreshed(d), "reads": d["reads"] + d["reads"][:1]}, "once each"),
], ids=["unfenced", "refreshed-then-reread"])
def test_any_other_librdkafka_failure_stays_a_fail(monkeypatch: pytest.MonkeyPatch, change: Any, shows: str) -> None:
    with pytest.raises(AssertionError) as caught:
        _judge(monkeypatch, change(raw(LIBRDKAFKA)))
    assert not isinstance(caught.value, FetchedOnStaleMetadata)
    assert shows in str(caught.value)
    assert "outside the versions" not in str(caught.value)
