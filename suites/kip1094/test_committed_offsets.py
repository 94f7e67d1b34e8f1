"""KIP-1094 committed offsets: the next offset and the leader epoch a consumer commits (confluent-kafka and Java)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from fixtures.topics import RunNames
from harness.checks import recorded
from harness.checks.committed_offsets import (
    assert_commit_epochs_follow_consumption,
    assert_commit_past_control_records,
    assert_commit_validates,
)
from harness.checks.epoch_history import describe_log
from harness.clients import raw as rr
from harness.clients.jvm import JavaClient
from harness.cluster.base import Cluster
from harness.kafka.dist import resolve
from harness.waiting import WaitTimeout, wait_until
from suites.kip1094.logs import Log

pytestmark = pytest.mark.kip1094
CLIENTS = ["librdkafka", "java"]


def _java(cluster: Cluster, log: Log, group: str, isolation: str, max_poll_records: int) -> list[dict[str, Any]]:
    """Run the KIP-1094 driver (commit nextOffsets() after each poll) to the log end; its events."""
    args = [cluster.bootstrap_servers, log.topic, "0", group, isolation, str(max_poll_records), str(log.end)]
    with JavaClient.driver(resolve(cluster.client_version), "Kip1094NextOffsets", args) as driver:
        code = driver.wait_exit(90)
    assert code == 0, f"Kip1094NextOffsets exited {code}: {driver.describe()}"
    return driver.events


def _librdkafka_reader(consumer: Consumer, topic: str) -> Callable[[int], list[tuple[int, int | None]]]:
    """`read_through(offset)` polls until the record at `offset` was returned; the records returned."""
    def read_through(last: int) -> list[tuple[int, int | None]]:
        got: list[tuple[int, int | None]] = []

        def through() -> bool:
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append((msg.offset(), msg.leader_epoch()))
            return bool(got) and got[-1][0] >= last

        wait_until(through, 30, lambda: f"reading {topic} through {last}: last {got[-3:]}", interval=0)
        return got
    return read_through


def _committed(consumer: Consumer, topic: str) -> dict[str, int]:
    (tp,) = consumer.committed([TopicPartition(topic, 0)], timeout=10)
    return {"offset": tp.offset, "epoch": tp.leader_epoch}


def _validates(raw: rr.RawConnector, cluster: Cluster, topic: str, committed: dict[str, int]) -> dict[str, Any]:
    leader = raw(cluster.partition_state(topic).leader)
    version = leader.max_version("OffsetForLeaderEpoch")
    return rr.offsets_for_leader_epoch(leader, version, topic, 0, committed["epoch"])


@pytest.mark.parametrize("client", CLIENTS)
def test_committed_epoch_is_the_epoch_of_the_last_consumed_record(
    client: str, cluster: Cluster, two_epochs: Log, run_names: RunNames, raw: rr.RawConnector
) -> None:
    """Seed 004, "Committing Leader Epoch" and "PART III": a consumer commits the next offset with
    the leader epoch of the last record it consumed. The log has 20 records from one epoch and 20
    from the next, and is read after the leader moved: the commit after the first 20 carries the
    old epoch (not the leader's current one), the commit after the rest the new epoch. Java commits
    ConsumerRecords.nextOffsets() (KIP-1094, 20 records per poll); librdkafka commits its stored
    offsets after the 20th and the 40th record. Each commit, read back from the coordinator, must
    also validate: OffsetsForLeaderEpoch(epoch) ends at or after the committed offset."""
    log = two_epochs
    group = run_names.group(f"kip1094-last-epoch-{client}")
    commits = []
    if client == "java":
        for e in _java(cluster, log, group, "read_uncommitted", 20):
            if e.get("event") == "poll" and e["records"]:
                last_offset, last_epoch = e["records"][-1]
                commits.append({**e["committed"], "last_offset": last_offset, "last_epoch": last_epoch})
    else:
        consumer = Consumer({**cluster.client_config(), "group.id": group, "enable.auto.commit": False,
                             "auto.offset.reset": "earliest", "log_level": 3})
        try:
            consumer.subscribe([log.topic])
            read_through = _librdkafka_reader(consumer, log.topic)
            for last in (19, log.end - 1):
                got = read_through(last)
                consumer.commit(asynchronous=False)
                commits.append({**_committed(consumer, log.topic), "last_offset": got[-1][0],
                                "last_epoch": got[-1][1]})
        finally:
            consumer.close()
    current = cluster.partition_state(log.topic).leader_epoch
    recorded.save(f"kip1094-last-epoch-{client}", {"commits": commits, "log": log.blob()})
    assert any(c["epoch"] < current for c in commits), (
        f"premise: no commit was made for records older than the leader's epoch {current}: {commits}; "
        f"log {describe_log(log.batches)}"
    )
    assert_commit_epochs_follow_consumption(commits, log.batches, client)
    for c in commits:
        assert_commit_validates(c, _validates(raw, cluster, log.topic, c))


@pytest.mark.parametrize("client", CLIENTS)
def test_position_and_commit_move_past_transaction_markers(
    client: str, cluster: Cluster, transactions: Log, run_names: RunNames, raw: rr.RawConnector
) -> None:
    """Seed 004, "Control Records vs Data Records", "Consumer position" and KIP-1094: after reading
    three committed transactions (read_committed), position() and the committed offset are the
    log end, past the last COMMIT marker, so the lag is 0; the committed epoch is the epoch of the
    last record before it. That record is the marker, appended in a later epoch than its
    transaction's data (the leader moved between the two): the data's epoch would not validate
    (see harness.checks.committed_offsets), so the committed pair must pass OffsetsForLeaderEpoch."""
    log = transactions
    group = run_names.group(f"kip1094-markers-{client}")
    last, data = log.batches[-1], [b for b in log.batches if not b.is_control]
    assert last.control_type() == "COMMIT" and last.partition_leader_epoch > data[-1].partition_leader_epoch, (
        f"premise: the log must end in a COMMIT marker from a later epoch than its data: {describe_log(log.batches)}"
    )
    if client == "java":
        end = next(e for e in _java(cluster, log, group, "read_committed", 500) if e.get("event") == "end")
        position, committed = end["position"], end["committed"]
    else:
        consumer = Consumer({**cluster.client_config(), "group.id": group, "enable.auto.commit": False,
                             "auto.offset.reset": "earliest", "isolation.level": "read_committed", "log_level": 3})
        tp = TopicPartition(log.topic, 0)
        try:
            consumer.subscribe([log.topic])
            _librdkafka_reader(consumer, log.topic)(data[-1].last_offset)
            # librdkafka moves position() past trailing control records on a later poll; where it
            # never does, the check below reports the position it stayed at.
            try:
                wait_until(lambda: consumer.poll(0.1) is None and consumer.position([tp])[0].offset >= log.end, 15,
                           lambda: f"position() {consumer.position([tp])[0].offset} reaching the log end {log.end}")
            except WaitTimeout:
                pass
            position = consumer.position([tp])[0].offset
            consumer.commit(asynchronous=False)
            committed = _committed(consumer, log.topic)
        finally:
            consumer.close()
    # Why the marker's epoch and not the data's: the data's epoch ends where the marker's begins.
    data_epoch = {"offset": log.end, "epoch": data[-1].partition_leader_epoch}
    assert _validates(raw, cluster, log.topic, data_epoch)["EndOffset"] < log.end, (
        f"premise: OffsetsForLeaderEpoch({data_epoch['epoch']}) ends before {log.end}: {describe_log(log.batches)}"
    )
    recorded.save(f"kip1094-markers-{client}", {"position": position, "committed": committed, "end": log.end,
                                                "log": log.blob()})
    assert_commit_past_control_records(position, committed, log.batches, log.end, client)
    assert_commit_validates(committed, _validates(raw, cluster, log.topic, committed))
