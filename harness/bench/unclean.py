"""`kcts bench unclean`: one forced unclean election scenario ÷ one broker restart, same cluster."""

from __future__ import annotations

import statistics
import time

from harness import confluent
from harness.clients.admin import admin_client, create_topic
from harness.clients.produce_read import produce
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.kafka.dist import DEFAULT_VERSION
from harness.nemesis.unclean import force_unclean_election


def run(version: str = DEFAULT_VERSION, rounds: int = 3) -> dict[str, object]:
    elections, restarts = [], []
    with LocalCluster(LocalClusterSpec(version=version)) as cluster, admin_client(cluster) as admin:
        for i in range(rounds):
            topic = create_topic(
                cluster, admin, f"bench-unclean-{i}", replication_factor=2,
                config={"min.insync.replicas": "1", "unclean.leader.election.enable": "true"},
            )
            with (
                confluent.producer({**cluster.client_config(), "acks": "all"}) as replicated,
                confluent.producer({**cluster.client_config(), "acks": "1", "enable.idempotence": False}) as producer,
            ):
                produce(replicated, topic, [b"x"] * 100)
                t0 = time.monotonic()
                result = force_unclean_election(
                    cluster, topic, write_divergent=lambda p=producer, t=topic: produce(p, t, [b"y"] * 50)
                )
                elections.append(time.monotonic() - t0)
                assert len(result.truncated) == 50, result
                t0 = time.monotonic()
                cluster.restart_node(cluster.broker_ids[i % len(cluster.broker_ids)])
                restarts.append(time.monotonic() - t0)
        e, r = statistics.median(elections), statistics.median(restarts)
    return {
        "bench": "unclean",
        "kafka_version": version,
        "rounds": rounds,
        "unclean_election_s": round(e, 3),
        "broker_restart_s": round(r, 3),
        "election_samples_s": [round(x, 3) for x in elections],
        "restart_samples_s": [round(x, 3) for x in restarts],
        "ratio": round(e / r, 3),
        "target": "<= 4",
    }
