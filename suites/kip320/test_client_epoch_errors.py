"""KIP-320 consumers meeting the epoch errors: refresh, retry, never reset (every client stack judged)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks import recorded
from harness.checks.client_reactions import assert_read_on_through_epoch_errors
from harness.scenarios.client_reactions import EpochErrorRun, consumer_through_epoch_errors
from harness.scenarios.truncation import STACKS
from harness.verdicts import not_supported_by_client

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis]


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.fenced-epoch-refreshes")
def test_consumer_refreshes_metadata_and_reads_on_after_fenced_leader_epoch(
    cluster: Cluster, topic_factory: TopicFactory, client: str
) -> None:
    """KIP-320 "Consumer Handling": "Leader changes are detected either through a metadata refresh or
    in response to a FENCED_LEADER_EPOCH error." With the protocol proxy answering the consumer's
    first three Fetches (v9+) with FENCED_LEADER_EPOCH and no records, the consumer (no reset policy)
    refreshes its metadata, fetches again, and reads all 30 records once, in order, reporting nothing."""
    run = consumer_through_epoch_errors(cluster, topic_factory(), client, "FENCED_LEADER_EPOCH")
    recorded.save(f"kip320-client-fenced-{client}", run)
    _require_fencing(run)
    assert_read_on_through_epoch_errors(run.__dict__)


@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.unknown-epoch-retries")
def test_consumer_retries_after_unknown_leader_epoch(
    cluster: Cluster, topic_factory: TopicFactory, client: str
) -> None:
    """KIP-320 "Consumer Handling": a consumer whose metadata got ahead of the leader sees
    UNKNOWN_LEADER_EPOCH; "it will simply retry the fetch". With the proxy answering its first
    three Fetches with UNKNOWN_LEADER_EPOCH and no records, the consumer (no reset policy) fetches
    again and reads all 30 records once, in order, reporting nothing."""
    run = consumer_through_epoch_errors(cluster, topic_factory(), client, "UNKNOWN_LEADER_EPOCH")
    recorded.save(f"kip320-client-unknown-{client}", run)
    _require_fencing(run)
    assert_read_on_through_epoch_errors(run.__dict__)


def _require_fencing(run: EpochErrorRun) -> None:
    """A client that fences no Fetch (CurrentLeaderEpoch -1, as before KIP-320) is never answered
    either error by a broker: the promise is not one it can keep or break."""
    if run.sent_epochs and all(e < 0 for e in run.sent_epochs):
        not_supported_by_client(run.version or run.client, "CurrentLeaderEpoch in Fetch (KIP-320 fencing)",
                                f"its {len(run.sent_epochs)} refused Fetch partition entries carried "
                                f"{sorted(set(run.sent_epochs))}: no broker answers such a Fetch {run.error}")
