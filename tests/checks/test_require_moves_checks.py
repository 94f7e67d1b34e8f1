"""`require_moves(lineage, n)`: the checks of a lineage's epochs judge nothing where the leader did
not move; a refused or missing move is the "target refused" verdict with the lineage as evidence,
never a pass (recorded 4.4.0 histories, altered)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest
from recordings import Recording

from harness.cluster.state import PartitionState
from harness.errors import NotSupported, TargetRefused
from harness.nemesis.leadership import move_leader
from harness.scenarios.epoch_truth import moves_seen, require_moves
from harness.scenarios.kip320 import EpochLineage, Step
from tests.harness.test_epochless import StateCluster

MOVES, NEMESIS = "kip320-metadata-epochs-moves", "kip320-metadata-epochs"


def _lineage(steps: list[dict[str, Any]], name: str = "leader-moves", refused: str | None = None) -> EpochLineage:
    return EpochLineage(name, "t", uuid.UUID(int=0), (),
                        tuple(Step(s["step"], s["leader"], {int(b): e for b, e in s["epochs"].items()}) for s in steps),
                        refused=refused)


def test_the_recorded_histories_hold_their_moves(recording: Recording) -> None:
    require_moves(_lineage(recording(MOVES)["steps"]), 3)
    require_moves(_lineage(recording(NEMESIS)["steps"], "nemesis"), 4)


def test_a_refused_move_is_a_refused_premise_with_the_targets_words(recording: Recording) -> None:
    """As kcts's leader_moves records it: the first step only, and the target's refusal."""
    steps = recording(MOVES)["steps"][:1]
    h = _lineage(steps, refused="AlterPartitionReassignments: applied nothing")
    with pytest.raises(TargetRefused, match=r"needs 3 leader moves of t; the leader-moves lineage has 0, the target "
                                            r"refused: AlterPartitionReassignments: applied nothing \(steps: created: "
                                            r"leader 1, epochs \{1: 0, 2: 0, 3: 0\}\)"):
        require_moves(h, 3)


def test_a_move_that_left_the_epoch_where_it_was_is_a_refused_premise(recording: Recording) -> None:
    """One step's epoch, one broker's: the second move did not raise the epoch (2 stays 1)."""
    steps = recording(MOVES)["steps"]
    for b in steps[2]["epochs"]:
        steps[2]["epochs"][b] = 1
    assert moves_seen(_lineage(steps)) == 2
    with pytest.raises(TargetRefused,
                       match=r"has 2 \(steps: .*leader move to 1: leader 1, epochs \{1: 1, 2: 1, 3: 1\}"):
        require_moves(_lineage(steps), 3)


def test_a_nemesis_lineage_short_of_one_election_is_a_refused_premise(recording: Recording) -> None:
    steps = recording(NEMESIS)["steps"]
    steps[4]["epochs"] = dict(steps[3]["epochs"])
    with pytest.raises(TargetRefused, match=r"needs 4 leader moves of t; the nemesis lineage has 3"):
        require_moves(_lineage(steps, "nemesis"), 4)


TANSU = ("Tansu brokers keep no replica logs: every broker reads and writes the one copy of each partition in the "
         "shared PostgreSQL storage engine, and each broker's Metadata names itself (node 111) as leader")


def test_a_target_without_leader_moves_is_not_supported_with_its_own_account(recording: Recording) -> None:
    """Tansu's profile: one log per partition, no way of its own to move a leader. The checks that need
    a move are "not supported" with that account, not a refused premise (and never a pass)."""
    steps = recording(MOVES)["steps"][:1]
    h = EpochLineage("leader-moves", "t", uuid.UUID(int=0), (),
                     tuple(Step(s["step"], s["leader"], {int(b): e for b, e in s["epochs"].items()}) for s in steps),
                     refused=TANSU, unsupported=True)
    with pytest.raises(NotSupported, match=r"3 leader moves \(a partition whose leader moved\) is not supported by "
                                           r"this target \(Tansu brokers keep no replica logs"):
        require_moves(h, 3)
    with pytest.raises(NotSupported, match="Metadata's epoch"):
        h.require_moves("Metadata's epoch")


def test_moving_a_leader_on_a_target_with_one_log_per_partition_is_not_supported() -> None:
    """`move_leader` decides it from the capabilities, before asking the target anything."""
    cluster = StateCluster(PartitionState("t", 0, 111, 0, (111,), (111,)))
    cluster.target = replace(cluster.target, replication=False, tables={"replication_why": TANSU})
    assert cluster.capabilities.leader_moves is None and cluster.capabilities.replication is False
    with pytest.raises(NotSupported, match=r"moving a partition's leader is not supported by this target \(Tansu"):
        move_leader(cluster, None, None, "t")  # type: ignore[arg-type]
