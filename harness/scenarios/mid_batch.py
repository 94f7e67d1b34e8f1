"""A partition of several multi-record batches, and Fetches positioned inside them.

Consumers land inside a batch all the time: after a commit mid-batch, a seek, or a KIP-320 reset to
a divergence offset. Apache Kafka answers such a Fetch with the whole batch holding the offset (the
client drops the records before its position); a broker that starts at the next batch loses records.
"""

from __future__ import annotations

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.errors import require_target
from harness.histories.mid_batch import BatchSpan, MidBatchFetch, MidBatchFetches
from harness.protocol.records import encode_batch, parse_batches

BATCHES, PER_BATCH = 3, 5
FIRST_VERSION = 4  # v4: the first Fetch of v2 record batches with a transactional isolation level


def mid_batch_fetches(cluster: Cluster, topic: str) -> MidBatchFetches:
    """Append BATCHES batches of PER_BATCH records, then Fetch from an offset inside each batch (its
    second and its last record) at the lowest and the highest Fetch version from v4."""
    with rr.RawConnector(cluster) as raw:
        leader = raw(rr.partition_metadata(raw(cluster.state.running_brokers()[0]), topic)["LeaderId"])
        tid = rr.topic_id(leader, topic)
        top = leader.max_version("Produce")
        for b in range(BATCHES):
            records = [f"mid-batch-{b}-{i}".encode() for i in range(PER_BATCH)]
            answer = rr.produce(leader, top, topic, tid, 0, encode_batch(records)).response
            part = answer["Responses"][0]["PartitionResponses"][0]
            require_target(part["ErrorCode"] == 0, f"the target refused to append batch {b} to {topic}: {part}")
        log, _ = rr.read_log(leader, topic, tid)
        spans = tuple(BatchSpan(x.base_offset, x.last_offset) for x in log)
        require_target(sum(1 for s in spans if s.last_offset > s.base_offset) >= BATCHES,
                      f"{topic}'s log holds no {BATCHES} multi-record batches to fetch inside: {spans}")
        versions = rr.versions(leader, "Fetch", FIRST_VERSION)
        fetches = []
        for v in sorted({versions[0], versions[-1]}):
            for span in spans:
                for offset in sorted({span.base_offset + 1, span.last_offset}):
                    p = rr.fetch(leader, v, topic, tid, 0, offset)
                    answered = tuple(BatchSpan(x.base_offset, x.last_offset)
                                     for x in parse_batches(p["Records"] or b""))
                    fetches.append(MidBatchFetch(v, offset, p["ErrorCode"], p["HighWatermark"], answered))
    return MidBatchFetches(topic, spans, tuple(fetches))
