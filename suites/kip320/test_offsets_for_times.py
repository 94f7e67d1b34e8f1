"""KIP-320 offsetsForTimes with the leader epoch, for every client stack judged: a lookup by time of a
record written after a leader move (harness.scenarios.offsets_for_times)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from harness.checks.offsets_for_times import assert_lookup_carries_the_batch_epoch
from harness.checks.offsets_for_times_older import assert_lookup_in_an_older_epoch_carries_its_batch_epoch
from harness.histories import store
from harness.scenarios.offsets_for_times import TwoEpochPartition, lookup_by_time, two_epoch_partition
from harness.scenarios.offsets_for_times_older import (
    ThreeEpochPartition,
    looked_up_in_an_older_epoch,
    three_epoch_partition,
)
from harness.scenarios.truncation import STACKS

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis]


@pytest.fixture(scope="module")
def two_epochs(request: pytest.FixtureRequest, cluster: Cluster) -> TwoEpochPartition:
    """20 records, a leader move, 10 more, each at a CreateTime of the harness's choosing; built once."""
    return two_epoch_partition(cluster, module_topic(request, "times", 3))


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.offsets-for-times-epoch")
def test_offsets_for_times_returns_the_epoch_of_the_batch_found(
    cluster: Cluster, two_epochs: TwoEpochPartition, client: str
) -> None:
    """KIP-320 "Public Interfaces" (offsetsForTimes): the leader epoch is added to OffsetAndTimestamp,
    "the leader epoch corresponding to the offset that was found (if one exists)", so that the result
    can be given to seek() safely. On a partition written in two leader epochs (the move is required:
    Metadata's epoch rose and the log holds batches of both), the client's lookup of the timestamp of
    the sixth record written after the move returns that record's offset and the PartitionLeaderEpoch
    of the batch holding it in the leader's log (librdkafka offsets_for_times, TopicPartition.leader_epoch;
    Java OffsetAndTimestamp.leaderEpoch(); franz-go the ListOffsets answer's LeaderEpoch)."""
    run = lookup_by_time(cluster, two_epochs, client)
    store.save(f"kip320-offsets-for-times-{client}", run)
    assert_lookup_carries_the_batch_epoch(run)


@pytest.fixture(scope="module")
def three_epochs(request: pytest.FixtureRequest, cluster: Cluster) -> ThreeEpochPartition:
    """20 records, a leader move, 10 more, a second move, 10 more, each at a CreateTime of the harness's
    choosing; built once."""
    return three_epoch_partition(cluster, module_topic(request, "times-older", 3))


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.offsets-for-times-epoch")
def test_offsets_for_times_returns_an_older_epoch_than_the_current_one(
    cluster: Cluster, three_epochs: ThreeEpochPartition, client: str
) -> None:
    """KIP-320 "Public Interfaces" (offsetsForTimes): "the leader epoch corresponding to the offset that
    was found", also when the partition has moved on. The leader moved twice; the client looks up the
    timestamp of the sixth record written between the moves: it returns that record's offset and the
    PartitionLeaderEpoch of its batch, which is older than both the epoch Metadata gives now and the
    epoch of the log's newest batch (a client that echoed either passes a lookup in the current epoch,
    and fails here)."""
    run = looked_up_in_an_older_epoch(cluster, three_epochs, client)
    store.save(f"kip320-offsets-for-times-older-{client}", run)
    assert_lookup_in_an_older_epoch_carries_its_batch_epoch(run)
