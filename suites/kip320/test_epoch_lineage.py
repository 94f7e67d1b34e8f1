"""KIP-320 answers about a partition's past: end offsets per epoch, offset epochs, batch stamps, Metadata epochs."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.epoch_lineage import (
    assert_batches_carry_append_epochs,
    assert_end_offsets,
    assert_epochs_rise,
    assert_list_offsets_epochs,
    assert_metadata_versions_agree,
    require_every_follower_read,
)
from harness.histories import store
from harness.scenarios.epoch_truth import require_moves
from harness.scenarios.kip320 import (
    EpochLineage,
    end_offsets,
    list_offsets_epochs,
    metadata_versions,
    replica_logs,
    unmoved_lineage,
)
from harness.verdicts import NotSupported, TargetRefused, require_scene

pytestmark = pytest.mark.kip320

# The leader changes each lineage makes: three moves; a clean stop, a failback, a crash and an unclean
# election. A check of the epochs after them judges nothing on a partition that never left its first.
MOVES = {"leader-moves": 3, "nemesis": 4}


@pytest.mark.promise("kip320.ofle.epoch-end-offsets")
def test_offsets_for_leader_epoch_ends_each_epoch_where_the_next_begins(
    lineage: EpochLineage, cluster: Cluster
) -> None:
    """KIP-320, "Replica Handling" and "Consumer Handling": after a sequence of leader changes,
    OffsetsForLeaderEpoch answers each past epoch with that epoch and the start offset of the next
    one (as the log's own batches show it), the current epoch with the log end, and an epoch above
    every known one with the sentinel (-1, -1), at every version from v2 the leader speaks. The
    nemesis lineage includes an unclean election: the truncated epoch ends where the new leader began."""
    require_moves(lineage, MOVES[lineage.name])
    asked = end_offsets(cluster, lineage)
    store.save(f"kip320-end-offsets-{lineage.name}", {
        "log": asked.log, "current_epoch": asked.current_epoch, "log_end": asked.log_end,
        "answers": asked.answers[max(asked.answers)], "by_version": asked.answers,
    })
    batches = asked.batches
    for version, answers in sorted(asked.answers.items()):
        try:
            assert_end_offsets(batches, asked.current_epoch, asked.log_end, answers)
        except AssertionError as exc:
            raise AssertionError(f"OffsetsForLeaderEpoch v{version}: {exc}") from None


@pytest.mark.promise("kip320.list-offsets.epoch-of-offset")
def test_list_offsets_returns_the_epoch_of_the_offset_it_returns(lineage: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Protocol Changes / ListOffsets": "we add the leader epoch to the response that
    corresponds with the returned offset": EARLIEST gives offset 0 and the epoch of its batch,
    LATEST the log end and the current epoch, a timestamp the first record at or after it and that
    record's epoch. Asked with the current epoch, at every version from v4 (the first with LeaderEpoch);
    a leader that advertises none is "not supported by this target", its ListOffsets range the evidence."""
    require_moves(lineage, MOVES[lineage.name])
    asked = list_offsets_epochs(cluster, lineage)
    store.save(f"kip320-list-offsets-epochs-{lineage.name}", {
        "log": asked.log, "current_epoch": asked.current_epoch, "log_end": asked.log_end, "answers": asked.answers,
    })
    assert_list_offsets_epochs(asked.batches, asked.current_epoch, asked.log_end, asked.answers)


@pytest.mark.promise("kip320.batches.stamped-with-epoch")
def test_fetched_batches_carry_the_epoch_they_were_appended_in(lineage: EpochLineage, cluster: Cluster) -> None:
    """KIP-320, "Replica Handling" and "Consumer Handling" (the epoch of each batch, from KIP-101): the
    leader stamps PartitionLeaderEpoch into each batch at append; consumers commit and validate with it.
    Each acknowledged write sits in a batch stamped with
    the epoch it was written in, on the leader and, read through Fetch v11+, on every in-sync
    follower (a follower keeps the leader's stamp). A follower serves a consumer's Fetch from v11 only
    (KIP-392): one that advertises none is not read, and once the logs read are judged the check ends
    "not supported by this target", the followers' Fetch ranges the evidence."""
    require_moves(lineage, MOVES[lineage.name])
    replicas = replica_logs(cluster, lineage)
    appends = lineage.append_dicts()
    for broker, batches in replicas.logs.items():
        role = replicas.role(broker)
        store.save(f"kip320-batch-epochs-{lineage.name}-{role}", {
            "log": replicas.blob(batches), "appends": appends, "replica": f"{role} {broker}",
        })
        assert_batches_carry_append_epochs(batches, appends, f"{role} {broker}")
    require_every_follower_read(replicas.followers_offered)


@pytest.mark.promise("kip320.metadata.leader-epoch")
def test_every_metadata_version_gives_the_current_leader_epoch(
    request: pytest.FixtureRequest, cluster: Cluster, topic_factory: TopicFactory
) -> None:
    """KIP-320, "Protocol Changes / Metadata": "The metadata response will be extended to include the
    leader epoch." After three leader moves, every Metadata version from v7 (the first with
    LeaderEpoch) that each broker speaks gives the same leader at the same epoch, the one the
    leader's own newest answer gives, and not below the epoch the moves reached. A leader at no
    epoch (-1) fails it, moves or not: the moves, and every check of a lineage, need that epoch, and
    refuse their premise naming this check; this one then asks about a new partition."""
    try:
        leader_moves: EpochLineage = request.getfixturevalue("leader_moves")
    except (TargetRefused, NotSupported) as exc:
        leader_moves = unmoved_lineage(cluster, topic_factory(replication_factor=3), str(exc))
    answers = metadata_versions(cluster, leader_moves)
    epochless = [a for a in answers if a.leader is not None and a.leader >= 0 and a.epoch is not None and a.epoch < 0]
    reached = None if leader_moves.refused else max(leader_moves.step_dicts()[-1]["epochs"].values())
    store.save("kip320-metadata-versions", {"answers": answers, "reached": reached, "epochless": epochless})
    assert not epochless, (
        f"{len(epochless)} of {len(answers)} Metadata answers (v7+, which carry LeaderEpoch) name a leader at no "
        "epoch (-1):\n  " + "\n  ".join(f"broker {a.broker} Metadata v{a.version}: leader {a.leader} epoch "
                                         f"{a.epoch} error {a.error}" for a in epochless[:10]))
    leader_moves.require_moves("Metadata's leader epoch after leader moves")
    assert_metadata_versions_agree(answers, max(leader_moves.step_dicts()[-1]["epochs"].values()))


@pytest.mark.promise("kip320.metadata.leader-epoch")
def test_metadata_leader_epoch_rises_with_every_leader_move(leader_moves: EpochLineage) -> None:
    """KIP-320, "Protocol Changes / Metadata": the Metadata response carries the partition's
    leader epoch. Through three leader moves (the target's own way, or reassignment and a
    preferred election; no fault), every running broker's Metadata (at its top version) agrees on
    the epoch after each move, and the epoch rises strictly with each one."""
    leader_moves.require_moves("the Metadata epoch across leader moves")
    steps = leader_moves.step_dicts()
    store.save("kip320-metadata-epochs-moves", {"steps": steps})
    moves = [s for s in steps if "leader move" in s["step"]]
    require_scene(len(moves) == 3, f"the harness's lineage has {len(moves)} leader moves, not 3: {steps}")
    assert_epochs_rise(leader_moves.steps)


@pytest.mark.needs_fault_control
@pytest.mark.promise("kip320.metadata.leader-epoch")
def test_metadata_leader_epoch_rises_with_every_election(nemesis_lineage: EpochLineage) -> None:
    """KIP-320, "Protocol Changes / Metadata": the Metadata response carries the partition's
    leader epoch. Through a clean stop of the leader, a crash, a failback to the preferred leader
    and a forced unclean election, every running broker's Metadata (at its top version) agrees on
    the epoch after each election, and the epoch rises strictly with each one."""
    steps = nemesis_lineage.step_dicts()
    store.save("kip320-metadata-epochs", {"steps": steps})
    kinds = ["clean stop", "failback", "crash", "unclean election"]
    missing = [k for k in kinds if not any(k in s["step"] for s in steps)]
    require_scene(not missing, f"the harness's lineage lacks {missing}: {steps}")
    assert_epochs_rise(nemesis_lineage.steps)
