"""KIP-1094 article (seed 004), the zombie leader: a committed epoch newer than a stale leader's is refused as such."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from fixtures.topics import RunNames, TopicFactory
from harness.checks import recorded
from harness.checks.epoch_fencing import assert_epoch_validation
from harness.clients import raw as rr
from harness.clients.admin import QUIET
from harness.clients.closing import close_producer
from harness.clients.history import produce
from harness.cluster.base import Cluster
from harness.nemesis.faults import Pause
from harness.protocol.errors import OFFSET_OUT_OF_RANGE, describe

pytestmark = [pytest.mark.kip1094, pytest.mark.needs_fault_control]
# A frozen broker accepts connections and answers nothing: clients give up on it after 10 s, not 60.
PAUSED_PEER = {"socket.timeout.ms": 10000}


def _commit_through(cluster: Cluster, topic: str, group: str, last: int) -> dict[str, int]:
    """A group member reads through offset `last` and commits; the committed (offset, epoch) read back."""
    consumer = Consumer({**cluster.client_config(), **QUIET, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", **PAUSED_PEER})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        offsets: list[int] = []
        while not offsets or offsets[-1] < last:
            msg = consumer.poll(30)
            assert msg is not None, f"no record from {topic} within 30 s after offset {offsets[-1:]}"
            if msg.error() is None:
                offsets.append(msg.offset())
        consumer.commit(asynchronous=False)
        (tp,) = consumer.committed([TopicPartition(topic, 0)], timeout=10)
        return {"offset": tp.offset, "epoch": tp.leader_epoch}
    finally:
        consumer.close()


def test_zombie_leader_answers_a_newer_committed_epoch_with_an_epoch_error(
    fault_cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames
) -> None:
    """Seed 004, "Committing Leader Epoch", Phases 1-3: a leader frozen long enough to be replaced,
    then thawed while it cannot hear the controller, still believes it leads at its old epoch (a
    zombie) and serves fetches. A consumer group committed (Xj, epoch 2) from the new leader, Xj
    beyond the zombie's log end. A fetch of Xj carrying that committed epoch must get
    UNKNOWN_LEADER_EPOCH (so the consumer refreshes its metadata), not OFFSET_OUT_OF_RANGE, which
    the zombie gives a fetch without an epoch; OffsetsForLeaderEpoch and ListOffsets likewise."""
    cluster = fault_cluster
    topic = topic_factory()
    writer = Producer({**cluster.client_config(), **QUIET, "acks": "all"})
    produce(writer, topic, [f"phase1-{i}".encode() for i in range(20)])
    before = cluster.partition_state(topic)
    raw = rr.RawConnector(cluster)
    try:
        zombie = raw(before.leader)  # connected now: the zombie will not accept new work from the controller
        tid = rr.topic_id(zombie, topic)
        Pause(cluster, before.leader, topic).inject()
        after = cluster.wait_for_partition(
            topic, 0, lambda s: s.leader not in (-1, before.leader) and s.leader_epoch > before.leader_epoch,
            f"a new leader replacing the paused {before.leader}",
        )
        # A new producer: the first one still waits on requests the frozen leader will never answer.
        produce(Producer({**cluster.client_config(), **QUIET, "acks": "all", **PAUSED_PEER}), topic,
                [f"phase2-{i}".encode() for i in range(30)])
        committed = _commit_through(cluster, topic, run_names.group("kip1094-zombie"), 49)
        expected = {"offset": 50, "epoch": after.leader_epoch}
        assert committed == expected, f"premise: the group committed {committed}, expected {expected}"

        # While the controller sleeps, the thawed broker cannot learn that it was replaced.
        cluster.pause_controller()
        try:
            cluster.resume_node(before.leader)
            seen = rr.partition_metadata(zombie, topic)
            fetch = rr.fetch(zombie, zombie.max_version("Fetch"), topic, tid, 0, committed["offset"],
                             current_epoch=committed["epoch"])
            without_epoch = rr.fetch(zombie, zombie.max_version("Fetch"), topic, tid, 0, committed["offset"])
            ofle = rr.offsets_for_leader_epoch(zombie, zombie.max_version("OffsetForLeaderEpoch"), topic, 0,
                                               committed["epoch"], current_epoch=committed["epoch"])
            listed = rr.list_offsets(zombie, zombie.max_version("ListOffsets"), topic, 0, -1,
                                     current_epoch=committed["epoch"])
        finally:
            cluster.resume_controller()
    finally:
        raw.close()
        close_producer(writer)

    assert (seen["LeaderId"], seen["LeaderEpoch"]) == (before.leader, before.leader_epoch), (
        f"premise: the thawed broker should still see itself leading at epoch {before.leader_epoch}; it sees {seen}"
    )
    assert without_epoch["ErrorCode"] == OFFSET_OUT_OF_RANGE, (
        f"premise: the zombie should answer a fetch of {committed['offset']} without an epoch with OFFSET_OUT_OF_RANGE "
        f"(seed 004, Phase 3); it answered {describe(without_epoch['ErrorCode'])}"
    )
    answers: list[dict[str, Any]] = [
        {"api": api, "version": zombie.max_version(api), "broker": before.leader, "role": "leader",
         "requested_epoch": committed["epoch"], "current_epoch": seen["LeaderEpoch"], "partition": p}
        for api, p in (("Fetch", fetch), ("OffsetForLeaderEpoch", ofle), ("ListOffsets", listed))
    ]
    recorded.save("kip1094-zombie", {"answers": answers, "committed": committed, "zombie_epoch": seen["LeaderEpoch"]})
    zombie_state = f"from zombie {before.leader} at epoch {seen['LeaderEpoch']}; committed {committed}"
    assert_epoch_validation(answers, zombie_state)
