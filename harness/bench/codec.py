"""`kcts bench codec`: decode throughput of our codec against kio on large real responses.

Two responses are captured from a live cluster (a 3-broker local cluster started here, or the
cluster at `args.bootstrap_servers`): a Metadata v13 response describing >= 1000 partitions and
a Fetch response holding >= 1000 record batches (in 10 partitions). With no cluster to hand they
are built with the codec instead, and `source` says "synthetic" (`note` says why).

Like is compared with like: both decoders get the same body bytes (header stripped) and return
the message structure with `records` left unparsed: kio copies them into bytes, ours hands out a
zero-copy memoryview of the response (records="view"); `ours_copying_records_mb_s` and
`ratio_copying_records` give ours with bytes copies too. `ratio` is our rate over kio's per message,
and overall the lower of the two. Fetch is decoded at the highest version kio knows (16) so that
both decode the same schema. Our decoder pauses the garbage collector on large messages and
kio's does not; `kio_gc_paused_mb_s` shows kio's rate when the caller pauses it too.
`fetch_with_records_mb_s` is our rate when every batch and record is parsed as well (CRC32C
checked), which kio has no counterpart for.
"""

from __future__ import annotations

import gc
import math
import platform
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from harness.errors import SetupError
from harness.kafka.dist import DEFAULT_VERSION
from harness.protocol import kio_bridge
from harness.protocol.client import RawClient
from harness.protocol.codec import compile_decoder, decode, encode, split_response
from harness.protocol.records import WireRecord, encode_batch, parse_batches
from harness.protocol.spec import SpecSet, load_specs

METADATA_VERSION = 13
FETCH_VERSION = 16
METADATA_PARTITIONS = 1024
FETCH_PARTITIONS = 10
BATCHES_PER_PARTITION = 110
RECORDS_PER_BATCH = 4
VALUE_SIZE = 100


# --- capture from a broker -------------------------------------------------------------------


def _create_topic(
    client: RawClient, name: str, partitions: int, replicas: list[int], timeout: float = 120.0
) -> uuid.UUID:
    """Create a topic whose every partition is on `replicas` (so replicas[0] leads them all)."""
    v = client.max_version("CreateTopics")
    assignments = [{"PartitionIndex": p, "BrokerIds": replicas} for p in range(partitions)]
    topic = {"Name": name, "NumPartitions": -1, "ReplicationFactor": -1, "Assignments": assignments, "Configs": []}
    resp = client.send("CreateTopics", v, {"Topics": [topic], "TimeoutMs": 60000}, timeout=timeout)
    # (sic: CreateTopics spells timeoutMs in camelCase)
    code = resp["Topics"][0]["ErrorCode"]
    if code:
        raise RuntimeError(f"CreateTopics {name}: error {code} {resp['Topics'][0].get('ErrorMessage')}")
    deadline = time.monotonic() + timeout
    while True:
        md = client.send("Metadata", METADATA_VERSION, {"Topics": [{"Name": name}], "AllowAutoTopicCreation": False})
        t = md["Topics"][0]
        ready = t["ErrorCode"] == 0 and len(t["Partitions"]) == partitions
        if ready and all(p["ErrorCode"] == 0 and p["LeaderId"] == replicas[0] for p in t["Partitions"]):
            return t["TopicId"]  # type: ignore[no-any-return]
        if time.monotonic() > deadline:
            raise RuntimeError(f"topic {name} not ready after {timeout}s")
        time.sleep(0.5)


def capture(host: str, port: int, specs: SpecSet) -> dict[str, tuple[int, bytes]]:
    """Real response bodies from the cluster at host:port: {"metadata": (version, body), "fetch": ...}.

    Topics are replicated on up to three brokers, all led by one, to which Produce and Fetch go.
    """
    suffix = uuid.uuid4().hex[:8]
    with RawClient.connect(host, port, spec=specs, timeout=120) as first:
        brokers = {b["NodeId"]: (b["Host"], b["Port"]) for b in first.send("Metadata", 12, {"Topics": []})["Brokers"]}
        replicas = sorted(brokers)[:3]
        md_topic = f"kcts-bench-metadata-{suffix}"
        _create_topic(first, md_topic, METADATA_PARTITIONS, replicas)
        ex = first.exchange(
            "Metadata", METADATA_VERSION, {"Topics": [{"Name": md_topic}], "AllowAutoTopicCreation": False}
        )
        metadata = split_response(first.specs.api("Metadata"), METADATA_VERSION, ex.response_bytes)[1]
        f_topic = f"kcts-bench-fetch-{suffix}"
        topic_id = _create_topic(first, f_topic, FETCH_PARTITIONS, replicas)
    leader_host, leader_port = brokers[replicas[0]]
    with RawClient.connect(leader_host, leader_port, spec=specs, timeout=120) as client:
        pv = client.max_version("Produce")
        value = b"v" * VALUE_SIZE
        tkey = {"TopicId": topic_id} if pv >= 13 else {"Name": f_topic}
        # A v2 produce request may carry exactly one batch per partition (INVALID_RECORD otherwise),
        # so each request adds one batch to every partition.
        for b in range(BATCHES_PER_PARTITION):
            records = [WireRecord(value, f"k{b}-{i}".encode()) for i in range(RECORDS_PER_BATCH)]
            data = [{"Index": p, "Records": encode_batch(records)} for p in range(FETCH_PARTITIONS)]
            body = {"Acks": -1, "TimeoutMs": 30000, "TopicData": [{**tkey, "PartitionData": data}]}
            resp = client.send("Produce", pv, body)
            codes = {r["ErrorCode"] for r in resp["Responses"][0]["PartitionResponses"]}
            if codes != {0}:
                raise RuntimeError(f"Produce to {f_topic}: errors {sorted(codes)}")
        parts = [{"Partition": p, "FetchOffset": 0, "PartitionMaxBytes": 8 << 20} for p in range(FETCH_PARTITIONS)]
        fetch_body = {
            "MaxWaitMs": 1000,
            "MinBytes": 1,
            "MaxBytes": 64 << 20,
            "Topics": [{"TopicId": topic_id, "Partitions": parts}],
        }
        ex = client.exchange("Fetch", FETCH_VERSION, fetch_body)
        fetch = split_response(client.specs.api("Fetch"), FETCH_VERSION, ex.response_bytes)[1]
    return {"metadata": (METADATA_VERSION, metadata), "fetch": (FETCH_VERSION, fetch)}


def _capture_on_own_cluster(specs: SpecSet, version: str) -> dict[str, tuple[int, bytes]]:
    """Start the harness's local cluster (3 brokers, like the suite's), capture, stop it."""
    from harness.cluster.local import LocalCluster, LocalClusterSpec

    with LocalCluster(LocalClusterSpec(version=version, brokers=3)) as cluster:
        host, port = cluster.broker_address(cluster.broker_ids[0])
        return capture(host, port, specs)


# --- synthetic responses ---------------------------------------------------------------------


def synthesize(specs: SpecSet) -> dict[str, tuple[int, bytes]]:
    """Responses shaped like a 3-broker cluster's, built with the codec (when no broker is at hand)."""
    brokers = [{"NodeId": i, "Host": "127.0.0.1", "Port": 9092 + i, "Rack": None} for i in (1, 2, 3)]
    topics = []
    per_topic = METADATA_PARTITIONS // 8
    for t in range(8):
        parts = []
        for p in range(per_topic):
            replicas = [(p + k) % 3 + 1 for k in range(3)]
            parts.append(
                {
                    "ErrorCode": 0,
                    "PartitionIndex": p,
                    "LeaderId": replicas[0],
                    "LeaderEpoch": p % 5,
                    "ReplicaNodes": replicas,
                    "IsrNodes": replicas,
                    "OfflineReplicas": [],
                }
            )
        topics.append(
            {
                "ErrorCode": 0,
                "Name": f"bench-topic-{t}",
                "TopicId": uuid.uuid4(),
                "IsInternal": False,
                "Partitions": parts,
                "TopicAuthorizedOperations": -2147483648,
            }
        )
    md = {
        "ThrottleTimeMs": 0,
        "Brokers": brokers,
        "ClusterId": "bench",
        "ControllerId": 1,
        "Topics": topics,
        "ErrorCode": 0,
    }
    value = b"v" * VALUE_SIZE
    partitions = []
    for p in range(FETCH_PARTITIONS):
        blob = b"".join(
            encode_batch(
                [WireRecord(value, f"k{b}-{i}".encode()) for i in range(RECORDS_PER_BATCH)],
                base_offset=b * RECORDS_PER_BATCH,
                partition_leader_epoch=0,
            )
            for b in range(BATCHES_PER_PARTITION)
        )
        hw = BATCHES_PER_PARTITION * RECORDS_PER_BATCH
        partitions.append(
            {
                "PartitionIndex": p,
                "ErrorCode": 0,
                "HighWatermark": hw,
                "LastStableOffset": hw,
                "LogStartOffset": 0,
                "AbortedTransactions": [],
                "PreferredReadReplica": -1,
                "Records": blob,
            }
        )
    fetch = {
        "ThrottleTimeMs": 0,
        "ErrorCode": 0,
        "SessionId": 0,
        "Responses": [{"TopicId": uuid.uuid4(), "Partitions": partitions}],
    }
    return {
        "metadata": (METADATA_VERSION, encode(specs.response("Metadata"), METADATA_VERSION, md)),
        "fetch": (FETCH_VERSION, encode(specs.response("Fetch"), FETCH_VERSION, fetch)),
    }


# --- timing ----------------------------------------------------------------------------------


def _gc_paused(read: Callable[[bytes, int], object], body: bytes) -> object:
    gc.disable()
    try:
        return read(body, 0)
    finally:
        gc.enable()


def _per_call(fn: Callable[[], object], budget: float) -> float:
    """Seconds per call, from a loop sized to take about `budget` seconds."""
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-6)
    n = max(1, int(budget / once))
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def _compare(
    ours: Callable[[], object], theirs: Callable[[], object], rounds: int, budget: float
) -> tuple[float, float]:
    a, b = [], []
    for _ in range(rounds):  # interleaved, so that machine noise hits both sides alike
        a.append(_per_call(ours, budget))
        b.append(_per_call(theirs, budget))
    return statistics.median(a), statistics.median(b)


def measure(
    specs: SpecSet, bodies: dict[str, tuple[int, bytes]], rounds: int = 5, budget: float = 0.3
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    api_names = {"metadata": "Metadata", "fetch": "Fetch"}
    for name, (version, body) in bodies.items():
        spec = specs.response(api_names[name])
        m = kio_bridge.match(spec, version)  # raises if kio's schema is not the same one
        kio_read = kio_bridge.kio_decoder(m.kio_cls)
        value = decode(spec, version, body)
        # Records stay unparsed on both sides; ours hands them out as zero-copy views of the
        # response, kio as bytes copies. The copying rate of ours is reported beside it.
        compile_decoder(spec, version, records="view")
        ours_s, kio_s = _compare(
            lambda s=spec, v=version, b=body: decode(s, v, b, records="view"),
            lambda r=kio_read, b=body: r(b, 0), rounds, budget,
        )
        copying_s = _per_call(lambda s=spec, v=version, b=body: decode(s, v, b, records="bytes"), budget)
        # Our decode pauses the garbage collector on large messages; kio's does not. For the
        # record, kio's rate with the collector paused by the caller as well:
        kio_paused_s = _per_call(lambda r=kio_read, b=body: _gc_paused(r, b), budget)
        mb = len(body) / 1e6
        entry: dict[str, Any] = {
            "api": api_names[name],
            "version": version,
            "bytes": len(body),
            "ours_mb_s": round(mb / ours_s, 2),
            "kio_mb_s": round(mb / kio_s, 2),
            "ratio": round(kio_s / ours_s, 3),
            "ours_copying_records_mb_s": round(mb / copying_s, 2),
            "ratio_copying_records": round(kio_s / copying_s, 3),
            "kio_gc_paused_mb_s": round(mb / kio_paused_s, 2),
        }
        if name == "metadata":
            entry["partitions"] = sum(len(t["Partitions"]) for t in value["Topics"])
        else:
            blobs = [p["Records"] for t in value["Responses"] for p in t["Partitions"]]
            entry["batches"] = sum(len(parse_batches(b, records=False)) for b in blobs)
            entry["records"] = sum(len(b.records) for blob in blobs for b in parse_batches(blob))
            full = _per_call(lambda s=spec, v=version, b=body: decode(s, v, b, records="parse"), budget * rounds)
            out["fetch_with_records_mb_s"] = round(mb / full, 2)
        out[name] = entry
    return out


def run(args: Any = None) -> dict[str, Any]:
    """Entry point of `kcts bench codec`.

    `args` (argparse-like, every attribute optional): kafka_version, rounds (at least 5 are run),
    bootstrap_servers (capture there instead of starting a cluster), source ("live" or
    "synthetic"), budget (seconds per timing sample, default 0.3).
    """
    if not kio_bridge.available():
        raise SetupError("kcts bench codec compares against kio, which is not installed: pip install 'kcts[dev]'")
    version = str(getattr(args, "kafka_version", None) or DEFAULT_VERSION)
    rounds = max(5, int(getattr(args, "rounds", None) or 5))
    bootstrap = getattr(args, "bootstrap_servers", None)
    wanted = str(getattr(args, "source", None) or "live")
    specs = load_specs(version)
    note = ""
    bodies: dict[str, tuple[int, bytes]] | None = None
    source = "synthetic"
    if wanted == "live":
        try:
            if bootstrap:
                host, _, port = bootstrap.split(",")[0].rpartition(":")
                bodies = capture(host, int(port), specs)
            else:
                bodies = _capture_on_own_cluster(specs, version)
            source = "live"
        except Exception as e:  # noqa: BLE001 - any failure to get a broker falls back, and says why
            note = f"live capture failed, used synthetic responses: {type(e).__name__}: {e}"
    if bodies is None:
        bodies = synthesize(specs)
    result: dict[str, Any] = {"bench": "codec", "kafka_version": version, "source": source}
    measured = measure(specs, bodies, rounds=rounds, budget=float(getattr(args, "budget", None) or 0.3))
    result.update(measured)
    ratios = [measured["metadata"]["ratio"], measured["fetch"]["ratio"]]
    result["ratio"] = min(ratios)
    result["ratio_geomean"] = round(math.sqrt(ratios[0] * ratios[1]), 3)
    result["target"] = ">= 1"
    result["python"] = platform.python_version()
    if note:
        result["note"] = note
    return result
