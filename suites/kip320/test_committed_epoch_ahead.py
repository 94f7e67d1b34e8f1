"""KIP-320 consumers starting from a commit whose epoch is ahead of their metadata (the KIP-232 case)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.client_reactions import CommittedOffsetsNeverFetched, assert_validated_only_once_metadata_caught_up
from harness.histories import store
from harness.scenarios.client_reactions import committed_epoch_ahead_of_metadata
from harness.scenarios.truncation import STACKS
from harness.verdicts import not_supported_by_client, stall_is_known_gap

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis]
METADATA_WITH_EPOCH = 7  # the Metadata version whose answer carries each partition's leader epoch (KIP-320)


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.waits-for-committed-epoch")
def test_consumer_waits_for_metadata_to_reach_the_committed_epoch(
    cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames, client: str
) -> None:
    """KIP-320 "Consumer Handling", extension 2: "Consumers are expected to wait until the metadata has
    at least reached the epoch of the committed offset before checking for truncation." The group
    committed (25, epoch 1) after a leader move; a member joins through the protocol proxy, whose first
    three Metadata answers show the partition at epoch 0. The member never sends OffsetsForLeaderEpoch
    for epoch 1 with a current epoch of 0, and reads records 25..29 once each, reporting nothing but the
    group's coordinator errors (retriable, of its OffsetFetch: harness.checks.client_reactions)."""
    run = committed_epoch_ahead_of_metadata(cluster, topic_factory(replication_factor=3), client,
                                            run_names.group(f"kip320-ahead-{client}"))
    store.save(f"kip320-committed-ahead-{client}", run)
    if run.metadata_versions and max(run.metadata_versions) < METADATA_WITH_EPOCH:
        not_supported_by_client(run.version or client, "leader epochs in Metadata (v7+, KIP-320)",
                                f"it asked Metadata v{run.metadata_versions}; the proxy had no epoch to show behind")
    try:
        assert_validated_only_once_metadata_caught_up(run)
    except CommittedOffsetsNeverFetched as exc:
        # Its group's OffsetFetch refused with a retriable coordinator error, it never asked again.
        stall_is_known_gap(client, exc)
        raise
