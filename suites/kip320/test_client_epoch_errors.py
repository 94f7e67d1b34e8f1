"""KIP-320 consumers meeting the epoch errors: refresh, retry, never reset (every client stack judged)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.client_reactions import assert_read_on_through_epoch_errors
from harness.histories import store
from harness.scenarios.client_reactions import consumer_through_epoch_errors
from harness.scenarios.truncation import STACKS

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis]


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.fenced-epoch-refreshes")
def test_consumer_refreshes_metadata_and_reads_on_after_fenced_leader_epoch(
    cluster: Cluster, topic_factory: TopicFactory, client: str
) -> None:
    """KIP-320 "Consumer Handling": "Leader changes are detected either through a metadata refresh or
    in response to a FENCED_LEADER_EPOCH error." With the protocol proxy answering the consumer's
    first three Fetches (v9+) with FENCED_LEADER_EPOCH and no records, the consumer (no reset policy)
    refreshes its metadata, fetches again, and reads all 30 records once, in order, reporting nothing.
    Premise: the target's Metadata gave the consumer a leader epoch for the partition before those
    Fetches (else "target refused the premise", what Metadata answered as evidence: a consumer told
    no epoch fences nothing, and a leader fences no unfenced Fetch). Given one, Fetches all at
    CurrentLeaderEpoch -1 fail from the first release of the stack that fences Fetch on
    (harness.clients.kip320_releases); only an older release does not support the promise."""
    run = consumer_through_epoch_errors(cluster, topic_factory(), client, "FENCED_LEADER_EPOCH")
    store.save(f"kip320-client-fenced-{client}", run)
    assert_read_on_through_epoch_errors(run)


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.unknown-epoch-retries")
def test_consumer_retries_after_unknown_leader_epoch(
    cluster: Cluster, topic_factory: TopicFactory, client: str
) -> None:
    """KIP-320 "Consumer Handling": a consumer whose metadata got ahead of the leader sees
    UNKNOWN_LEADER_EPOCH; "it will simply retry the fetch". With the proxy answering its first
    three Fetches with UNKNOWN_LEADER_EPOCH and no records, the consumer (no reset policy) fetches
    again and reads all 30 records once, in order, reporting nothing. The premise (a leader epoch in
    Metadata) and Fetches all at -1: judged as in the check above."""
    run = consumer_through_epoch_errors(cluster, topic_factory(), client, "UNKNOWN_LEADER_EPOCH")
    store.save(f"kip320-client-unknown-{client}", run)
    assert_read_on_through_epoch_errors(run)

