"""KIP-320 epoch validation on ListOffsets, once as the target answered and once altered: run by
tests/harness/test_allure_report.py in a child `kcts run`. The scene and the answers are real; the
altered check changes the newer-epoch answers to NONE, as a broker that breaks the promise would
give them, so the rendered report holds a FAIL with its wire evidence beside a pass."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from harness.checks.epoch_fencing import assert_covers, assert_epoch_validation
from harness.cluster.base import Cluster
from harness.protocol.sentinels import NO_EPOCH
from harness.scenarios import kip320

pytestmark = pytest.mark.kip320
CASES = ("unset", "current", "newer")


@pytest.fixture
def probes(cluster: Cluster, topic_factory: Callable[..., str]) -> kip320.ValidationProbes:
    lineage = kip320.leader_moves(cluster, topic_factory(replication_factor=3), moves=1)
    return kip320.epoch_validation(cluster, lineage, "ListOffsets", ("leader",), cases=CASES)


def test_list_offsets_answers_a_newer_epoch_with_unknown_leader_epoch(probes: kip320.ValidationProbes) -> None:
    """KIP-320 "Protocol Changes / ListOffsets": a newer CurrentLeaderEpoch gets UNKNOWN_LEADER_EPOCH."""
    assert_covers(probes.answers, set(CASES))
    assert_epoch_validation(probes.answers, f"on {probes.topic}")


def test_altered_list_offsets_answers_a_newer_epoch_with_unknown_leader_epoch(
    probes: kip320.ValidationProbes,
) -> None:
    """KIP-320 "Protocol Changes / ListOffsets", judged on answers altered to NONE for a newer epoch:
    this check must FAIL, naming the answers that broke the promise."""
    answers = copy.deepcopy(probes.answers)
    for a in answers:
        if a.requested_epoch != NO_EPOCH and a.requested_epoch > a.current_epoch:
            a.partition["ErrorCode"] = 0
    assert_epoch_validation(answers, f"on {probes.topic} (altered)")
