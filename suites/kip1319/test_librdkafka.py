"""KIP-1319 and librdkafka (confluent-kafka): which TxnOffsetCommit version it sends, seen through the proxy.

librdkafka caps TxnOffsetCommit at v3 (src/rdkafka_txnmgr.c asks
`rd_kafka_broker_ApiVersion_supported(rkb, RD_KAFKAP_TxnOffsetCommit, 0, 3, NULL)`), so it cannot
exercise KIP-1319. The check states what the KIP asks of a client and is marked as a known client
gap, strict: it turns into a failure the day librdkafka sends v6, so the allow-list cannot rot.
Only the version assertion is the gap; any other failure is a failure.
"""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from fixtures.topics import TopicFactory
from harness import verdicts
from harness.clients.admin import QUIET
from harness.clients.raw import RawConnector
from harness.cluster.base import Cluster
from harness.proxy import Proxy
from harness.pytest_plugin import RUN_DIR_KEY, evidence
from suites.kip1319.read_committed import committed_values
from suites.kip1319.target import require_v6

pytestmark = pytest.mark.kip1319

LIBRDKAFKA = confluent_kafka.libversion()[0]


class ClientGap(AssertionError):
    """The one assertion the known-gap verdict covers."""


_gap = verdicts.known_client_gap(
    f"librdkafka {LIBRDKAFKA}",
    "confluentinc/librdkafka src/rdkafka_txnmgr.c: TxnOffsetCommit ApiVersion 0-3",
    "sendOffsetsToTransaction uses TxnOffsetCommit v3 at most, never v6 (no KIP-1319)",
)
KNOWN_GAP = pytest.mark.xfail(raises=ClientGap, **_gap.mark.kwargs)


@KNOWN_GAP
def test_librdkafka_sends_txn_offset_commit_v6(
    cluster: Cluster, raw: RawConnector, topic_factory: TopicFactory, proxy_for: Callable[[Cluster], Proxy],
    record_testsuite_property: Callable[[str, object], None], request: pytest.FixtureRequest,
    unique: Callable[[str], str],
) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side" and "Compatibility > Version negotiation": a
    transactional librdkafka producer calling send_offsets_to_transaction against a broker that
    advertises v6 should send TxnOffsetCommit v6 keyed by topic ID. The proxy records the version
    it actually sends and every API version it used, for the client matrix (junit testsuite
    properties and the Allure environment); the transaction itself must commit and its records be
    read back."""
    require_v6(raw(), "a client's TxnOffsetCommit v6")
    source, sink = topic_factory(), topic_factory()
    proxy = proxy_for(cluster)
    config = {**proxy.client_config(), **QUIET}
    producer = Producer({**config, "transactional.id": f"kcts-rdkafka-{sink}"})
    group_member = Consumer({**config, "group.id": unique("rdkafka")})
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(sink, b"rdkafka-txn", partition=0)
        producer.send_offsets_to_transaction(
            [TopicPartition(source, 0, 3)], group_member.consumer_group_metadata(), 30
        )
        producer.commit_transaction(30)
    finally:
        group_member.close()
    assert committed_values(cluster.client_config(), sink) == [b"rdkafka-txn"]

    commits = proxy.recording.exchanges("TxnOffsetCommit")
    assert commits, f"librdkafka sent no TxnOffsetCommit: {proxy.recording.summary()}"
    used = sorted({(e.api, e.version) for e in proxy.recording.exchanges()})
    versions = sorted({e.version for e in commits})
    matrix = {
        "librdkafka_txn_offset_commit_versions": ",".join(map(str, versions)),
        "librdkafka_api_versions": " ".join(f"{api}:v{v}" for api, v in used),
    }
    for key, value in matrix.items():
        record_testsuite_property(key, value)
    if RUN_DIR_KEY in request.config.stash:
        evidence(request.config).environment.update(matrix)
    if versions != [6]:
        raise ClientGap(f"librdkafka {LIBRDKAFKA} sent TxnOffsetCommit {versions}, not v6; used {used}\n"
                        f"{commits[-1].dump()}")
