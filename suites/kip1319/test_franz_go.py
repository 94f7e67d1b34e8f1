"""KIP-1319 and franz-go (kgo): the TxnOffsetCommit a GroupTransactSession sends, seen through the proxy.

franz-go commits offsets in a transaction only from a GroupTransactSession, a consume-transform-
produce loop as a group member; kcts runs one (harness/clients/go/copier.go) with bootstrap through
the protocol proxy, which records every TxnOffsetCommit. Judged with --go-client.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks import recorded
from harness.checks.kip1319 import (
    assert_client_sends,
    assert_offsets_fetched_back,
    assert_only_transient_retries,
    assert_transaction_outcome,
    assert_visible_to_read_committed,
)
from harness.scenarios import kip1319_clients as clients
from harness.scenarios.kip1319 import RequireV6, Unique

pytestmark = [pytest.mark.kip1319, pytest.mark.client_stack("franz-go"), pytest.mark.client_axis]


@pytest.mark.promise("kip1319.client.sends-v6")
def test_franz_go_commits_consumed_offsets_with_v6(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique,
    report_environment: Callable[[dict[str, str]], None],
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Topic ID resolution": a franz-go
    GroupTransactSession copying 20 records in transactions of at most 5 sends every TxnOffsetCommit
    at v6, keyed by the input topic's ID (retries of transient answers included); the group's
    committed offset is 20 and read_committed sees the 20 copied values, in order."""
    require_v6("franz-go's TxnOffsetCommit v6")
    run = clients.go_copy_20(cluster, topic_factory(), topic_factory(), unique("franz-go-copier"))
    recorded.save("kip1319-franz-go-v6-copy", run)
    report_environment(clients.client_matrix(run, "franz_go"))
    assert_transaction_outcome(run, "copied")
    assert_client_sends(run, 6)
    assert_only_transient_retries(run)
    assert_offsets_fetched_back(run)
    assert_visible_to_read_committed(run)
