"""The KIP-1094 guide's phase 3 on the client side: a committed epoch ahead of a consumer's metadata forces
a metadata refresh before it fetches (every client stack judged).

librdkafka fetches at once at its metadata's stale epoch: its FetchedOnStaleMetadata, and only that,
is the known client gap librdkafka-committed-epoch-no-refresh (harness/client_gaps.toml, with the
source lines), for the librdkafka versions the table names; one that never fetched after its group's
OffsetFetch was answered a retriable coordinator error (CommittedOffsetsNeverFetched) is
librdkafka-offset-fetch-coordinator-error-stalls; any other failure stays a FAIL."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.client_reactions import CommittedOffsetsNeverFetched
from harness.checks.committed_refresh import FetchedOnStaleMetadata, assert_committed_epoch_forces_a_refresh
from harness.histories import store
from harness.scenarios.committed_refresh import committed_epoch_refresh
from harness.scenarios.truncation import STACKS
from harness.verdicts import known_gap, stall_is_known_gap

pytestmark = [pytest.mark.kip1094, pytest.mark.client_axis]

# The stacks' known gaps for this check (harness/client_gaps.toml), each met by FetchedOnStaleMetadata.
GAPS = {"librdkafka": "librdkafka-committed-epoch-no-refresh"}


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip1094.consumer.committed-epoch-forces-refresh")
def test_a_committed_epoch_ahead_of_metadata_makes_the_consumer_refresh_before_it_fetches(
    cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames, client: str
) -> None:
    """KIP-1094 guide, "Committing Leader Epoch", phase 3: a consumer assigned a partition whose stale
    metadata names a zombie leader "would have been forced to refresh its metadata. This is because the
    leader epoch of the committed offset Xj would be greater than the zombie leader's epoch ... and
    Consumer B would send the fetch request to the correct broker, avoiding the OFFSET_OUT_OF_RANGE
    error." The group committed (25, the partition's epoch after a leader move); the consumer joins
    through the protocol proxy, which shows its first three Metadata answers one epoch behind. After
    reading the commit it asks Metadata again before fetching, fences every Fetch of the partition at
    the committed epoch or later (a zombie at the stale epoch would serve a Fetch below it), and reads
    every record from 25 once."""
    run = committed_epoch_refresh(cluster, topic_factory(replication_factor=3), client,
                                  run_names.group(f"kip1094-committed-refresh-{client}"))
    store.save(f"kip1094-committed-refresh-{client}", run)
    try:
        assert_committed_epoch_forces_a_refresh(run)
    except FetchedOnStaleMetadata as exc:
        if client in GAPS:
            known_gap(GAPS[client], run.release.release if run.release else None).found(exc)
        raise
    except CommittedOffsetsNeverFetched as exc:
        stall_is_known_gap(client, exc)
        raise
