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
from harness.histories.client_reactions import NEVER, ClientRelease, FirstRelease

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
    "kafkajs": FirstRelease(
        "kafkajs", NEVER,
        "no KafkaJS release fences Fetch: 2.2.4's src/consumer/consumerGroup.js builds each Fetch partition without "
        "currentLeaderEpoch, which src/protocol/requests/fetch/v9/request.js and v11/request.js write as its "
        "default -1, and KafkaJS has no OffsetForLeaderEpoch request (src/protocol/requests/)"),
    "platformatic-kafka": FirstRelease(
        "@platformatic/kafka", "2.12.1",
        "read in 2.12.1 only (earlier releases not read): dist/clients/consumer/messages-stream.js #fetch sends each "
        "partition's currentLeaderEpoch (and lastFetchedEpoch) from the Metadata it last read, -1 before any"),
    "sarama": FirstRelease(
        "sarama", "1.38.0",
        "IBM/sarama CHANGELOG.md, Version 1.38.0: 'fix(proto): track and supply leader epoch to FetchRequest' "
        "(#2389); v1.61.1 consumer.go: the partition consumer keeps the leader epoch Metadata gave "
        "(child.leaderEpoch) and writes it in each Fetch block (request.AddBlock(..., child.leaderEpoch))"),
    "kafka-go": FirstRelease(
        "kafka-go", NEVER,
        "no kafka-go release fences Fetch: v0.4.51's Reader fetches through Conn.ReadBatchWith, whose "
        "write.go writeFetchRequestV10 writes the partition's current leader epoch as a constant -1 (marked "
        "//FIXME), and fetch.go's Client.Fetch sets CurrentLeaderEpoch: -1"),
    "kafka-python": FirstRelease(
        "kafka-python", "3.0.12",
        "read in 3.0.12 only (earlier releases not read): kafka/consumer/fetcher.py builds each Fetch partition "
        "with current_leader_epoch from the cluster metadata (leader_epoch_for_partition, -1 before any); its "
        "CHANGES.md brings KIP-320 in 3.0.0 ('KIP-320: Detect and handle Log Truncation (#2978)') and the "
        "metadata's epoch in 3.0.6 ('consumer: track current leader epoch in addition to record epoch (#3107)')"),
    "aiokafka": FirstRelease(
        "aiokafka", NEVER,
        "no aiokafka release fences Fetch: 0.14.0's aiokafka/protocol/fetch.py writes current_leader_epoch as a "
        "constant -1 ('# current_leader_epoch (unknown)') in Fetch v9+, and aiokafka has no OffsetForLeaderEpoch "
        "request and no leader epoch in its consumer (aiokafka/consumer/)"),
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
