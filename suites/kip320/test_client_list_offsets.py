"""KIP-320 consumers fencing their ListOffsets with the leader epoch they were told (every client stack judged)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.client_list_offsets import assert_list_offsets_fenced_with_the_told_epoch
from harness.histories import store
from harness.scenarios.client_fetch_epochs import reset_ahead_of_metadata
from harness.scenarios.truncation import STACKS

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis]


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.list-offsets-fenced")
def test_list_offsets_for_a_reset_is_fenced_with_the_epoch_metadata_gave(
    cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames, client: str, reset: str
) -> None:
    """KIP-320 "Consumer Handling", extension 1: "When the consumer needs to reset offsets, it uses the
    ListOffsets API to query the leader. To avoid querying stale leaders, we will add epoch fencing";
    "The consumer will use the current epoch when checking for truncation and when fencing." After a
    leader move, a consumer of a group with no commit resets by `reset` through the protocol proxy,
    which shows every Metadata answer for the partition one epoch behind the leader's (so the epoch
    the consumer knows and the partition's differ). Each ListOffsets entry (v4+) it sends for the
    partition carries CurrentLeaderEpoch equal to the epoch Metadata gave it: never -1 (no fencing),
    never the partition's true epoch, which it was not told. (The proxy passes the request on with
    -1, so that the reset completes; the recording keeps what the client sent.)"""
    run = reset_ahead_of_metadata(cluster, topic_factory(replication_factor=3), client, reset,
                                  run_names.group(f"kip320-list-offsets-fenced-{client}-{reset}"))
    store.save(f"kip320-list-offsets-fenced-{client}-{reset}", run)
    assert_list_offsets_fenced_with_the_told_epoch(run)
