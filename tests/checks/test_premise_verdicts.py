"""A premise that did not hold is never a FAIL: the checks end it as the premise verdict the target
earned (TargetRefused, NotSupported, ClientLacks), or as the harness's own ERROR (SceneUnmet); only
a broken promise is an AssertionError (recorded 4.4.0 runs, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from alterations import typed
from recordings import Recording, batches

from harness.checks.client_reactions import (
    assert_first_fetch_uses_the_reset_epoch,
    assert_read_on_through_epoch_errors,
    assert_validated_only_once_metadata_caught_up,
    assert_written_once_through_epoch_errors,
)
from harness.checks.committed_offsets import assert_txn_commit_epochs_follow_consumption
from harness.checks.epoch_fencing import assert_offsets_for_epoch_authorized_by_describe
from harness.checks.epoch_lineage import assert_metadata_versions_agree
from harness.checks.kip1319 import (
    assert_copier_aborted_without_retry,
    assert_failed_topic_named,
    assert_mixed_answer_retried,
)
from harness.checks.network_splits import (
    assert_fenced_replica_kept_out_of_the_isr,
    assert_no_acknowledged_write_lost,
    assert_zombie_refuses_the_new_epoch,
    assert_zombie_refuses_writes_at_the_new_epoch,
)
from harness.checks.truncation import assert_resumed_at_divergence, assert_resumed_at_next_epoch_start
from harness.errors import (
    ClientLacks,
    NotSupported,
    SceneUnmet,
    TargetRefused,
    VerdictError,
    require_scene,
    require_target,
)
from harness.histories.authorization import OffsetsForEpochAuthorization
from harness.histories.client_reactions import ClientRecord, CommittedAhead, EpochErrorRun, ResetFetch
from harness.histories.kip1319 import ClientRun
from harness.histories.text_records import DeliveryReport, LogRecord
from harness.histories.truncation import ConsumerError, RepeatedUncleanConsumer


def _exchange(api: str, version: int, outcome: str = "answered") -> dict[str, Any]:
    return {"api": api, "version": version, "outcome": outcome}


# -- the helpers -----------------------------------------------------------------------------------


def test_a_held_premise_raises_nothing() -> None:
    require_scene([1], "unused")
    require_target(True, "unused")


def test_an_unmet_scene_is_an_error_and_a_refused_premise_a_verdict_neither_a_failure() -> None:
    with pytest.raises(SceneUnmet, match="the harness sent nothing") as scene:
        require_scene([], "the harness sent nothing")
    with pytest.raises(TargetRefused, match="the target closed the connection") as refused:
        require_target(False, "the target closed the connection")
    assert not isinstance(scene.value, AssertionError | VerdictError)
    assert isinstance(refused.value, VerdictError) and not isinstance(refused.value, AssertionError)


# -- clients through the proxy (harness.checks.client_reactions) ------------------------------------


@pytest.mark.parametrize("error", ["fenced", "unknown"])
def test_a_client_the_target_closed_on_at_api_versions_never_reached_it(recording: Recording, error: str) -> None:
    """Tansu 0.6.0 and the Java 4.4.0 client: the connection closes on ApiVersions v5, no Fetch is sent."""
    run = recording(f"kip320-client-{error}-java")
    run.update(refused=0, after=[], reads=[], exchanges=[_exchange("ApiVersions", 5, "connection-lost")])
    with pytest.raises(TargetRefused, match=r"java never sent Fetch to the target.*ApiVersions v5: connection-lost"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def test_a_client_that_never_reached_the_proxy_is_a_refused_premise(recording: Recording) -> None:
    run = recording("kip320-client-fenced-librdkafka")
    run.update(refused=0, exchanges=[{"api": "connect", "version": -1, "outcome": "broker 1: ConnectionRefused"}])
    with pytest.raises(TargetRefused, match="connect: broker 1: ConnectionRefused"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def test_a_client_that_fetched_only_below_v9_does_not_support_the_field(recording: Recording) -> None:
    run = recording("kip320-client-unknown-librdkafka")
    run.update(refused=0, exchanges=[_exchange("Metadata", 9), _exchange("Fetch", 4), _exchange("Fetch", 4)])
    with pytest.raises(ClientLacks, match=r"CurrentLeaderEpoch in Fetch .* \(it sent Fetch v\[4\], none from v9\)"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def test_fetches_the_target_never_answered_are_a_refused_premise(recording: Recording) -> None:
    run = recording("kip320-client-unknown-java")
    run.update(refused=0, exchanges=[_exchange("Fetch", 17, "connection-lost")])
    with pytest.raises(TargetRefused, match=r"the target answered none of java's Fetch requests from v9"):
        assert_read_on_through_epoch_errors(typed(EpochErrorRun, run))


def test_a_producer_that_never_sent_produce_is_a_refused_premise() -> None:
    run = {"client": "librdkafka producer", "error": "FENCED_LEADER_EPOCH", "refused": 0, "errors": [],
           "written": [], "reads": [], "after": [],
           "exchanges": [_exchange("ApiVersions", 4), _exchange("Metadata", 12)]}
    with pytest.raises(TargetRefused, match=r"never sent Produce to the target.*Metadata v12: answered"):
        assert_written_once_through_epoch_errors(typed(EpochErrorRun, run))


def test_produce_answers_the_rule_left_alone_are_the_harness_s_error() -> None:
    run = {"client": "librdkafka producer", "error": "FENCED_LEADER_EPOCH", "refused": 0, "errors": [],
           "written": [], "reads": [], "after": [], "exchanges": [_exchange("Produce", 11)]}
    with pytest.raises(SceneUnmet, match="acted on none of the 1 Produce answers"):
        assert_written_once_through_epoch_errors(typed(EpochErrorRun, run))


def test_a_member_asking_metadata_without_epochs_does_not_support_them(recording: Recording) -> None:
    run = recording("kip320-committed-ahead-java")
    run.update(stale=0, exchanges=[_exchange("Metadata", 5)])
    with pytest.raises(ClientLacks, match=r"leader epochs in Metadata .* \(it sent Metadata v\[5\], none from v7\)"):
        assert_validated_only_once_metadata_caught_up(typed(CommittedAhead, run))


def test_a_reset_the_target_answered_only_with_errors_is_a_refused_premise(recording: Recording) -> None:
    run = recording("kip320-reset-fetch-librdkafka-earliest")
    for a in run["list_offsets"]:
        a["error"] = "NOT_LEADER_OR_FOLLOWER"
    with pytest.raises(TargetRefused, match="got no ListOffsets answer without an error"):
        assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))


def test_a_reset_is_judged_by_the_lookup_its_policy_names_among_others(recording: Recording) -> None:
    """sarama asks LATEST, then EARLIEST, and starts at the one its policy names: the check reads
    that one, not the first answer."""
    run = recording("kip320-reset-fetch-librdkafka-earliest")
    (earliest,) = run["list_offsets"]
    latest = {**earliest, "offset": 30, "epoch": 1, "timestamp": -1}
    run["list_offsets"] = [latest, {**earliest, "timestamp": -2}]
    assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))  # the first Fetch asks 0, EARLIEST's
    run["list_offsets"] = [latest]
    with pytest.raises(TargetRefused, match="got no ListOffsets answer without an error"):
        assert_first_fetch_uses_the_reset_epoch(typed(ResetFetch, run))


# -- partitions (harness.checks.network_splits) ---------------------------------------------------------


def test_a_zombie_without_fetch_v9_does_not_support_the_fenced_fetch() -> None:
    with pytest.raises(NotSupported, match=r"zombie 2 advertises Fetch v0-v8"):
        assert_zombie_refuses_the_new_epoch([], "zombie 2", (0, 8))


def test_a_zombie_without_produce_epochs_does_not_support_the_fenced_write() -> None:
    with pytest.raises(NotSupported, match="KIP-359 CurrentLeaderEpoch in Produce"):
        assert_zombie_refuses_writes_at_the_new_epoch([], [], "zombie 2")


def test_no_write_sent_is_the_harness_s_error_and_none_acknowledged_a_refused_premise(recording: Recording) -> None:
    r = recording("partition-minority-leader")
    with pytest.raises(SceneUnmet, match="reported no write"):
        assert_no_acknowledged_write_lost([], typed(list[LogRecord], r["log"]))
    refused = [{**w, "offset": None, "error": "Broker: Not enough in-sync replicas"} for w in r["writes"]]
    with pytest.raises(TargetRefused, match=rf"acknowledged none of the {len(refused)} acks=all writes"):
        assert_no_acknowledged_write_lost(typed(list[DeliveryReport], refused), typed(list[LogRecord], r["log"]))


def test_an_isr_never_watched_is_the_harness_s_error() -> None:
    with pytest.raises(SceneUnmet, match="never watched the ISR while follower 3"):
        assert_fenced_replica_kept_out_of_the_isr([], 3)


# -- scenes the harness builds (truncation, commits, Metadata, authorization, KIP-1319 clients) ------


def test_a_consumer_that_never_passed_the_divergence_is_the_harness_s_error(recording: Recording) -> None:
    r = recording("partition-zombie-java-earliest")
    with pytest.raises(SceneUnmet, match=r"the consumer beyond it: .* the consumer was at"):
        assert_resumed_at_divergence("java", typed(list[ClientRecord], r["reads"]),
                                     typed(list[ConsumerError], r["errors"]), r["divergence"], r["divergence"],
                                     typed(list[LogRecord], r["new_leader_writes"]))


def test_two_elections_out_of_order_are_the_harness_s_error(recording: Recording) -> None:
    r = recording("kip320-repeated-unclean-java-earliest")
    r["e1_start"] = r["e2_start"]
    with pytest.raises(SceneUnmet, match="the harness's scene needs"):
        assert_resumed_at_next_epoch_start("java", typed(RepeatedUncleanConsumer, r))


def test_a_copier_that_sent_no_txn_offset_commit_is_the_harness_s_error(recording: Recording) -> None:
    r = recording("kip1094-txn-commit-epochs")
    with pytest.raises(SceneUnmet, match="copier sent no TxnOffsetCommit"):
        assert_txn_commit_epochs_follow_consumption([], batches(r["log"]), "java")


def test_no_metadata_asked_is_the_harness_s_error() -> None:
    with pytest.raises(SceneUnmet, match="asked no broker for Metadata"):
        assert_metadata_versions_agree([], 3)


def test_an_authorization_probe_without_a_denied_topic_is_the_harness_s_error(recording: Recording) -> None:
    r = recording("kip320-offsets-for-epoch-authorization")
    allowed = [a for a in typed(OffsetsForEpochAuthorization, r).answers if a.allowed]
    with pytest.raises(SceneUnmet, match="no allowed and no denied topic"):
        assert_offsets_for_epoch_authorized_by_describe(allowed, r["user"])


def test_a_mixed_commit_naming_one_topic_is_the_harness_s_error(recording: Recording) -> None:
    run = recording("kip1319-java-mixed-outcome")
    first = run["commits"][0]["response"]["Topics"]
    failed = next(t["TopicId"] for t in first if any(p["ErrorCode"] == 100 for p in t["Partitions"]))
    for c in run["commits"]:
        c["request"]["Topics"] = [t for t in c["request"]["Topics"] if t["TopicId"] == failed]
    with pytest.raises(SceneUnmet, match="first TxnOffsetCommit names"):
        assert_mixed_answer_retried(typed(ClientRun, run), failed)


def test_a_group_error_the_proxy_never_injected_is_the_harness_s_error(recording: Recording) -> None:
    run = recording("kip1319-franz-go-abort-GROUP_ID_NOT_FOUND")
    for t in run["commits"][0]["response"]["Topics"]:
        for p in t["Partitions"]:
            p["ErrorCode"] = 0
    with pytest.raises(SceneUnmet, match=r"should answer franz-go .*'s first TxnOffsetCommit GROUP_ID_NOT_FOUND"):
        assert_copier_aborted_without_retry(typed(ClientRun, run))


def test_a_copier_transaction_of_one_topic_is_the_harness_s_error(recording: Recording) -> None:
    run = recording("kip1319-franz-go-mixed-outcome")
    topics = run["commits"][0]["request"]["Topics"]
    run["commits"][0]["request"]["Topics"] = topics[:1]
    with pytest.raises(SceneUnmet, match="copier fills each transaction from two topics"):
        assert_failed_topic_named(typed(ClientRun, run), "second", "first")
