"""KIP-98 transactions as each client stack sees them: what its consumer hands the application at each
isolation level, whatever the Fetch answers' aborted-transaction lists hold, and whether its
transactional copier's output and its group's commit move together.

The log (harness/scenarios/isolation_levels.py) holds one producer's five transactions, committed and
aborted in turn. librdkafka and franz-go read it in their consumers driver, Java in
Kip1094NextOffsets; the copiers are those of the KIP-1319 situations (Java's Kip1319Copier, franz-go's
GroupTransactSession; librdkafka has no copier driver).
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames, TopicFactory
from harness.checks.client_premises import require_commits_accepted
from harness.checks.client_reads import (
    assert_read_committed_hands_committed_records_only,
    assert_read_uncommitted_hands_every_record,
    committed_offsets,
    data_offsets,
    handed_wrongly,
)
from harness.checks.exactly_once_copy import assert_copied_exactly_once
from harness.histories import store
from harness.histories.client_reads import IsolationRead
from harness.scenarios import kip1319_clients as clients
from harness.scenarios.isolation_levels import ReadNotThrough, interleaved, read_at
from harness.scenarios.kip1094 import Log
from harness.scenarios.truncation import STACKS
from harness.verdicts import stalled_read

pytestmark = pytest.mark.kip1094

COPIERS = (clients.JAVA, *clients.COPIERS)  # the copy loops (librdkafka's transaction driver copies nothing)


@pytest.fixture(scope="module")
def transactions_log(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> Log:
    topic = module_topic(request, "interleaved", 3)
    return interleaved(cluster, topic, run_names.transactional_id("isolation-interleaved"))



def _read(cluster: Cluster, log: Log, run_names: RunNames, client: str, isolation: str,
          expected: list[int]) -> IsolationRead:
    """`client`'s read of `log` at `isolation`, to be judged against `expected`: one that stalled on a
    prefix of it is no verdict on the promise (`stalled_read`); one that handed what it must not is."""
    try:
        read = read_at(cluster, log, run_names.group(f"{isolation}-{client}"), client, isolation)
    except ReadNotThrough as exc:
        if not handed_wrongly(exc.partial, expected):
            stalled_read(client, exc)
        read = exc.partial
    store.save(f"isolation-{isolation}-{client}", {"read": read, "log": log.blob()})
    return read


@pytest.mark.client_axis
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("eos.read-uncommitted-hands-aborted")
def test_read_uncommitted_hands_every_record_aborted_ones_included(
    client: str, cluster: Cluster, transactions_log: Log, run_names: RunNames
) -> None:
    """KIP-98 "Public Interfaces", the consumer's isolation.level: read_uncommitted is to "consume both
    committed and uncommitted messages in offset ordering". A consumer reads one producer's five
    transactions (committed, aborted, committed, aborted, committed) at read_uncommitted from the log
    start through the last record: it hands every data record, the aborted transactions' included, each
    once, in offset order. A Fetch answer may list aborted transactions at this level too (the schema
    has the field at every level; Redpanda did until redpanda-data/redpanda#18852): a client that drops
    their records fails here (franz-go before v1.17.1, twmb/franz-go#758)."""
    log = transactions_log
    read = _read(cluster, log, run_names, client, "read_uncommitted", data_offsets(log.batches))
    assert_read_uncommitted_hands_every_record(read, log.batches)


@pytest.mark.client_axis
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("eos.read-committed-hands-no-aborted")
def test_read_committed_hands_no_record_of_an_aborted_transaction(
    client: str, cluster: Cluster, transactions_log: Log, run_names: RunNames
) -> None:
    """KIP-98 "Public Interfaces", the consumer's isolation.level: read_committed is to "only consume
    non-transactional messages or committed transactional messages in offset order". A consumer reads
    one producer's five transactions (committed, aborted, committed, aborted, committed) at
    read_committed through the last record: it hands the committed transactions' records, each once,
    in offset order, and none of the aborted ones. Neither KIP-98 nor the Fetch schema orders an
    answer's AbortedTransactions, so the client must not rely on their order (franz-go before v1.21.4
    did: an out-of-order list, as Redpanda gave, surfaced aborted records)."""
    log = transactions_log
    read = _read(cluster, log, run_names, client, "read_committed", committed_offsets(log.batches))
    assert_read_committed_hands_committed_records_only(read, log.batches)


@pytest.mark.client_axis
@pytest.mark.parametrize("client", COPIERS)
@pytest.mark.promise("eos.exactly-once-under-faults")
def test_a_copiers_group_commits_only_what_its_output_shows(
    client: str, cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames
) -> None:
    """KIP-98 transactions with KIP-447's offset commits (exactly-once semantics): a consume-transform-
    produce loop commits the offsets it consumed in the transaction that writes its copies, so both move
    together. The client's copier copies 20 records in transactions of at most 5; afterwards
    read_committed shows each input record's copy once, in input order, nothing else, and every input
    record below the group's committed offset has its copy there. A client that takes a transaction
    end the broker did not confirm (EndTxn answered UNKNOWN_SERVER_ERROR) for a commit moves its
    offsets past copies that were rolled back, and fails here (franz-go before v1.21.4)."""
    run = clients.copy(cluster, client, topic_factory, run_names.group(f"eos-copy-{client}"))
    store.save(f"eos-copy-{client}", run)
    require_commits_accepted(run)
    assert_copied_exactly_once(run)
