"""KIP-1319 and librdkafka (confluent-kafka): which TxnOffsetCommit version it sends, seen through the proxy.

librdkafka caps TxnOffsetCommit at v3 (src/rdkafka_txnmgr.c asks
`rd_kafka_broker_ApiVersion_supported(rkb, RD_KAFKAP_TxnOffsetCommit, 0, 3, NULL)`), so it cannot
exercise KIP-1319. The check states what the KIP asks of a client; only the version assertion is
the known client gap (`OlderVersionSent`): any other failure is a failure, and the day librdkafka
sends v6 the check passes.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness import verdicts
from harness.checks import recorded
from harness.checks.kip1319 import (
    OlderVersionSent,
    assert_client_sends_v6,
    assert_transaction_outcome,
    assert_visible_to_read_committed,
)
from harness.scenarios import kip1319_clients as clients
from harness.scenarios.kip1319 import RequireV6, Unique

pytestmark = [pytest.mark.kip1319, pytest.mark.client_stack("librdkafka"), pytest.mark.client_axis]


@pytest.mark.promise("kip1319.client.sends-v6")
def test_librdkafka_sends_txn_offset_commit_v6(
    cluster: Cluster, require_v6: RequireV6, topic_factory: TopicFactory, unique: Unique,
    report_environment: Callable[[dict[str, str]], None],
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side" and "Compatibility > Version negotiation": a
    transactional librdkafka producer (of the run's confluent-kafka release) calling
    send_offsets_to_transaction against a broker that advertises v6 should send TxnOffsetCommit v6
    keyed by topic ID. The proxy records the version it actually sends and every API version it
    used, for the client matrix (junit testsuite properties and the Allure environment); the
    transaction itself must commit and its records be read back."""
    require_v6("a client's TxnOffsetCommit v6")
    run = clients.librdkafka_commit(cluster, topic_factory(), topic_factory(), unique("rdkafka"))
    recorded.save("kip1319-librdkafka", run)
    report_environment(clients.client_matrix(run))
    assert_transaction_outcome(run, "committed")
    assert_visible_to_read_committed(run)
    try:
        assert_client_sends_v6(run)
    except OlderVersionSent as exc:
        verdicts.known_gap("librdkafka-txn-offset-commit-v3", clients.driver_librdkafka(run)).found(exc)
