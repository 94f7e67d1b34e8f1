"""A lookup by time across a leader move (KIP-320 "Public Interfaces", offsetsForTimes).

`two_epoch_partition` writes BEFORE records to a 3-replica partition, moves its leader
(harness.nemesis.leadership.move_leader: the epoch rises, or the target refused the move), writes
AFTER more, and reads the new leader's log raw: every batch with the PartitionLeaderEpoch the
leader stamped at append. Each record carries a CreateTime of the harness's choosing, STEP_MS
apart, the records after the move a GAP_MS later than those before, so that a timestamp names
exactly one record.

`lookup_by_time` has one client stack's driver look up the timestamp of the record LOOKED_UP
records after the move (librdkafka offsets_for_times, Java offsetsForTimes, franz-go the ListOffsets
request kadm sends) through the protocol proxy, which records the ListOffsets the client sent and
the answers the broker gave.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from harness import confluent
from harness.clients import raw as rr
from harness.clients.driver import stopped_on_exit
from harness.clients.produce_read import produce
from harness.clients.stacks import client_version, consumers_driver
from harness.cluster.base import Cluster
from harness.errors import require_target
from harness.histories.kip320_clients import LIST_OFFSETS, OffsetsForTimesRun, TimeLookup
from harness.histories.observations import ClientEvent
from harness.nemesis.leadership import move_leader
from harness.proxy.server import Proxy
from harness.scenarios.client_validation import partition_asks

BEFORE, AFTER = 20, 10
STEP_MS, GAP_MS = 10, 60_000
LOOKED_UP = 5  # the record after the move whose timestamp the clients look up
# The driver's answer to a lookup: a lookup takes up to 15 s, and a driver asks it again for up to 30 s
# while the error is one an application retries (kip320_consumers.RETRY_S), then once more.
LOOKUP_ANSWER_S = 75


@dataclass(frozen=True)
class TwoEpochPartition:
    """A partition written before and after one leader move, and its leader's log read raw."""

    topic: str
    topic_id: uuid.UUID
    epoch_before: int
    epoch_after: int
    moved_at: int  # the first offset written after the move
    log: bytes
    timestamps: tuple[int, ...]  # the CreateTime of each record, by offset

    @property
    def looked_up(self) -> int:
        return self.timestamps[self.moved_at + LOOKED_UP]


def two_epoch_partition(cluster: Cluster, topic: str) -> TwoEpochPartition:
    """See the module. The timestamps start 10 minutes in the past: no broker refuses them as too old
    by default, and none lies in the future."""
    base = int(time.time() * 1000) - 600_000
    stamps = [base + i * STEP_MS for i in range(BEFORE)] + [base + GAP_MS + i * STEP_MS for i in range(AFTER)]
    config = cluster.client_config()
    with confluent.admin(config) as admin, rr.RawConnector(cluster) as raw:
        before = cluster.state.partition_state(topic)
        first = _write(config, topic, [(f"before-{i}", stamps[i]) for i in range(BEFORE)])
        moved = move_leader(cluster, raw(cluster.state.running_brokers()[0]), admin, topic)
        after = _write(config, topic, [(f"after-{i}", stamps[BEFORE + i]) for i in range(AFTER)])
        leader = raw(moved.leader)
        tid = rr.topic_id(leader, topic)
        batches, _ = rr.read_log(leader, topic, tid)
    require_target(first == list(range(BEFORE)) and after == list(range(BEFORE, BEFORE + AFTER)),
                   f"{topic}-0 took the writes at offsets {first} and {after}, not 0..{BEFORE + AFTER - 1}")
    return TwoEpochPartition(topic, tid, before.leader_epoch, moved.leader_epoch, after[0],
                             b"".join(b.encode() for b in batches), tuple(stamps))


def _write(config: dict[str, object], topic: str, records: list[tuple[str, int]]) -> list[int]:
    """Write (value, CreateTime) records to `topic`-0, acks=all, in order; the offsets acknowledged."""
    with confluent.producer({**config, "acks": "all", "enable.idempotence": True}) as producer:
        history = produce(producer, topic, [v.encode() for v, _ in records], timeout=30,
                          timestamps=[stamp for _, stamp in records])
    require_target(not history.failed, f"the target did not acknowledge every write to {topic}: "
                                       f"{[w.error for w in history.failed][:3]}")
    return sorted(w.offset for w in history.acked)


def lookup_by_time(cluster: Cluster, partition: TwoEpochPartition, client: str) -> OffsetsForTimesRun:
    """`client`'s lookup of `partition.looked_up` (see the module)."""
    name = "lookup"
    with Proxy.for_cluster(cluster) as proxy:
        driver = consumers_driver(client, cluster.java_clients, proxy.client_config(), partition.topic)
        with driver, stopped_on_exit(driver):
            driver.wait_ready()
            answer = driver.ask(f"offsetsfortimes {name} {partition.looked_up}", "offset_for_time", LOOKUP_ANSWER_S)
        asks = tuple(a for a in partition_asks(proxy, partition.topic, partition.topic_id)
                     if a.api == LIST_OFFSETS and a.client_id == name)
    if answer.get("event") == "command_failed":
        lookup, refused = None, (ClientEvent.of(answer),)
    else:
        epoch, found = answer.get("epoch"), answer.get("found_timestamp")
        lookup = TimeLookup(int(answer["offset"]), None if epoch is None else int(epoch),
                            None if found is None else int(found), answer.get("error"))
        refused = ()
    return OffsetsForTimesRun(client, partition.topic, partition.epoch_before, partition.epoch_after,
                              partition.moved_at, partition.log, partition.looked_up, lookup, asks, refused,
                              client_version(driver))
