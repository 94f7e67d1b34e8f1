"""`kcts bench proxy`: what the protocol proxy costs, measured against the same cluster, same run.

- Throughput: a confluent-kafka producer writes `records` values of `size` bytes to a fresh
  one-partition topic, then a consumer reads them all back (assign from offset 0). A sample's
  throughput is records / (produce time + consume time). Each round runs direct, proxied,
  proxied, direct (the next round the mirror image), so that drift and noise hit both sides
  alike. `ratio` = median proxied throughput / median direct throughput; the target is >= 0.7.
  The clients run in a worker process: in this one, their Python loops would hold the GIL
  against the proxy's thread and the bench would measure that contention, not the proxy.
- Added latency: round trips of small requests with the raw client, one connection each way,
  interleaved in blocks: ApiVersions (passed through as frames) and Metadata without topics
  (decoded, addresses rewritten, re-encoded). `added_p99_ms` = proxied p99 - direct p99.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from confluent_kafka import KafkaError, TopicPartition

from harness import confluent
from harness.clients.admin import admin_client, create_topic
from harness.cluster.base import Cluster
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.kafka.dist import DEFAULT_VERSION, resolve
from harness.protocol.client import RawClient
from harness.proxy import Proxy

TARGET_RATIO = 0.7


def produce_consume(config: dict[str, str], topic: str, records: int, size: int) -> tuple[float, float]:
    """Seconds to produce every record (acked) and to consume them all back."""
    value = b"v" * size
    with confluent.producer({**config, "linger.ms": 5, "acks": "all"}) as producer:
        t0 = time.monotonic()
        for _ in range(records):
            while True:
                try:
                    producer.produce(topic, value, partition=0)
                    break
                except BufferError:
                    producer.poll(0.05)
        left = producer.flush(120)
        produce_s = time.monotonic() - t0
    if left:
        raise RuntimeError(f"{left} of {records} records to {topic} unacknowledged after 120 s")
    # Not timed: leaving the block closes the consumer, which waits for an outstanding long-poll
    # Fetch (up to fetch.wait.max.ms).
    with confluent.consumer({**config, "group.id": f"{topic}-bench", "enable.auto.commit": False}) as consumer:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = 0
        t1 = time.monotonic()
        deadline = t1 + 120
        while got < records:
            if time.monotonic() > deadline:
                raise RuntimeError(f"consumed {got} of {records} records of {topic} in 120 s")
            # Never ask for more than remain: consume() would wait out its timeout for the rest.
            for msg in consumer.consume(min(10_000, records - got), 1.0):
                err = msg.error()
                if err is not None and err.code() != KafkaError._PARTITION_EOF:
                    raise RuntimeError(f"consumer error on {topic}: {err}")
                got += err is None
        consume_s = time.monotonic() - t1
    return produce_s, consume_s


def round_trips(client: RawClient, call: Callable[[RawClient], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        call(client)
        out.append(time.perf_counter() - t0)
    return out


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency(cluster: Cluster, proxy: Proxy, spec: str, samples: int) -> dict[str, Any]:
    broker = cluster.broker_ids[0]
    upstream = cluster.broker_address(broker)
    hello = {"ClientSoftwareName": "kcts", "ClientSoftwareVersion": "0"}
    calls: dict[str, Callable[[RawClient], object]] = {
        "api_versions": lambda c: c.send("ApiVersions", 3, hello),
        "metadata": lambda c: c.send("Metadata", 12, {"Topics": [], "AllowAutoTopicCreation": False}),
    }
    result: dict[str, Any] = {}
    with (
        RawClient.connect(*upstream, spec=spec) as direct,
        RawClient.connect(*proxy.address_of(upstream), spec=spec) as proxied,
    ):
        for name, call in calls.items():
            d: list[float] = []
            p: list[float] = []
            round_trips(direct, call, 200)  # warm both paths (codec compilation, caches)
            round_trips(proxied, call, 200)
            for _ in range(max(1, samples // 200)):
                d += round_trips(direct, call, 200)
                p += round_trips(proxied, call, 200)
            result[name] = {
                "samples": len(d),
                "direct_p50_ms": round(percentile(d, 0.5) * 1000, 3),
                "direct_p99_ms": round(percentile(d, 0.99) * 1000, 3),
                "proxied_p50_ms": round(percentile(p, 0.5) * 1000, 3),
                "proxied_p99_ms": round(percentile(p, 0.99) * 1000, 3),
                "added_p50_ms": round((percentile(p, 0.5) - percentile(d, 0.5)) * 1000, 3),
                "added_p99_ms": round((percentile(p, 0.99) - percentile(d, 0.99)) * 1000, 3),
            }
    return result


def run(
    version: str = DEFAULT_VERSION, records: int = 200_000, size: int = 100, rounds: int = 3,
    latency_samples: int = 2000,
) -> dict[str, Any]:
    dist = resolve(version)
    spec = LocalClusterSpec(version=dist.version, brokers=1)
    worker = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    with (
        worker, LocalCluster(spec, dist) as cluster, Proxy.for_cluster(cluster) as proxy,
        admin_client(cluster) as admin,
    ):
        sides = {"direct": cluster.client_config(), "proxied": proxy.client_config()}
        samples: dict[str, list[tuple[float, float]]] = {"direct": [], "proxied": []}
        topic_no = 0

        def one(side: str, n: int) -> tuple[float, float]:
            nonlocal topic_no
            topic_no += 1
            topic = create_topic(cluster, admin, f"kcts-bench-proxy-{side}-{topic_no}", 1, 1)
            return worker.submit(produce_consume, sides[side], topic, n, size).result(600)

        for side in sides:  # warm-up: connections, codec compilation, JIT on the broker
            one(side, min(records, 20_000))
        for r in range(rounds):
            order = ["direct", "proxied", "proxied", "direct"]
            for side in order if r % 2 == 0 else order[::-1]:
                samples[side].append(one(side, records))
                proxy.recording.clear()  # the bench measures the proxy, not an ever-growing log
        lat = latency(cluster, proxy, dist.version, latency_samples)
        proxy.check()

    def throughput(side: str) -> float:
        return statistics.median(records / (p + c) for p, c in samples[side])

    direct, proxied = throughput("direct"), throughput("proxied")
    return {
        "bench": "proxy",
        "kafka_version": dist.version,
        "records": records,
        "record_bytes": size,
        "rounds": rounds,
        "direct_records_per_s": round(direct),
        "proxied_records_per_s": round(proxied),
        "direct_samples_s": [[round(p, 3), round(c, 3)] for p, c in samples["direct"]],
        "proxied_samples_s": [[round(p, 3), round(c, 3)] for p, c in samples["proxied"]],
        "ratio": round(proxied / direct, 3),
        "target": f">= {TARGET_RATIO}",
        "latency": lat,
        "added_p99_ms": lat["api_versions"]["added_p99_ms"],
    }
