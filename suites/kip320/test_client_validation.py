"""When a KIP-320 consumer validates its position, for every client stack judged: a validation the
leader answers with no offset (UNDEFINED_EPOCH_OFFSET), one it answers with a retriable error and no
offset, and a seek without an epoch that is not validated at all. Every scene reads one partition of
30 records through the protocol proxy, which rewrites the OffsetsForLeaderEpoch answers
(harness.scenarios.client_validation)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from harness.checks.client_validation import (
    assert_seek_without_epoch_skips_validation,
    assert_undefined_epoch_resets_by_policy,
    assert_validation_error_retried,
)
from harness.histories import store
from harness.histories.kip320_clients import UndefinedEpochRun, WrittenPartition
from harness.scenarios.client_validation import (
    seek_without_epoch,
    undefined_epoch_answered,
    validation_error_answered,
    written_partition,
)
from harness.scenarios.truncation import NO_RESET, STACKS

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis]


@pytest.fixture(scope="module")
def written(request: pytest.FixtureRequest, cluster: Cluster) -> WrittenPartition:
    """30 records in one partition, read (never committed) by every consumer of the module."""
    return written_partition(cluster, module_topic(request, "validation", 3))


@pytest.fixture(scope="module")
def undefined_epoch(cluster: Cluster, written: WrittenPartition) -> Callable[[str], dict[str, UndefinedEpochRun]]:
    """`undefined_epoch(client)`: the scene of each reset policy of `client`, one driver for all three,
    run once per client for the module."""
    runs: dict[str, dict[str, UndefinedEpochRun]] = {}

    def of(client: str) -> dict[str, UndefinedEpochRun]:
        if client not in runs:
            runs[client] = undefined_epoch_answered(cluster, written, client)
        return runs[client]

    return of


@pytest.mark.parametrize("reset", ["earliest", "latest", "none"])
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.undefined-epoch-resets-by-policy")
def test_validation_answered_with_no_offset_resets_by_the_policy(
    undefined_epoch: Callable[[str], dict[str, UndefinedEpochRun]], client: str, reset: str
) -> None:
    """KIP-320 "Consumer Handling" (the reset policy paragraph): "In some edge scenarios, it may not be
    possible to find this offset precisely and we still have to resort to the reset policy." A consumer
    positioned at (15, the partition's epoch) by seek with an epoch validates it; the protocol proxy
    answers every OffsetsForLeaderEpoch with UNDEFINED_EPOCH_OFFSET (leader epoch -1, end offset -1).
    With earliest it resumes at the log start and reads all 30 records; with latest its next Fetch asks
    for the log end and it reads nothing; with no reset policy (librdkafka `error`, Java and franz-go
    `none`) it reports an error and reads nothing, instead of reading on from 15."""
    run = undefined_epoch(client)[NO_RESET[client] if reset == "none" else reset]
    store.save(f"kip320-undefined-epoch-{client}-{reset}", run)
    assert_undefined_epoch_resets_by_policy(run)


@pytest.mark.parametrize("error", ["FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH"])
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.validation-error-retried")
def test_validation_answered_with_a_retriable_error_is_sent_again(
    cluster: Cluster, written: WrittenPartition, client: str, error: str
) -> None:
    """KIP-320 "Protocol Changes / OffsetsForLeaderEpoch": "If the current leader epoch does not match
    that of the leader, then we will send either FENCED_REPLICA or UNKNOWN_LEADER_EPOCH as we do for the
    Fetch API"; both are retriable ("Public Interfaces": the exceptions extend RetriableException, "the
    consumer will internally retry when it receives this error"). A consumer positioned at (15, the
    partition's epoch) by seek with an epoch, auto.offset.reset earliest, validates it; the protocol
    proxy answers its first two OffsetsForLeaderEpoch requests with `error` and no offset (leader epoch
    -1, end offset -1), the later ones as the broker does. It validates again until answered, fetches
    nothing before that, does not reset (no ListOffsets, no move to the log start), reports nothing,
    and then reads 15..29 once each."""
    run = validation_error_answered(cluster, written, client, error)
    store.save(f"kip320-validation-error-{client}-{error}", run)
    assert_validation_error_retried(run)


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.seek-without-epoch-unvalidated")
def test_seek_without_an_epoch_fetches_the_offset_without_validation(
    cluster: Cluster, written: WrittenPartition, client: str
) -> None:
    """KIP-320 "Public Interfaces", seek(TopicPartition, OffsetAndMetadata): "If a leader epoch has been
    provided, then in the next call to poll(), the consumer will use the OffsetForLeaderEpoch API to
    check for truncation." A consumer positioned at offset 15 by seek without an epoch (no reset policy)
    sends no OffsetsForLeaderEpoch for the partition before it fetches; its first Fetch asks for 15 and
    it reads 15..29 once each, although the proxy answers every OffsetsForLeaderEpoch with the epoch
    ending at 5 (a validating consumer would move there or report it). The control beside it, sought to
    (15, the partition's epoch), does validate: the proxy sees validations when they are sent."""
    run = seek_without_epoch(cluster, written, client)
    store.save(f"kip320-seek-without-epoch-{client}", run)
    assert_seek_without_epoch_skips_validation(run)
