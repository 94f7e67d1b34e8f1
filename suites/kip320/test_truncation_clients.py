"""KIP-320 consumer truncation detection after a forced unclean election, for every client stack judged
(librdkafka of the run's confluent-kafka release, the Java clients, franz-go with --go-client).

The checks of detection need the new leader to advertise an OffsetForLeaderEpoch version the client
validates with (kafka-clients v3+, librdkafka v2, franz-go v2+): without one they end "not supported by
this target", the leader's OffsetForLeaderEpoch and Fetch ranges the evidence (harness.checks.truncation)."""

from __future__ import annotations

import pytest

from harness.checks.truncation import (
    ReadOnAfterSurfacing,
    TruncationNotSurfaced,
    assert_resumed_at_divergence,
    assert_truncation_surfaced,
    require_truncation_detectable,
)
from harness.histories import store
from harness.histories.client_reactions import ClientRecord
from harness.histories.truncation import CommitFailed, ConsumerError, GroupCommit
from harness.scenarios.truncation import NO_RESET, STACKS, TruncationHistory, gap_version
from harness.verdicts import ClientGap, known_gap, not_supported_by_client, require_target

pytestmark = [pytest.mark.kip320, pytest.mark.needs_fault_control, pytest.mark.client_axis]

# A stack's gaps that a surfacing check may meet, by the failure that shows each.
GAPS = {
    ("librdkafka", "restart"): "librdkafka-restart-skips-truncation",
    ("franz-go", "read-on"): "franz-go-reads-on-after-data-loss",
}


def _judged(truncation: TruncationHistory, name: str) -> tuple[tuple[ClientRecord, ...], tuple[ConsumerError, ...]]:
    """The consumer's reads and errors after the election (saved as evidence); a consumer the client
    version could not set up ends as "not supported by this client", with the driver's answer."""
    o = truncation.consumer(name)
    client = name.split("/")[0]
    store.save(f"kip320-truncation-{name.replace('/', '-')}", o)
    lacking = [r for r in o.refused if r.lacks]
    if lacking:
        r = lacking[0]
        not_supported_by_client(truncation.clients.get(client) or client, f"the API behind `{r.command}`",
                                f"{r.exception}: {r.message}")
    assert not o.refused, f"{name}: the driver could not set the consumer up: {o.refused}"
    return o.reads, o.errors


def _without_epoch(committed: GroupCommit | CommitFailed, expected: GroupCommit) -> bool:
    """The commit landed where expected but its client read back no epoch: its release has none to give."""
    return isinstance(committed, GroupCommit) and committed.epoch is None and committed.offset == expected.offset


def _gap(truncation: TruncationHistory, client: str, failure: str) -> ClientGap | None:
    gap_id = GAPS.get((client, failure))
    return known_gap(gap_id, gap_version(client, truncation.clients.get(client))) if gap_id else None


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.resets-to-divergence")
def test_consumer_beyond_the_divergence_point_resumes_exactly_there(
    truncation: TruncationHistory, client: str, reset: str
) -> None:
    """KIP-320, "Consumer Handling": a consumer positioned beyond the divergence point when the
    unclean election truncates its records, with auto.offset.reset earliest or latest, resets "as
    precisely as possible": it resumes at the divergence offset, not at the log start nor at the
    end, and reads every record the new leader wrote, in order."""
    reads, errors = _judged(truncation, f"{client}/{reset}")
    require_truncation_detectable(client, truncation.leader_offers)
    try:
        assert_resumed_at_divergence(
            client, reads, errors, truncation.divergence, truncation.position_before, truncation.new_leader_writes
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {truncation.evidence()}") from None


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.raises-log-truncation")
def test_consumer_without_reset_policy_surfaces_the_truncation(truncation: TruncationHistory, client: str) -> None:
    """KIP-320, "Consumer Handling": with no auto reset policy, poll raises the truncation
    (LogTruncationException with the divergent offset; in librdkafka an _AUTO_OFFSET_RESET error
    naming the truncation) instead of reading on."""
    reads, errors = _judged(truncation, f"{client}/{NO_RESET[client]}")
    require_truncation_detectable(client, truncation.leader_offers)
    _assert_surfaced(truncation, client, reads, errors, "")


def _assert_surfaced(truncation: TruncationHistory, client: str, reads: tuple[ClientRecord, ...],
                     errors: tuple[ConsumerError, ...], scene: str, gap_on_silence: str | None = None) -> None:
    """assert_truncation_surfaced, with the client's known gaps: reading on after surfacing it
    (franz-go), and `gap_on_silence`, the failure name of a gap for not surfacing it at all."""
    try:
        assert_truncation_surfaced(client, reads, errors, truncation.divergence)
    except ReadOnAfterSurfacing as exc:
        gap = _gap(truncation, client, "read-on")
        if gap is not None:
            gap.found(exc)
        raise AssertionError(f"{exc}\n  {scene}{truncation.evidence()}") from None
    except TruncationNotSurfaced as exc:
        gap = _gap(truncation, client, gap_on_silence) if gap_on_silence else None
        if gap is not None:
            gap.found(exc)
        raise AssertionError(f"{exc}\n  {scene}{truncation.evidence()}") from None


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.group-restart-detects")
def test_restarted_group_detects_truncation_from_its_committed_epoch(
    truncation: TruncationHistory, client: str
) -> None:
    """KIP-320, "For consumers ... 2.": the leader epoch in the offset commit "allows consumer groups
    to detect truncation across rebalances or restarts". A group committed (50, epoch before the
    election); a new member started after it, with no reset policy, must report the truncation
    rather than read on from offset 50 and skip the new leader's records 20..49."""
    committed = truncation.committed_before[client]
    expected = GroupCommit(truncation.position_before, truncation.election.epoch_before)
    reads, errors = _judged(truncation, f"{client}/group-restart")
    if _without_epoch(committed, expected):
        not_supported_by_client(truncation.clients.get(client) or client, "a leader epoch in its offset commits",
                                f"committed() read back {committed}")
    require_target(not isinstance(committed, CommitFailed),
                   f"the target refused the group's commit before the election: {committed}")
    assert committed == expected, (
        f"KIP-320 \"Protocol Changes / OffsetCommit\" (the commit carries \"the epoch of the previously fetched "
        f"record\"): the group read through offset {expected.offset - 1}, appended at epoch {expected.epoch}, "
        f"and committed {committed} read back, expected {expected}")
    require_truncation_detectable(client, truncation.leader_offers)
    _assert_surfaced(truncation, client, reads, errors, f"group committed {committed}; ", "restart")


@pytest.mark.parametrize("client", STACKS)
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
    require_truncation_detectable(client, truncation.leader_offers)
    _assert_surfaced(truncation, client, reads, errors,
                     f"sought ({truncation.position_before}, epoch {truncation.election.epoch_before}); ")


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.commits-epoch")
def test_group_commit_carries_the_leader_epoch_of_the_last_consumed_record(
    truncation: TruncationHistory, client: str
) -> None:
    """KIP-320 "Consumer Handling": the consumer commits, with the offset, the leader epoch of the
    previously consumed record ("For consumers ... 2."). The group member read through the divergent
    records, written at the old leader's epoch, and committed synchronously before the election:
    OffsetFetch reads back (50, that epoch)."""
    committed = truncation.committed_before[client]
    expected = GroupCommit(truncation.position_before, truncation.election.epoch_before)
    store.save(f"kip320-truncation-{client}-commit", {"client": truncation.clients.get(client),
                                                      "committed": committed, "expected": expected})
    if _without_epoch(committed, expected):
        not_supported_by_client(truncation.clients.get(client) or client, "a leader epoch in its offset commits",
                                f"committed() read back {committed}")
    assert committed == expected, (
        f"{client} ({truncation.clients.get(client)}) committed {committed} after reading through offset "
        f"{expected.offset - 1} at epoch {expected.epoch}; expected {expected}\n  {truncation.evidence()}")


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.record-epoch-exposed")
def test_consumed_records_expose_the_leader_epoch_they_were_written_in(
    truncation: TruncationHistory, client: str
) -> None:
    """KIP-320 "Consumer Handling", extension 3: each consumed record exposes the leader epoch of its
    batch, so that an application can store (offset, epoch) outside Kafka. Every record the
    `earliest` consumer read after the election was written by the new leader, at its epoch: the
    epoch of the batch holding it, as the leader serves its log (the election's, or a later one where
    the controller moved the lead again before the writes)."""
    reads, _ = _judged(truncation, f"{client}/earliest")
    assert reads, f"{client} read nothing after the election\n  {truncation.evidence()}"
    if all(r.epoch is None for r in reads):
        not_supported_by_client(truncation.clients.get(client) or client, "the leader epoch of a consumed record",
                                f"{len(reads)} records read, none with an epoch")
    stale = truncation.stamped_before_the_election()
    assert not stale, (f"the new leader served records written after the election in batches stamped with an older "
                       f"epoch than its {truncation.election.epoch_after} (offset, epoch): {stale[:3]}"
                       f"\n  {truncation.evidence()}")
    wrong = [(r, truncation.written_epoch(r.offset)) for r in reads if r.epoch != truncation.written_epoch(r.offset)]
    assert not wrong, (f"{client} exposed {len(wrong)} of {len(reads)} records with another epoch than the one "
                       f"they were written in (record, batch epoch): first {wrong[:3]}; the election's epoch "
                       f"{truncation.election.epoch_after}, the batches' {truncation.batch_epochs()}"
                       f"\n  {truncation.evidence()}")
