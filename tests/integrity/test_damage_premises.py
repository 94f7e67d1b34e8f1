"""The can-fail checks' premises: a clean output before the damage, and the damage done as asked.

Both are the target's part: a broken one ends the check "target refused" with the target's answers,
never a FAIL of the checker (whose promise it is) nor an ERROR."""

from __future__ import annotations

import pytest

from harness.errors import TargetRefused
from harness.integrity.model import Anomaly, Findings, TopicTotals
from harness.scenarios.integrity import require_clean, require_deleted_head


def findings(**counts: int) -> Findings:
    rows = {Anomaly(k): [{"kind": k, "topic": "out", "partition": 0, "offset": 7, "id": 3, "key": "k1", "seq": 2,
                          "detail": "d"}]
            for k in counts}
    return Findings({Anomaly(k): n for k, n in counts.items()}, rows, [TopicTotals("out", "output", 10, 10, 10)])


def test_a_clean_pipeline_is_the_premise() -> None:
    require_clean(findings(), "summary.txt")
    # A loss inside a reported window is no failure.
    require_clean(findings(lost_in_truncation=2), "summary.txt")


@pytest.mark.parametrize("kind", [a.value for a in Anomaly if a.is_failure])
def test_any_failure_before_the_damage_refuses_the_premise(kind: str) -> None:
    with pytest.raises(TargetRefused, match=rf"shows \{{'{kind}': 4\}} before any damage") as info:
        require_clean(findings(**{kind: 4}), "r/summary.txt")
    assert "out" in str(info.value) and "r/summary.txt" in str(info.value)


def test_the_head_deleted_as_asked_is_the_premise() -> None:
    require_deleted_head("out", 6, (0, 40), (6, 40))


@pytest.mark.parametrize(("after", "what"), [
    ((0, 6), "the records from the offset on deleted instead (Tansu 0.6.0 on PostgreSQL: record.id >= offset)"),
    ((0, 40), "nothing deleted"),
    ((40, 40), "everything deleted"),
    ((6, 41), "a record appended"),
])
def test_a_deletion_other_than_asked_refuses_the_premise(after: tuple[int, int], what: str) -> None:
    with pytest.raises(TargetRefused, match=rf"log start {after[0]}, high watermark {after[1]};") as info:
        require_deleted_head("out", 6, (0, 40), after)
    assert "KIP-107 leaves it at log start 6, high watermark 40" in str(info.value), what
