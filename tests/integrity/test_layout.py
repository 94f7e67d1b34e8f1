"""How the checks deal a Parquet layout's pieces to Spark tasks (`layout.deal`)."""

from __future__ import annotations

import pytest

from harness.integrity.layout import deal


def loads(dealt: list[list[tuple[object, ...]]], size: dict[object, int]) -> list[int]:
    return [sum(size[row[0]] for row in held) for held in dealt]


def test_equal_pieces_are_dealt_evenly_the_fullest_task_first() -> None:
    rows = [(f"p{i}",) for i in range(9)]
    dealt = deal(rows, [10] * 9, 4)
    assert [len(held) for held in dealt] == [3, 2, 2, 2]
    assert sorted(row for held in dealt for row in held) == sorted(rows)


def test_the_largest_pieces_go_first_each_to_the_least_loaded_task() -> None:
    size = {"a": 50, "b": 40, "c": 30, "d": 30, "e": 20, "f": 10}
    dealt = deal([(k,) for k in size], list(size.values()), 2)
    assert loads(dealt, size) == [90, 90], dealt
    assert dealt[0][0] == ("a",)


@pytest.mark.parametrize("rows", [0, 1, 3])
def test_fewer_pieces_than_tasks_leave_tasks_empty_and_lose_none(rows: int) -> None:
    dealt = deal([(i,) for i in range(rows)], [1] * rows, 4)
    assert len(dealt) == 4
    assert sorted(row[0] for held in dealt for row in held) == list(range(rows))
