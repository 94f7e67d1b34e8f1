"""KIP-320 consumer truncation detection after a forced unclean election (confluent-kafka and Java)."""

from __future__ import annotations

import pytest

from harness.checks import recorded
from harness.checks.truncation import TruncationNotSurfaced, assert_resumed_at_divergence, assert_truncation_surfaced
from harness.scenarios.truncation import LIBRDKAFKA_VERSION, NO_RESET, TruncationHistory
from harness.verdicts import known_gap

pytestmark = [pytest.mark.kip320, pytest.mark.needs_fault_control]

LIBRDKAFKA_GROUP_GAP = known_gap("librdkafka-restart-skips-truncation", LIBRDKAFKA_VERSION)


def _judged(truncation: TruncationHistory, name: str) -> tuple[list[dict], list[dict]]:
    o = truncation.observed[name]
    recorded.save(f"kip320-truncation-{name.replace('/', '-')}", {
        "reads": o.reads, "errors": o.errors, "divergence": truncation.divergence,
        "position_before": truncation.position_before, "new_leader_writes": truncation.new_leader_writes,
    })
    return o.reads, o.errors


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.parametrize("client", ["librdkafka", "java"])
@pytest.mark.promise("kip320.consumer.resets-to-divergence")
def test_consumer_beyond_the_divergence_point_resumes_exactly_there(
    truncation: TruncationHistory, client: str, reset: str
) -> None:
    """KIP-320, "Consumer Handling": a consumer positioned beyond the divergence point when the
    unclean election truncates its records, with auto.offset.reset earliest or latest, resets "as
    precisely as possible": it resumes at the divergence offset, not at the log start nor at the
    end, and reads every record the new leader wrote, in order."""
    reads, errors = _judged(truncation, f"{client}/{reset}")
    try:
        assert_resumed_at_divergence(
            client, reads, errors, truncation.divergence, truncation.position_before, truncation.new_leader_writes
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {truncation.evidence()}") from None


@pytest.mark.parametrize("client", ["librdkafka", "java"])
@pytest.mark.promise("kip320.consumer.raises-log-truncation")
def test_consumer_without_reset_policy_surfaces_the_truncation(truncation: TruncationHistory, client: str) -> None:
    """KIP-320, "Consumer Handling": with no auto reset policy, poll raises the truncation
    (LogTruncationException with the divergent offset; in librdkafka an _AUTO_OFFSET_RESET error
    naming the truncation) instead of reading on."""
    reads, errors = _judged(truncation, f"{client}/{NO_RESET[client]}")
    try:
        assert_truncation_surfaced(client, reads, errors, truncation.divergence)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {truncation.evidence()}") from None


@pytest.mark.parametrize("client", ["librdkafka", "java"])
@pytest.mark.promise("kip320.consumer.group-restart-detects")
def test_restarted_group_detects_truncation_from_its_committed_epoch(
    truncation: TruncationHistory, client: str
) -> None:
    """KIP-320, "For consumers ... 2.": the leader epoch in the offset commit "allows consumer groups
    to detect truncation across rebalances or restarts". A group committed (50, epoch before the
    election); a new member started after it, with no reset policy, must report the truncation
    rather than read on from offset 50 and skip the new leader's records 20..49."""
    committed = truncation.committed_before[client]
    expected = {"offset": truncation.position_before, "epoch": truncation.election.epoch_before}
    assert committed == expected, f"premise: the group committed {committed} before the election, expected {expected}"
    reads, errors = _judged(truncation, f"{client}/group-restart")
    try:
        assert_truncation_surfaced(client, reads, errors, truncation.divergence)
    except TruncationNotSurfaced as exc:
        if client == "librdkafka":
            LIBRDKAFKA_GROUP_GAP.found(exc)
        raise AssertionError(f"{exc}\n  group committed {committed}; {truncation.evidence()}") from None


@pytest.mark.parametrize("client", ["librdkafka", "java"])
@pytest.mark.promise("kip320.consumer.seek-with-epoch-validated")
def test_position_restored_with_its_epoch_is_validated_on_the_next_poll(
    truncation: TruncationHistory, client: str
) -> None:
    """KIP-320 "Consumer Handling", extension 3: "an alternative seek API so that users can initialize
    the offset and leader epoch" of a position stored outside Kafka. After the election, a consumer
    with no reset policy is positioned at the offset the others had reached with the epoch of the
    record before it (Java: seek with an OffsetAndMetadata carrying the epoch; librdkafka: an
    assignment carrying the leader epoch). Its next poll reports the truncation at the divergence
    offset instead of reading the new leader's records from that offset on."""
    reads, errors = _judged(truncation, f"{client}/seek")
    try:
        assert_truncation_surfaced(client, reads, errors, truncation.divergence)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  sought ({truncation.position_before}, epoch "
                             f"{truncation.election.epoch_before}); {truncation.evidence()}") from None
