"""KIP-359 on the client side: the producer puts the leader epoch Metadata gave it into Produce."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.producer_epochs import assert_produce_carries_the_metadata_epoch
from harness.histories import store
from harness.scenarios.producer_epochs import producer_epochs
from harness.scenarios.truncation import STACKS

pytestmark = [pytest.mark.kip359, pytest.mark.client_axis]


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip359.producer.sends-metadata-epoch")
def test_producer_fences_produce_with_the_epoch_metadata_gave(
    cluster: Cluster, topic_factory: TopicFactory, client: str
) -> None:
    """KIP-359 "Proposed Changes": "Now that we include the leader epoch in the Metadata API, the
    producer will be able to add it to Produce requests to verify metadata consistency between the
    client and the leader" (the field: "Public Interfaces", PartitionData CurrentLeaderEpoch). After a
    leader move, the stack's producer writes 40 records through the protocol proxy: each Produce
    partition entry carries the epoch Metadata gave it. A producer whose Produce entries carry no such
    field is "not supported by this client", with the versions and fields it sent as the evidence
    (Apache Kafka's Produce schema has the field at no version, so no Apache client sends it)."""
    run = producer_epochs(cluster, topic_factory(replication_factor=3), client)
    store.save(f"kip359-producer-epochs-{client}", run)
    assert_produce_carries_the_metadata_epoch(run)
