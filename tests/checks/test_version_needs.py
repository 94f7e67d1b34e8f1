"""The broker versions a promise needs (harness.histories.version_needs) and the gates that read a broker's
advertised ranges against them: "not supported by this target" exactly where the range lacks the version,
with every range as the evidence; judged (no verdict raised) wherever it has one.

The ranges are the ones the `versions-before-kip320-fetch` allowed item makes a 4.4.0 broker advertise
(Fetch v4-v8, ListOffsets v1-v3, OffsetForLeaderEpoch v2: its minimums are 4.4.0's own), and 4.4.0's
own (Fetch v4-v18, ListOffsets v1-v11, OffsetForLeaderEpoch v2-v4).
"""

from __future__ import annotations

import pytest

from harness.checks.epoch_lineage import require_every_follower_read
from harness.checks.truncation import TruncationNotSurfaced, assert_truncation_surfaced, require_truncation_detectable
from harness.clients.stacks import STACKS
from harness.errors import NotSupported, SceneUnmet
from harness.histories import json_codec
from harness.histories.client_reactions import ClientRecord
from harness.histories.version_needs import (
    CURRENT_LEADER_EPOCH,
    FETCH_CURRENT_LEADER_EPOCH,
    FETCH_FROM_FOLLOWER,
    LIST_OFFSETS_LEADER_EPOCH,
    TRUNCATION_DETECTION,
    Offered,
    VersionNeed,
    require_offered,
    truncation_detection,
)

CAPPED = (Offered(2, "OffsetForLeaderEpoch", (2, 2)), Offered(2, "Fetch", (4, 8)))
RELEASE = (Offered(2, "OffsetForLeaderEpoch", (2, 4)), Offered(2, "Fetch", (4, 18)))


@pytest.mark.parametrize(("need", "versions", "met"), [
    (FETCH_CURRENT_LEADER_EPOCH, (4, 8), False),
    (FETCH_CURRENT_LEADER_EPOCH, (4, 9), True),
    (FETCH_CURRENT_LEADER_EPOCH, (10, 18), True),
    (FETCH_CURRENT_LEADER_EPOCH, None, False),
    (FETCH_FROM_FOLLOWER, (4, 10), False),
    (FETCH_FROM_FOLLOWER, (4, 11), True),
    (LIST_OFFSETS_LEADER_EPOCH, (1, 3), False),
    (LIST_OFFSETS_LEADER_EPOCH, (1, 4), True),
    (CURRENT_LEADER_EPOCH["OffsetForLeaderEpoch"], (0, 1), False),
    (CURRENT_LEADER_EPOCH["OffsetForLeaderEpoch"], (2, 2), True),
])
def test_a_need_is_met_by_a_range_that_reaches_its_first_version(
    need: VersionNeed, versions: tuple[int, int] | None, met: bool
) -> None:
    assert need.met_by(Offered(1, need.api, versions)) is met


@pytest.mark.parametrize(("client", "versions", "met"), [
    # kafka-clients: OffsetsForLeaderEpochRequest.supportsTopicPermission(max) is max >= 3
    ("java", (2, 2), False), ("java", (0, 3), True), ("java", (2, 4), True),
    # librdkafka sends v2 only: a range without v2 gives it nothing, whatever its top
    ("librdkafka", (2, 2), True), ("librdkafka", (0, 4), True), ("librdkafka", (3, 4), False),
    ("librdkafka", (0, 1), False),
    # kgo: supportsKeyVersion(OffsetForLeaderEpoch, 2)
    ("franz-go", (0, 2), True), ("franz-go", (0, 1), False),
])
def test_each_client_validates_with_the_offset_for_leader_epoch_versions_it_speaks(
    client: str, versions: tuple[int, int], met: bool
) -> None:
    assert truncation_detection(client).met_by(Offered(1, "OffsetForLeaderEpoch", versions)) is met


def test_an_unknown_client_has_no_need() -> None:
    with pytest.raises(KeyError, match="known"):
        truncation_detection("kcat")
    # Every stack of the client axis has one: without it its truncation checks could not be judged.
    assert set(TRUNCATION_DETECTION) == set(STACKS)


def test_a_need_read_against_another_apis_range_is_the_harnesss_mistake() -> None:
    with pytest.raises(ValueError, match="ListOffsets"):
        FETCH_CURRENT_LEADER_EPOCH.met_by(Offered(1, "ListOffsets", (1, 11)))


def test_require_offered_is_not_supported_with_every_range_as_evidence() -> None:
    with pytest.raises(NotSupported) as raised:
        require_offered(TRUNCATION_DETECTION["java"], CAPPED)
    exc = raised.value
    assert exc.what.startswith("kafka-clients' validation") and "OffsetForLeaderEpoch v3+" in exc.what
    assert exc.evidence == ("broker 2 advertises OffsetForLeaderEpoch v2-v2; broker 2 advertises Fetch v4-v8")
    assert "is not supported by this target" in str(exc)


def test_require_offered_passes_where_every_broker_asked_has_the_version() -> None:
    require_offered(FETCH_CURRENT_LEADER_EPOCH, [Offered(1, "Fetch", (4, 18)), Offered(2, "Fetch", (4, 17))])
    with pytest.raises(NotSupported, match="broker 2 advertises Fetch v4-v8"):  # one broker short is enough
        require_offered(FETCH_CURRENT_LEADER_EPOCH, [Offered(1, "Fetch", (4, 18)), Offered(2, "Fetch", (4, 8))])


def test_require_offered_without_the_apis_range_is_the_scenes_fault() -> None:
    with pytest.raises(SceneUnmet, match="no ApiVersions range of ListOffsets"):
        require_offered(LIST_OFFSETS_LEADER_EPOCH, CAPPED)


def test_a_broker_without_the_api_at_all_is_not_supported() -> None:
    with pytest.raises(NotSupported, match="advertises no OffsetForLeaderEpoch"):
        require_offered(TRUNCATION_DETECTION["librdkafka"], [Offered(1, "OffsetForLeaderEpoch", None)])


def test_truncation_is_judged_on_a_release_and_not_supported_below_what_the_client_validates_with() -> None:
    for client in TRUNCATION_DETECTION:
        require_truncation_detectable(client, RELEASE)  # 4.4.0: every client is judged (and may FAIL)
    require_truncation_detectable("librdkafka", CAPPED)  # v2 is what librdkafka sends: judged
    require_truncation_detectable("franz-go", CAPPED)
    with pytest.raises(NotSupported, match="Fetch v4-v8"):
        require_truncation_detectable("java", CAPPED)


def test_followers_without_fetch_v11_are_not_supported_once_the_read_logs_are_judged() -> None:
    require_every_follower_read(())  # no follower (one broker, or one log per partition): nothing to excuse
    require_every_follower_read([Offered(2, "Fetch", (4, 18)), Offered(3, "Fetch", (4, 11))])
    with pytest.raises(NotSupported, match="a consumer's Fetch served by a follower") as raised:
        require_every_follower_read([Offered(2, "Fetch", (4, 8)), Offered(3, "Fetch", (4, 8))])
    assert raised.value.evidence == "broker 2 advertises Fetch v4-v8; broker 3 advertises Fetch v4-v8"


def test_an_offered_range_round_trips_through_the_history_codec() -> None:
    kept = (Offered(2, "OffsetForLeaderEpoch", (2, 2)), Offered(2, "Fetch", None))
    assert json_codec.decode(tuple[Offered, ...], json_codec.encode(kept)) == kept


def test_a_client_that_could_validate_and_missed_the_truncation_still_fails() -> None:
    """The gate excuses only the broker's range: with OffsetForLeaderEpoch v2-v4 advertised, a kafka-clients
    consumer that read on from 50 past the divergence at 20, reporting nothing, is judged and fails."""
    require_truncation_detectable("java", RELEASE)
    with pytest.raises(TruncationNotSurfaced, match="did not surface the truncation at 20"):
        assert_truncation_surfaced("java", (ClientRecord(50, "new-leader-30", 2),), (), 20)
