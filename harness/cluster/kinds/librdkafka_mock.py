"""librdkafka's mock cluster (rd_kafka_mock), held here through confluent-kafka's library
(`--target librdkafka-mock`)."""

from __future__ import annotations

from pathlib import Path

from harness.cluster.base import Cluster
from harness.cluster.factory import Backend
from harness.cluster.target import API, LIBRDKAFKA_MOCK, Capabilities, TargetKind, TargetSpec


def _make(target: TargetSpec, log_dir: Path | None) -> Cluster:
    from harness.cluster.librdkafka_mock import LibrdkafkaMockCluster

    return LibrdkafkaMockCluster(target)


def _prepare(target: TargetSpec) -> str:
    from harness.cluster.librdkafka_mock import prepare

    return prepare()


KIND = TargetKind(
    name=LIBRDKAFKA_MOCK,
    spelling="`librdkafka-mock`         librdkafka's mock cluster (rd_kafka_mock), held here through "
             "confluent-kafka's library",
    capabilities=lambda spec: Capabilities(
        fault_control=True, node_logs=False, side_clusters=False, owned=True, leader_moves=API, replication=False,
        no_replication="librdkafka's mock cluster keeps one log per partition, which whichever broker "
        "leads serves (rd_kafka_mock_partition_t, src/rdkafka_mock_int.h), and its Metadata lists every "
        "replica in the ISR whatever state the brokers are in (\"Let Replicas == ISRs for now\", "
        "src/rdkafka_mock_handlers.c): no follower falls behind, no election can diverge a log"),
    run_args=lambda spec: ["--backend", LIBRDKAFKA_MOCK, "--brokers", str(spec.brokers)],
    words=(LIBRDKAFKA_MOCK,),
    backend=LIBRDKAFKA_MOCK,
)

BACKEND = Backend(make=_make, prepare=_prepare)
