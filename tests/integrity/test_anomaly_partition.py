"""The per-partition judge on Arrow tables, without Spark: the edges a cogroup can hand it."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from harness.integrity.anomaly_partition import _positions, _written_plainly, judge, value_codes

SENDS = pa.schema([("process", pa.string()), ("start_ns", pa.int64()), ("end_ns", pa.int64()), ("txn", pa.string()),
                   ("offset", pa.int64()), ("value", pa.string()), ("status", pa.string()),
                   ("commit_ns", pa.int64()), ("committed", pa.bool_())])
READS = pa.schema([("process", pa.string()), ("start_ns", pa.int64()), ("end_ns", pa.int64()), ("txn", pa.string()),
                   ("outcome", pa.string()), ("pos", pa.int32()), ("offset", pa.int64()), ("value", pa.string())])
KEY = (pa.scalar("t"), pa.scalar(0, pa.int32()))


def sends(*rows: tuple[str, int | None, str]) -> pa.Table:
    """(value, offset, status) sends of one process, a tick apart, outside transactions."""
    return pa.Table.from_pylist([
        {"process": "p0", "start_ns": 10 * i, "end_ns": 10 * i + 5, "txn": None, "offset": o, "value": v,
         "status": st, "commit_ns": None, "committed": st == "ok"} for i, (v, o, st) in enumerate(rows)], SENDS)


def reads(*rows: tuple[int, str | None]) -> pa.Table:
    """(offset, value) records of one ok poll of p1."""
    return pa.Table.from_pylist([
        {"process": "p1", "start_ns": 1000, "end_ns": 1005, "txn": None, "outcome": "ok", "pos": i, "offset": o,
         "value": v} for i, (o, v) in enumerate(rows)], READS)


def found(table: pa.Table) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for k in table.column("kind").to_pylist():
        kinds[k] = kinds.get(k, 0) + 1
    return kinds


def test_a_partition_nobody_polled_has_every_acknowledged_send_unseen() -> None:
    out = judge(KEY, sends(("a", 0, "ok"), ("b", None, "info")), READS.empty_table())
    assert found(out) == {"unseen": 1}
    (ops,) = [json.loads(o) for o in out.column("ops").to_pylist()]
    assert ops == [{"role": "send", "process": "p0", "start_ns": 0, "end_ns": 5, "txn": None, "offset": 0,
                    "value": "a", "topic": "t", "partition": 0}]


def test_a_partition_only_polled_is_judged_on_its_polls() -> None:
    assert found(judge(KEY, SENDS.empty_table(), reads((0, "a"), (2, "b")))) == {}
    # One poll that saw offset 0 twice, with two values: the offset is torn, and the poll went nowhere.
    assert found(judge(KEY, SENDS.empty_table(), reads((0, "a"), (0, "b")))) == {
        "inconsistent-offsets": 1, "int-nonmonotonic-poll": 1}


def test_a_null_value_is_one_value_that_matches_no_read() -> None:
    """As Spark's groupBy and joins: nulls group together (a null at two offsets is a duplicate), and a
    null read proves or sees nothing (the null send stays unseen)."""
    out = judge(KEY, sends((None, 0, "ok")), reads((0, None), (1, None)))
    assert found(out) == {"duplicate": 1, "unseen": 1}, out.to_pylist()
    assert [c["value"] for c in out.to_pylist() if c["kind"] == "duplicate"] == [None]


def test_integer_values_are_judged_as_any_other_values() -> None:
    """Values that are plain integers take the judge's integer codes, other values its dictionary:
    the same history gives the same cases either way; and "007" is not 7."""
    def history(name: Callable[[int], str]) -> tuple[pa.Table, pa.Table]:
        return (sends((name(5), 0, "ok"), (name(6), 1, "ok"), (name(7), 2, "ok"), (name(9), 3, "ok"),
                      (None, None, "info")),
                reads((0, name(5)), (1, name(6)), (1, name(8)), (3, name(9)), (4, name(5))))

    codes, null, value_of = value_codes(pa.chunked_array([["5", "6", None, "9"]]))
    assert (codes.tolist(), null, value_of(4)) == ([0, 1, 5, 4], 5, "9")  # the integer path

    def cases(name: Callable[[int], str]) -> list[tuple[str, int, str]]:
        return [(c["kind"], c["offset"], c["value"]) for c in judge(KEY, *history(name)).to_pylist()]

    assert cases(str) == [("inconsistent-offsets", 1, "6,8"), ("duplicate", 0, "5"), ("lost-write", 2, "7"),
                          ("unseen", 2, "7"), ("int-nonmonotonic-poll", 1, "8"), ("int-poll-skip", 3, "9")]
    assert [(k, o, v.replace("v", "")) for k, o, v in cases(lambda i: f"v{i}")] == cases(str)
    assert found(judge(KEY, SENDS.empty_table(), reads((0, "7"), (1, "7")))) == {"duplicate": 1}
    assert found(judge(KEY, SENDS.empty_table(), reads((0, "7"), (1, "007")))) == {}



@pytest.mark.parametrize(("values", "plain"), [
    (["7", "-7", "10", "0", "1000000000000000000", "9223372036854775807", None], True),
    (["007"], False), (["-0"], False), (["0x7"], False), (["0x174876E800"], False),  # Arrow's cast reads each
    (["-9223372036854775808"], False),  # written plainly, but its magnitude is no int64
])
def test_only_integers_written_as_str_writes_them_are_their_own_codes(values: list[str | None], plain: bool) -> None:
    """A value is its own code only if `str` of its integer gives it back: "0x174876E800" is
    100000000000 and as long, yet another value. Either way each code names its value."""
    column = pa.chunked_array([values], pa.string())
    assert _written_plainly(column, pc.cast(column, pa.int64())) is plain
    codes, _, value_of = value_codes(column)
    assert [value_of(c) for c in codes.tolist()] == values


@pytest.mark.parametrize("offsets", [[0, 1, 2, 5, 6], [-1, 0, 3], [7], [0, 1000], []])
def test_positions_are_one_plus_the_index_among_the_log_offsets(offsets: list[int]) -> None:
    log = np.asarray(offsets, dtype=np.int64)
    assert _positions(log)(log).tolist() == list(range(1, len(offsets) + 1))
