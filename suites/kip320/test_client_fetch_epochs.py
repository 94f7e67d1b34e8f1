"""KIP-320 consumers fencing their Fetches with the leader epoch they were told (every client stack judged)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.client_fetch_epochs import (
    assert_fetch_epochs_follow_metadata,
    assert_reset_ahead_of_metadata_read_from_the_reset,
)
from harness.histories import store
from harness.scenarios.client_fetch_epochs import fetch_epochs_through_leader_move, reset_ahead_of_metadata
from harness.scenarios.truncation import STACKS

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis]


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.fetch-epoch-from-metadata")
def test_fetch_epoch_is_the_one_metadata_gave(cluster: Cluster, topic_factory: TopicFactory, client: str) -> None:
    """KIP-320 "Consumer Handling": "The consumer will obtain the current leader epoch using the Metadata
    API"; "Proposed Changes": "We will include the leader epoch in the Fetch request and the leader will
    reject the request if the epoch does not match its own." A consumer (assign at 0, no reset policy)
    reads 20 records through the protocol proxy; the harness moves the leader (a higher epoch) and
    writes 20 more. Every Fetch entry of the partition carries the epoch of the newest Metadata answer
    it had been given when it sent it (or the highest it knew; a KIP-951 leader hint in a Fetch answer
    counts as being told), never -1, and it fetched after learning the new epoch. A release known to
    fence Fetch (harness.clients.kip320_releases) that sends only -1 fails; an older one is "not
    supported by this client"."""
    run = fetch_epochs_through_leader_move(cluster, topic_factory(replication_factor=3), client)
    store.save(f"kip320-fetch-epochs-{client}", run)
    assert_fetch_epochs_follow_metadata(run)


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.reset-epoch-ahead-of-metadata")
def test_reset_ahead_of_metadata_reads_from_the_reset_offset(
    cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames, client: str, reset: str
) -> None:
    """KIP-320 "Consumer Handling", extension 1: ListOffsets returns "the corresponding epoch for any
    offsets looked up"; extension 2, the KIP-232 case: the epoch can "be ahead of the metadata that is
    known to the consumer. Consumers are expected to wait until the metadata has at least reached the
    epoch ... before checking for truncation." (An earlier revision had the consumer "use this in its
    first fetch request after resetting offsets"; the adopted text does not, so Metadata's epoch in
    that Fetch is no failure.) After a leader move, 20 records at the new epoch; a consumer of a group
    with no commit resets by `reset` through the protocol proxy, which shows every Metadata answer for
    the partition one epoch behind until the consumer has acted on the reset. The adopted text also
    fences ListOffsets ("To avoid querying stale leaders, we will add epoch fencing"), so a consumer
    fencing it with its stale epoch is refused and never resets: the proxy sends its ListOffsets on
    unfenced (-1), and the broker answers the offset and the new epoch. Then Metadata is answered
    honestly and 10 more records are written. The consumer fences
    every Fetch with an epoch it was told (Metadata's or ListOffsets'), never -1; sends no
    OffsetsForLeaderEpoch for the newer epoch with an older current one; and reads every record from
    the offset ListOffsets returned once, in order, reporting nothing."""
    run = reset_ahead_of_metadata(cluster, topic_factory(replication_factor=3), client, reset,
                                  run_names.group(f"kip320-reset-ahead-{client}-{reset}"))
    store.save(f"kip320-reset-ahead-{client}-{reset}", run)
    assert_reset_ahead_of_metadata_read_from_the_reset(run)
