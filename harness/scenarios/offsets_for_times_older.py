"""A lookup by time of a record written in an epoch older than the current one (KIP-320 "Public
Interfaces", offsetsForTimes).

On a 3-replica partition: BEFORE records at the first epoch, a leader move, AFTER records, a second
move, LATER records; each record's CreateTime is the harness's (harness.scenarios.offsets_for_times:
STEP_MS apart, GAP_MS between epochs), so one timestamp names exactly one record. The client then
looks up the timestamp of the LOOKED_UP-th record written after the first move (in the middle epoch)
through the protocol proxy (harness.scenarios.offsets_for_times.lookup_by_time): the answer owes that
batch's epoch, which is neither Metadata's current epoch nor the epoch of the log's last batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness import confluent
from harness.clients import raw as rr
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster
from harness.errors import require_target
from harness.histories.older_epoch_lookup import OlderEpochLookup
from harness.nemesis.leadership import move_leader
from harness.scenarios.offsets_for_times import AFTER, BEFORE, GAP_MS, STEP_MS, TwoEpochPartition, lookup_by_time

LATER = 10  # records written after the second move


def _write(config: dict[str, object], topic: str, values: list[str], stamps: list[int]) -> list[int]:
    with confluent.producer({**config, "acks": "all", "enable.idempotence": True}) as producer:
        history = produce(producer, topic, [v.encode() for v in values], timeout=30, timestamps=stamps)
    require_target(not history.failed, f"the target did not acknowledge every write to {topic}: "
                                       f"{[w.error for w in history.failed][:3]}")
    return sorted(w.offset for w in history.acked)


@dataclass(frozen=True)
class ThreeEpochPartition:
    """The partition after the second move: `partition` as the first move left it (its log read after
    the second), the current epoch Metadata gave, and the first offset written after the second move."""

    partition: TwoEpochPartition
    current_epoch: int
    moved_again_at: int


def three_epoch_partition(cluster: Cluster, topic: str) -> ThreeEpochPartition:
    """See the module. The timestamps start 10 minutes in the past (none too old, none in the future)."""
    base = int(time.time() * 1000) - 600_000
    stamps = ([base + i * STEP_MS for i in range(BEFORE)] + [base + GAP_MS + i * STEP_MS for i in range(AFTER)]
              + [base + 2 * GAP_MS + i * STEP_MS for i in range(LATER)])
    config = cluster.client_config()
    with confluent.admin(config) as admin, rr.RawConnector(cluster) as raw:
        before = cluster.state.partition_state(topic)
        first = _write(config, topic, [f"before-{i}" for i in range(BEFORE)], stamps[:BEFORE])
        moved = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        middle = _write(config, topic, [f"middle-{i}" for i in range(AFTER)], stamps[BEFORE:BEFORE + AFTER])
        again = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        later = _write(config, topic, [f"later-{i}" for i in range(LATER)], stamps[BEFORE + AFTER:])
        leader = raw(again.leader)
        tid = rr.topic_id(leader, topic)
        current = rr.partition_metadata(leader, topic)["LeaderEpoch"]
        batches, _ = rr.read_log(leader, topic, tid)
    n = BEFORE + AFTER + LATER
    require_target(first + middle + later == list(range(n)),
                   f"{topic}-0 took the writes at offsets {first}, {middle} and {later}, not 0..{n - 1}")
    partition = TwoEpochPartition(topic, tid, before.leader_epoch, moved.leader_epoch, middle[0],
                                  b"".join(b.encode() for b in batches), tuple(stamps))
    return ThreeEpochPartition(partition, current, later[0])


def looked_up_in_an_older_epoch(cluster: Cluster, p: ThreeEpochPartition, client: str) -> OlderEpochLookup:
    """`client`'s lookup of the record in the middle epoch (see the module)."""
    return OlderEpochLookup(lookup_by_time(cluster, p.partition, client), p.current_epoch, p.moved_again_at)
