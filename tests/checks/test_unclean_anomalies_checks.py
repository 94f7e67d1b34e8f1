"""The check of a consumer's history across an unclean election (harness.checks.unclean_anomalies) on the
cases Jepsen's checks name: the truncation and one rewind to the divergence pass; anything else FAILs."""

from __future__ import annotations

import pytest

from harness.checks.unclean_anomalies import assert_only_the_truncation, beyond_the_truncation
from harness.errors import SceneUnmet, TargetRefused
from harness.histories.unclean_anomalies import AnomalySeen, ConsumerAnomalies

DIVERGENCE, POSITION = 20, 50


def seen(*cases: AnomalySeen) -> ConsumerAnomalies:
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.anomaly] = counts.get(c.anomaly, 0) + 1
    return ConsumerAnomalies("java/earliest", "java 4.4.0", 110, counts, cases, DIVERGENCE, POSITION, DIVERGENCE)


TRUNCATED = tuple(AnomalySeen("inconsistent-offsets", o, f"divergent-{o - 20},new-leader-{o - 20}", "offset holds ...")
                  for o in range(DIVERGENCE, POSITION))
REWIND = AnomalySeen("nonmonotonic-poll", DIVERGENCE, "new-leader-0", "offset 20 after offset 49: -29 position(s) on")


def test_the_truncation_and_one_rewind_to_the_divergence_pass() -> None:
    assert_only_the_truncation(seen(*TRUNCATED, REWIND))
    assert_only_the_truncation(seen(*TRUNCATED))  # a consumer that reported and stopped rewinds nowhere


@pytest.mark.parametrize("case", [
    AnomalySeen("lost-write", 20, "new-leader-0", "committed at offset 20, at or below offset 79 that a poll read"),
    AnomalySeen("unseen", 79, "new-leader-59", "acknowledged, never polled"),
    AnomalySeen("nonmonotonic-poll", 0, "replicated-0", "offset 0 after offset 49"),
    AnomalySeen("poll-skip", 60, "new-leader-40", "offset 60 after offset 49"),
    AnomalySeen("duplicate", 20, "new-leader-0", "value at offsets 20, 80"),
    AnomalySeen("inconsistent-offsets", 5, "replicated-5,x", "offset holds replicated-5, x"),
])
def test_anything_else_fails_naming_it(case: AnomalySeen) -> None:
    with pytest.raises(AssertionError, match=case.anomaly):
        assert_only_the_truncation(seen(*TRUNCATED, REWIND, case))


def test_a_second_rewind_to_the_divergence_is_the_consumer_s() -> None:
    again = AnomalySeen("nonmonotonic-poll", DIVERGENCE, "new-leader-0", "offset 20 after offset 79")
    assert beyond_the_truncation(seen(*TRUNCATED, REWIND, again)) == [again]


def test_cases_left_out_of_the_list_are_refused() -> None:
    partial = seen(*TRUNCATED)
    with pytest.raises(AssertionError, match="30 cases counted, 29 listed"):
        assert_only_the_truncation(ConsumerAnomalies(**{**partial.__dict__, "cases": TRUNCATED[:-1]}))


def test_without_the_new_leader_s_writes_there_is_nothing_to_judge() -> None:
    """A consumer that reads on from its old position shows a lost write only where the new leader
    acknowledged records below it: none acknowledged is the target's refusal, elsewhere the scene's."""
    with pytest.raises(TargetRefused, match="acknowledged none"):
        assert_only_the_truncation(ConsumerAnomalies(**{**seen().__dict__, "first_rewritten": None}))
    with pytest.raises(SceneUnmet, match="first write is at 25"):
        assert_only_the_truncation(ConsumerAnomalies(**{**seen().__dict__, "first_rewritten": 25}))
