"""Since when each client stack fences its Fetches with the leader epoch (KIP-320, "Consumer Handling").

One table, read upstream (kcts carries none of the upstream code; the evidence names where to look):
a consumer of a release from the one named here on sends its current leader epoch in Fetch
CurrentLeaderEpoch (v9+), and one that sends -1 breaks the promise; an older release sends -1 by
design and is "not supported by this client". The checks read the table through the `ClientRelease`
a scenario records (harness.histories.client_reactions), never by stack name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.clients.stacks import GO, JAVA, LIBRDKAFKA, gap_version
from harness.histories.client_reactions import ClientRelease, FirstRelease

FETCH_EPOCH_SINCE: Mapping[str, FirstRelease] = MappingProxyType({
    LIBRDKAFKA: FirstRelease(
        "librdkafka", "2.1.0",
        "confluentinc/librdkafka CHANGELOG.md, v2.1.0: 'KIP-320 Allow fetchers to detect and handle log truncation "
        "(#4122)'; v2.0.2 src/rdkafka_fetcher.c writes CurrentLeaderEpoch -1 in every Fetch, v2.1.0 the "
        "partition's rktp_leader_epoch (from Metadata)"),
    JAVA: FirstRelease(
        "kafka-clients", "2.3.0",
        "apache/kafka KAFKA-7440 'Add leader epoch to fetch and list-offset request' (#6190) and KAFKA-7747 "
        "'Check for truncation after leader changes [KIP-320]' (#6371), both first tagged 2.3.0; the 2.2.0 "
        "Fetcher.java builds each FetchRequest.PartitionData with Optional.empty() (-1), 2.3.0 with "
        "position.currentLeader.epoch"),
    GO: FirstRelease(
        "franz-go", "0.6.0",
        "twmb/franz-go: every release of the module github.com/twmb/franz-go (v0.6.0 on; the module was "
        "github.com/twmb/kafka-go before) fences Fetch: pkg/kgo/source.go sets CurrentLeaderEpoch from the "
        "cursor's leader epoch already in v0.1.0, and CHANGELOG.md (from v0.4.6) never adds it"),
})


def fetch_epoch_since(stack: str) -> FirstRelease:
    """The first release of `stack` (harness.clients.stacks) that fences Fetch with the leader epoch."""
    if stack not in FETCH_EPOCH_SINCE:
        raise KeyError(f"no KIP-320 Fetch fencing release known for client stack {stack!r}: "
                       f"{', '.join(FETCH_EPOCH_SINCE)}")
    return FETCH_EPOCH_SINCE[stack]


def client_release(stack: str, named: str | None, java_clients: str) -> ClientRelease:
    """The client that ran a scene: `named` what its driver's ready event named (None: nothing, as the
    Java driver, whose release is the run's kafka-clients, `java_clients`)."""
    if stack == JAVA and not named:
        named = f"kafka-clients {java_clients}"
    return ClientRelease(stack, named, gap_version(stack, named), fetch_epoch_since(stack))
