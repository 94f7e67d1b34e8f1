"""KIP-320 consumers resetting by their policy: the epoch ListOffsets returns fences the first Fetch."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.client_reactions import assert_first_fetch_uses_the_reset_epoch
from harness.histories import store
from harness.scenarios.client_reactions import reset_then_fetch
from harness.scenarios.truncation import STACKS
from harness.verdicts import not_supported_by_client

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis]
LIST_OFFSETS_WITH_EPOCH = 4  # the ListOffsets version whose answer carries LeaderEpoch (KIP-320)


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.list-offsets-epoch-used")
def test_first_fetch_after_a_reset_carries_the_epoch_list_offsets_returned(
    cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames, client: str, reset: str
) -> None:
    """KIP-320 "Consumer Handling", extension 1: "we will add the leader epoch [to] the ListOffsets
    response. The consumer will use this in its first fetch request after resetting offsets." After a
    leader move (offset 0 at epoch 0, the log end at epoch 1), a consumer of a group with no commit
    resets by `reset` through the protocol proxy; its first Fetch asks for the offset ListOffsets
    returned, with a CurrentLeaderEpoch no older than the epoch returned with it (not -1)."""
    run = reset_then_fetch(cluster, topic_factory(replication_factor=3), client, reset,
                           run_names.group(f"kip320-reset-{client}-{reset}"))
    store.save(f"kip320-reset-fetch-{client}-{reset}", run)
    asked = sorted({a.version for a in run.list_offsets})
    if asked and max(asked) < LIST_OFFSETS_WITH_EPOCH:
        not_supported_by_client(run.version or client, "the leader epoch ListOffsets returns (v4+, KIP-320)",
                                f"it asked ListOffsets v{asked}, and fetched with CurrentLeaderEpoch "
                                f"{sorted({f.current for f in run.fetches})}")
    assert_first_fetch_uses_the_reset_epoch(run)
