"""KIP-320 on a partition asked about what holds no record: lookups by time on its empty log, and
OffsetsForLeaderEpoch at epochs leader moves reached with no write since (see
harness.scenarios.idle_partition). One scene for the module."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from harness.checks.idle_partition import assert_empty_partition_lookups_find_nothing, assert_unwritten_epoch_answered
from harness.histories import store
from harness.histories.idle_partition import IdlePartition
from harness.scenarios.idle_partition import idle_partition

pytestmark = pytest.mark.kip320


@pytest.fixture(scope="module")
def idle(request: pytest.FixtureRequest, cluster: Cluster) -> IdlePartition:
    """A 3-replica partition, empty through a leader move, then moved again after 5 records."""
    return idle_partition(cluster, module_topic(request, "idle", 3))


@pytest.mark.promise("kip320.list-offsets.after-last-record-undefined")
def test_list_offsets_by_time_on_an_empty_partition_answers_no_offset_and_no_epoch(idle: IdlePartition) -> None:
    """KIP-320, "Protocol Changes / ListOffsets" and "Compatibility, Deprecation, and Migration Plan" (the
    sentinel -1 where there is no epoch), on ListOffsets' own rule "if no such message is found, returns
    -1" (KIP-79): on a partition nothing was written to, as created and after a leader move, every lookup
    by time is answered without an error with offset -1 and, from v4, leader epoch -1 (not the current
    epoch), at every version from v1. The leader's own EARLIEST and LATEST must agree that it is empty."""
    store.save("kip320-idle-partition", idle)
    assert_empty_partition_lookups_find_nothing(idle.empty)


@pytest.mark.promise("kip320.ofle.newer-epoch-unknown", "kip320.ofle.epoch-end-offsets")
def test_offsets_for_leader_epoch_answers_an_epoch_reached_without_a_write(idle: IdlePartition) -> None:
    """KIP-320, "Protocol Changes / OffsetsForLeaderEpoch" (CurrentLeaderEpoch is validated as for Fetch:
    the leader's current epoch is answered, only a newer one gets UNKNOWN_LEADER_EPOCH) and "Replica
    Handling" (the current epoch ends at the log end offset): after a leader move with nothing written
    since, into an empty log and after records, the leader answers its current epoch, which no record
    carries, with (that epoch, log end), and the epoch of the last record (what a consumer at the log end
    validates its position with, "Consumer Handling") with (that epoch, log end), each asked with the
    current epoch as CurrentLeaderEpoch, at every version from v2."""
    store.save("kip320-idle-partition", idle)
    assert_unwritten_epoch_answered(idle.require_unwritten())
