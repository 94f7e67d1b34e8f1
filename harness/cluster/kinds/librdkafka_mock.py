"""librdkafka's mock cluster (rd_kafka_mock), held here through confluent-kafka's library
(`--target librdkafka-mock`). Served by harness/cluster/librdkafka_mock.py (its BACKEND)."""

from __future__ import annotations

from harness.cluster.model import API, Capabilities, TargetKind

NAME = "librdkafka-mock"

KIND = TargetKind(
    name=NAME,
    spelling="`librdkafka-mock`         librdkafka's mock cluster (rd_kafka_mock), held here through "
             "confluent-kafka's library",
    capabilities=lambda spec: Capabilities(
        fault_control=True, node_logs=False, side_clusters=False, owned=True, leader_moves=API, replication=False,
        no_replication="librdkafka's mock cluster keeps one log per partition, which whichever broker "
        "leads serves (rd_kafka_mock_partition_t, src/rdkafka_mock_int.h), and its Metadata lists every "
        "replica in the ISR whatever state the brokers are in (\"Let Replicas == ISRs for now\", "
        "src/rdkafka_mock_handlers.c): no follower falls behind, no election can diverge a log"),
    run_args=lambda spec: ["--backend", NAME, "--brokers", str(spec.brokers)],
    words=(NAME,),
    backend=NAME,
)
