"""The KIP-1094 phase-3 refresh check and the ListOffsets v0 check (recorded 4.4.0 runs,
altered).

librdkafka 2.16.0's recorded run is a real failure of the refresh check: after reading the group's
commit (25, epoch 1) with its metadata at epoch 0, it fetched at CurrentLeaderEpoch 0 without asking
Metadata first (a zombie leader at epoch 0 would have served it: the guide's phase 3).

No Apache Kafka 4.x leader speaks ListOffsets v0 (KIP-896), so the recording is the "not supported"
case; the answers of a leader that speaks it are written here in v0's shape (PartitionIndex,
ErrorCode, OldStyleOffsets, as kafka-clients 3.9's ListOffsetsResponse.json defines it) with the log
start and end the recording's newest version gave.
"""

from __future__ import annotations

import pytest
from alterations import Alteration, Change, alteration, altered, raw, typed

from harness.checks.committed_refresh import FetchedOnStaleMetadata, assert_committed_epoch_forces_a_refresh
from harness.checks.list_offsets_v0 import assert_list_offsets_v0_works
from harness.errors import ClientLacks, NotSupported, SceneUnmet, TargetRefused
from harness.histories.committed_refresh import CommittedRefreshRun
from harness.histories.list_offsets_v0 import ListOffsetsV0
from harness.promises import catalogue
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

PASSING, FAILING = ("kip1094-committed-refresh-java", "kip1094-committed-refresh-franz-go"), \
    "kip1094-committed-refresh-librdkafka"
V0 = "kip320-list-offsets-v0"
REFRESH = "kip1094.consumer.committed-epoch-forces-refresh"


def _v0_leader(data: dict) -> dict:
    """The recording as a leader that speaks v0 would have answered it."""
    data = {**data, "advertised": [0, 9], "schema": [0, 9]}
    data["answers"] = [{"version": 0, "timestamp": ts, "partition": {
        "PartitionIndex": 0, "ErrorCode": 0, "OldStyleOffsets": [offset]}}
        for ts, offset in ((EARLIEST_TIMESTAMP, data["log_start"]), (LATEST_TIMESTAMP, data["log_end"]))]
    return data


def _v0(data: dict) -> ListOffsetsV0:
    return typed(ListOffsetsV0, data)


def _first_fetch(field: str, value: object) -> Change:
    def change(fetches: list, data: dict) -> list:
        return [{**fetches[0], field: value}, *fetches[1:]]
    return change


def _no_refresh(asked: list, data: dict) -> list:
    read = data["commit_reads"][0]["at"]
    return [t for t in asked if t <= read]


def _stale_fetch_first(fetches: list, data: dict) -> list:
    first = fetches[0]
    return [{**first, "at": first["at"] - 0.001, "current": data["committed"]["epoch"] - 1,
             "answer": "FENCED_LEADER_EPOCH"}, *fetches]


def _metadata_already_current(learned: list, data: dict) -> list:
    return [{**m, "epoch": data["committed"]["epoch"]} for m in learned]


ALTERATIONS = [
    *[a for name in PASSING for a in (
        alteration(f"{name}-no-refresh", REFRESH, name, "metadata_asked", _no_refresh,
                   assert_committed_epoch_forces_a_refresh, "asked no Metadata before its first Fetch",
                   FetchedOnStaleMetadata),
        alteration(f"{name}-fetched-at-the-stale-epoch", REFRESH, name, "fetches", _stale_fetch_first,
                   assert_committed_epoch_forces_a_refresh, "fenced below the committed epoch",
                   FetchedOnStaleMetadata),
        alteration(f"{name}-unfenced", REFRESH, name, "fetches[*].current", -1,
                   assert_committed_epoch_forces_a_refresh, "fenced none of its Fetches"),
        alteration(f"{name}-reread", REFRESH, name, "reads", lambda old, data: old + old[:1],
                   assert_committed_epoch_forces_a_refresh, "once each"),
        alteration(f"{name}-commit-without-epoch", REFRESH, name, "commit_reads[*].epoch", -1,
                   assert_committed_epoch_forces_a_refresh, "not the committed epoch", TargetRefused),
        alteration(f"{name}-offset-fetch-before-v5", REFRESH, name, "commit_reads[*]",
                   lambda old, data: {**old, "version": 4, "epoch": -1}, assert_committed_epoch_forces_a_refresh,
                   "OffsetFetch v4", ClientLacks),
        alteration(f"{name}-metadata-not-held", REFRESH, name, "learned", _metadata_already_current,
                   assert_committed_epoch_forces_a_refresh, "was not behind", SceneUnmet),
        alteration(f"{name}-fetch-before-v9", REFRESH, name, "fetches[*].version", 8,
                   assert_committed_epoch_forces_a_refresh, "Fetch (v9+", ClientLacks),
    )],
]


@pytest.mark.parametrize("name", PASSING)
def test_the_recorded_refresh_passes(name: str) -> None:
    assert_committed_epoch_forces_a_refresh(typed(CommittedRefreshRun, raw(name)))


def test_the_recorded_librdkafka_run_fails_the_refresh() -> None:
    with pytest.raises(FetchedOnStaleMetadata, match=r"asked no Metadata before its first Fetch.*CurrentLeaderEpoch 0"):
        assert_committed_epoch_forces_a_refresh(typed(CommittedRefreshRun, raw(FAILING)))


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_refresh_fails(a: Alteration) -> None:
    history = altered(a, CommittedRefreshRun)
    with pytest.raises(a.raises) as caught:
        a.check(history)
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"


def test_the_recorded_4x_leader_does_not_support_v0() -> None:
    with pytest.raises(NotSupported, match=r"advertises ListOffsets v1-11"):
        assert_list_offsets_v0_works(_v0(raw(V0)))


def test_a_leader_answering_v0_with_the_log_edges_passes() -> None:
    assert_list_offsets_v0_works(_v0(_v0_leader(raw(V0))))


@pytest.mark.parametrize(("field", "value", "shows"), [
    ("OldStyleOffsets", [0], "expected NONE [7]"),
    ("OldStyleOffsets", [15, 7], "OldStyleOffsets [15, 7]"),
    ("ErrorCode", 3, "UNKNOWN_TOPIC_OR_PARTITION"),
])
def test_a_v0_answer_otherwise_fails(field: str, value: object, shows: str) -> None:
    data = _v0_leader(raw(V0))
    data["answers"][0]["partition"][field] = value
    with pytest.raises(AssertionError, match=shows.replace("[", r"\[").replace("]", r"\]")):
        assert_list_offsets_v0_works(_v0(data))


def test_a_v0_probe_on_an_unmoved_partition_is_refused() -> None:
    data = _v0_leader(raw(V0))
    data["current_epoch"] = 0
    with pytest.raises(TargetRefused, match="needs a leader move"):
        assert_list_offsets_v0_works(_v0(data))


def test_the_alterations_are_of_known_promises_and_unique() -> None:
    assert {a.promise for a in ALTERATIONS} <= set(catalogue())
    assert len({a.id for a in ALTERATIONS}) == len(ALTERATIONS)
