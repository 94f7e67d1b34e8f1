"""Jepsen's per-partition anomaly classes over one (topic, partition) of a client history, vectorized.

Every class here but must-have-committed? is local to one partition (and, for the poll and send
orders, to one process within it): Jepsen's keys are partitions, and its version order is one
partition's. So Spark gathers each partition's sends and reads once (one cogroup, in
`anomaly_checks.all_cases`) and this module judges them together with numpy over Arrow, sorted
arrays instead of a shuffle, join or sort per class. Whether an indeterminate writer was proven by
a read on another partition is decided before, in Spark, and arrives as `committed`.

The definitions are those of Jepsen's Kafka workload (jepsen/src/jepsen/tests/kafka.clj in
jepsen-io/jepsen), named after its functions:
- the log (`version-orders`): every (offset, value) seen by a committed send's acknowledgement or by
  any poll, whatever the poll's outcome (pollers must only ever see safe data). Positions are dense
  ranks of the offsets that hold anything (Jepsen's indices: offsets with gaps for transaction
  markers, made contiguous);
- inconsistent-offsets (`version-orders` :errors): one offset observed with two or more values. The
  signature of a truncation a client did not detect;
- duplicate (`duplicate-cases`): one value at more than one offset;
- G1a (`g1a-cases`, aborted read): an ok poll saw a value whose send failed, or whose transaction
  aborted (its commit failed, or its abort succeeded);
- lost-write (`lost-write-cases`): the bound is the highest first offset of any value an ok poll
  read; a committed value whose last offset is at or below it, and that no ok poll read, was lost.
  Named with its writer and a poll that read at the bound (Jepsen's max-read);
- unseen: an ok send (ok transaction) whose value no ok poll read. Jepsen reports what is still
  unseen at the end: every lost write, and the tail a consumer never reached;
- precommitted-read (`precommitted-read-cases`): a transaction polled a value it sent itself; under
  read_committed also by time, a poll that ended before the writer's transaction began to commit
  (monotonic times of one host; only against a recorded commit). Aborted writers are left to G1a;
- poll-skip, nonmonotonic-poll and their int- forms (`poll-skip+nonmonotonic-cases-per-process`,
  `int-poll-skip+nonmonotonic-cases`): along one process's ok polls, each record against the one
  read before it (in the previous poll, or earlier in the same poll: int-). A step of more than one
  position skipped records; a step of less than one went backwards or repeated. Positions are of
  the offsets the polls report, where Jepsen looks the value up: they differ only for values at two
  offsets, which `duplicate` reports. Jepsen forgives these across a rebalance; a consumer whose
  assignment changed should give each assignment its own process name;
- nonmonotonic-send and int-nonmonotonic-send (`nonmonotonic-send-cases`, the :nonmonotonic half
  of `int-send-skip+nonmonotonic-cases`): along one process's sends that did not fail, a value
  placed at or before the previous one's position (each value at its first offset); within one
  transaction it is int-. Send skips are allowed (`allowed-error-types`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

OK, FAIL = "ok", "fail"
EXAMPLES = 8  # Jepsen's condense-error keeps 8: examples per class, and operations per case that gathers many
OP_FIELDS = ("role", "process", "start_ns", "end_ns", "txn", "topic", "partition", "offset", "value")
# What Spark hands each side (anomaly_checks.all_cases); `offset` and `commit_ns` may be null.
SEND_INPUT = ("process", "start_ns", "end_ns", "txn", "offset", "value", "status", "commit_ns", "committed")
READ_INPUT = ("process", "start_ns", "end_ns", "txn", "outcome", "pos", "offset", "value")
CASE_WIRE_SCHEMA = ("kind string, topic string, partition int, offset bigint, value string, detail string, "
                    "ops string")
OPS_SCHEMA = ("array<struct<role: string, process: string, start_ns: bigint, end_ns: bigint, txn: string, "
              "topic: string, partition: int, offset: bigint, value: string>>")


class _Cases:
    """Case rows as columns, ops as JSON (Spark parses them back against OPS_SCHEMA). Operations are
    read from the Arrow tables only for the rows a case names."""

    def __init__(self, topic: str, partition: int, sends: pa.Table, reads: pa.Table) -> None:
        self.topic, self.partition = topic, partition
        self.frames = {"send": sends, "poll": reads}
        self.cols: dict[str, list[Any]] = {k: [] for k in ("kind", "offset", "value", "detail", "ops")}

    def op(self, role: str, row: int) -> dict[str, Any]:
        t = self.frames[role]
        where = {"topic": self.topic, "partition": self.partition}
        return {"role": role, **{f: where[f] if f in where else t.column(f)[row].as_py() for f in OP_FIELDS[1:]}}

    def add(self, kind: str, offset: Any, value: Any, detail: str, ops: list[tuple[str, int]]) -> None:
        self.cols["kind"].append(kind)
        self.cols["offset"].append(None if offset is None else int(offset))
        self.cols["value"].append(value)
        self.cols["detail"].append(detail)
        self.cols["ops"].append(json.dumps([self.op(role, int(row)) for role, row in ops]))

    def table(self) -> pa.Table:
        import pyarrow as pa

        n = len(self.cols["kind"])
        return pa.table({
            "kind": pa.array(self.cols["kind"], pa.string()), "topic": pa.array([self.topic] * n, pa.string()),
            "partition": pa.array([self.partition] * n, pa.int32()),
            "offset": pa.array(self.cols["offset"], pa.int64()),
            "value": pa.array(self.cols["value"], pa.string()), "detail": pa.array(self.cols["detail"], pa.string()),
            "ops": pa.array(self.cols["ops"], pa.string()),
        })


class _Side:
    """One side's columns as numpy arrays: nulls filled, and their places kept where they matter."""

    def __init__(self, table: pa.Table) -> None:
        import pyarrow.compute as pc

        self.table = table
        self.n = table.num_rows
        self.rows = _np().arange(self.n)
        self.start, self.end = self.ints("start_ns"), self.ints("end_ns")
        self.offset = self.ints("offset")
        self.has_offset = self.flags(pc.is_valid(table.column("offset")))
        self.process = _codes(table.column("process"))

    def ints(self, column: str, fill: int = -1) -> Any:
        import pyarrow.compute as pc

        return pc.fill_null(self.table.column(column), fill).to_numpy().astype("int64")

    @staticmethod
    def flags(mask: Any) -> Any:
        """A boolean Arrow column as numpy, null as false."""
        import pyarrow.compute as pc

        return pc.fill_null(mask, False).to_numpy(zero_copy_only=False).astype(bool)


def _np() -> Any:
    import numpy as np

    return np


def _codes(column: Any) -> Any:
    """Integer codes of a column's values (equal values, equal codes); null is -1."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(column).combine_chunks()
    return pc.fill_null(enc.indices, -1).to_numpy().astype("int64")


def _matches(left_codes: Any, left: Any, right_codes: Any, right: Any) -> tuple[Any, Any]:
    """Every pair (i, j) of rows i in `left` and j in `right` (index arrays) with one code, not -1.
    Codes are small integers: the rows of each code are found by counting, not by searching."""
    np = _np()
    left = left[left_codes[left] >= 0]
    right = right[right_codes[right] >= 0]
    if not len(left) or not len(right):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rc, lc = right_codes[right], left_codes[left]
    count_of = np.bincount(rc, minlength=int(lc.max()) + 1)
    order = np.argsort(rc, kind="stable")
    lo = (np.cumsum(count_of) - count_of)[lc]
    count = count_of[lc]
    total = int(count.sum())
    starts = np.repeat(lo, count)
    within = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    return np.repeat(left, count), right[order[starts + within]]


def value_codes(values: pa.ChunkedArray) -> tuple[Any, int, Any]:
    """Integer codes of the values (equal values, equal codes), the code of null (the largest: a null
    value groups with itself, as in Spark's groupBy, and matches nothing), and the value of a code.

    Values that are integers written plainly (the pipeline's ids) are their own codes, less the
    least; anything else is dictionary-encoded, which costs several times more."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        ints = pc.cast(values, pa.int64())
        plain = _written_plainly(values, ints)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        plain = False
    if plain and ints.null_count < len(ints):
        least, most = pc.min(ints).as_py(), pc.max(ints).as_py()
        if most - least <= 4 * len(ints):  # dense enough for arrays indexed by code
            null = most - least + 1
            codes = pc.fill_null(pc.subtract(ints, least), null).to_numpy().astype("int64")
            return codes, null, lambda code: None if code == null else str(int(code) + least)
    encoded = pc.dictionary_encode(values).combine_chunks()
    dictionary = encoded.dictionary
    null = len(dictionary)
    codes = pc.fill_null(encoded.indices, null).to_numpy().astype("int64")
    return codes, null, lambda code: None if code == null else dictionary[int(code)].as_py()


_POWERS = tuple(10 ** k for k in range(1, 19))


def _written_plainly(values: pa.ChunkedArray, ints: pa.ChunkedArray) -> bool:
    """Whether each value is its integer as `str` writes it ("7", "-7"; not "007", "+7", "-0" or
    "0x7", which Arrow's cast also reads): only digits and minus signs, as many as `str` writes.
    Counted, not compared as text: a third of the cost of casting back and comparing."""
    import pyarrow.compute as pc

    from harness.integrity.record_pass import string_buffers

    np = _np()
    for chunk in values.chunks:
        offsets, data = string_buffers(chunk)
        text = np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]]
        if not (((text - np.uint8(48)) <= 9) | (text == 45)).all():
            return False
    held = pc.is_valid(values).to_numpy(zero_copy_only=False)
    lengths = pc.fill_null(pc.binary_length(values), 0).to_numpy().astype(np.int64)
    n = pc.fill_null(ints, 0).to_numpy().astype(np.int64)
    magnitude = np.abs(n)  # the least int64 stays negative: one digit counted, so not plain
    written = 1 + np.searchsorted(np.asarray(_POWERS, dtype=np.int64), magnitude, side="right") + (n < 0)
    return bool((lengths == written)[held].all())


def _unique(keys: Any) -> tuple[Any, Any]:
    """The distinct keys, sorted, and how often each occurs (a sort: numpy's hashing unique was
    several times slower on these arrays)."""
    np = _np()
    ranked = np.sort(keys, kind="stable")  # timsort: the keys are mostly runs already in order
    starts = np.flatnonzero(np.concatenate(([True], ranked[1:] != ranked[:-1]))) if len(ranked) else np.zeros(0, int)
    return ranked[starts], np.diff(np.append(starts, len(ranked)))


def _positions(offsets: Any) -> Any:
    """A function from offsets of the log to their positions (1 + their index in `offsets`, its
    sorted distinct offsets). Offsets are nearly dense (gaps only where transaction markers sit), so
    this is a table indexed by offset, looked up in one gather; a sparse log (a table over four times
    its size) is searched instead."""
    np = _np()
    if not len(offsets):
        return lambda at: np.searchsorted(offsets, at) + 1
    least, span = int(offsets[0]), int(offsets[-1]) - int(offsets[0]) + 1
    if span > 4 * len(offsets):
        return lambda at: np.searchsorted(offsets, at) + 1
    table = np.zeros(span, dtype=np.int64)
    table[offsets - least] = np.arange(1, len(offsets) + 1)
    return lambda at: table[at - least]


def _ranges(keys: Any) -> tuple[Any, Any]:
    """A stable order of `keys` and the keys in that order (rows of one key: a searchsorted slice)."""
    np = _np()
    order = np.argsort(keys, kind="stable")
    return order, keys[order]


def _slice(order: Any, ranked: Any, key: int) -> Any:
    np = _np()
    return order[np.searchsorted(ranked, key, "left"):np.searchsorted(ranked, key, "right")]


def judge(key: tuple[Any, ...], sends_table: pa.Table, reads_table: pa.Table, read_committed: bool = True) -> pa.Table:
    """Every per-partition case of one (topic, partition): the cogroup's function. Values,
    transactions and processes become integer codes, so every class is a sort, a scatter or a
    searchsorted over arrays; Python touches only the rows of a case."""
    p = _Partition.of(sends_table, reads_table)
    log = _Log.of(p)
    out = _Cases(key[0].as_py(), key[1].as_py(), sends_table, reads_table)
    _inconsistent_offsets(log, p, out)
    _duplicates(log, p, out)
    _aborted_reads(p, out)
    _lost_writes(log, p, out)
    _unseen(p, out)
    _precommitted_reads(p, out, read_committed)
    _poll_order(log, p, out)
    _send_order(log, p, out)
    return out.table()


@dataclass(frozen=True)
class _Partition:
    """One partition's sends and reads as numpy arrays, what every class reads of them: values and
    transactions as integer codes (`sv`, `rv`, `s_txn`, `r_txn`; -1 no transaction), the sends' and
    polls' outcomes as flags."""

    sends_table: pa.Table
    s: _Side
    r: _Side
    sv: Any
    rv: Any
    null: int  # the code of a null value
    value_of: Callable[[int], str | None]
    s_txn: Any
    r_txn: Any
    s_ok: Any
    s_fail: Any
    committed: Any  # must-have-committed?, decided before (see the module docstring)
    commit_ns: Any
    has_commit: Any
    r_ok: Any
    r_pos: Any
    read_ok: Any  # per value code: some ok poll read it

    @property
    def ncode(self) -> int:
        return self.null + 1

    def matchable(self, codes: Any) -> Any:
        """`codes` for `_matches`: a null value matches nothing."""
        return _np().where(codes == self.null, -1, codes)

    @staticmethod
    def of(sends_table: pa.Table, reads_table: pa.Table) -> _Partition:
        import pyarrow as pa
        import pyarrow.compute as pc

        s, r = _Side(sends_table), _Side(reads_table)
        values = pa.chunked_array([*sends_table.column("value").cast(pa.string()).chunks,
                                   *reads_table.column("value").cast(pa.string()).chunks], pa.string())
        codes, null, value_of = value_codes(values)
        sv, rv = codes[:s.n], codes[s.n:]
        txns = _codes(_encoded(sends_table.column("txn"), reads_table.column("txn")))
        status = sends_table.column("status")
        r_ok = r.flags(pc.equal(reads_table.column("outcome"), OK))
        read_ok = _np().zeros(null + 1, dtype=bool)
        read_ok[rv[r_ok]] = True
        read_ok[null] = False
        return _Partition(
            sends_table, s, r, sv, rv, null, value_of, txns[:s.n], txns[s.n:],
            s.flags(pc.equal(status, OK)), s.flags(pc.equal(status, FAIL)), s.flags(sends_table.column("committed")),
            s.ints("commit_ns"), s.flags(pc.is_valid(sends_table.column("commit_ns"))), r_ok, r.ints("pos"), read_ok)


@dataclass(frozen=True)
class _Log:
    """Jepsen's version order of the partition: every (offset, value) that a committed send's
    acknowledgement or any poll saw, a row each (`off`, `code`; `role` True for a poll, `row` in its
    side), with each value's span (`first` and `last` offset, `present` where it was seen at all)
    and the position of an offset (`position`)."""

    off: Any
    code: Any
    role: Any
    row: Any
    position: Callable[[Any], Any]
    first: Any
    last: Any
    present: Any

    def ops(self, rows: Any) -> list[tuple[str, int]]:
        """The operations behind log rows, the first EXAMPLES of them."""
        return [("poll" if self.role[i] else "send", self.row[i]) for i in rows[:EXAMPLES]]

    @staticmethod
    def of(p: _Partition) -> _Log:
        np = _np()
        s, r = p.s, p.r
        logged = p.committed & s.has_offset
        off = np.concatenate([s.offset[logged], r.offset])
        code = np.concatenate([p.sv[logged], p.rv])
        role = np.concatenate([np.zeros(int(logged.sum()), dtype=bool), np.ones(r.n, dtype=bool)])
        row = np.concatenate([s.rows[logged], r.rows])
        offsets, _ = _unique(off)
        first = np.full(p.ncode, np.iinfo(np.int64).max)
        last = np.full(p.ncode, np.iinfo(np.int64).min)
        np.minimum.at(first, code, off)
        np.maximum.at(last, code, off)
        present = np.zeros(p.ncode, dtype=bool)
        present[code] = True
        return _Log(off, code, role, row, _positions(offsets), first, last, present)


def _inconsistent_offsets(log: _Log, p: _Partition, out: _Cases) -> None:
    """inconsistent-offsets: an offset held by two values."""
    held = log.code != p.null
    pairs, _ = _unique(log.off[held] * p.ncode + log.code[held])
    pair_off = pairs // p.ncode
    at, count = _unique(pair_off)
    if (count > 1).any():
        order, ranked = _ranges(log.off)
        for o in at[count > 1]:
            held_values = sorted(p.value_of(c) for c in pairs[pair_off == o] % p.ncode)
            out.add("inconsistent-offsets", int(o), ",".join(held_values), "offset holds " + ", ".join(held_values),
                    log.ops(_slice(order, ranked, int(o))))


def _duplicates(log: _Log, p: _Partition, out: _Cases) -> None:
    """duplicate: one value at two offsets (its span: the first and last offset it was seen at)."""
    twice = _np().flatnonzero(log.present & (log.first != log.last))
    if len(twice):
        order, ranked = _ranges(log.code)
        for c in twice:
            rows = _slice(order, ranked, int(c))
            offs = sorted({int(o) for o in log.off[rows]})
            out.add("duplicate", offs[0], p.value_of(c), "value at offsets " + ", ".join(map(str, offs)),
                    log.ops(rows))


def _aborted_reads(p: _Partition, out: _Cases) -> None:
    """G1a: an ok poll read a failed writer's value."""
    s, r = p.s, p.r
    for i, j in zip(*_matches(p.matchable(p.rv), r.rows[p.r_ok], p.matchable(p.sv), s.rows[p.s_fail]), strict=True):
        wtxn = p.sends_table.column("txn")[int(j)].as_py() or "(no txn)"
        out.add("G1a", r.offset[i], p.value_of(p.rv[i]), f"read a value of aborted or failed writer {wtxn}",
                [("send", j), ("poll", i)])


def _lost_writes(log: _Log, p: _Partition, out: _Cases) -> None:
    """lost-write, below the bound of the highest first offset of a value an ok poll read."""
    np = _np()
    if not p.read_ok.any():
        return
    r = p.r
    bound = int(log.first[p.read_ok].max())
    at_bound = r.rows[p.r_ok & (r.offset == bound)]
    max_read = [("poll", at_bound[np.argmin(r.start[at_bound])])] if len(at_bound) else []
    owed = log.present & (log.last <= bound) & ~p.read_ok
    owed[p.null] = False
    for j in np.flatnonzero(p.committed & owed[p.sv]):
        f = int(log.first[p.sv[j]])
        out.add("lost-write", f, p.value_of(p.sv[j]),
                f"committed at offset {f}, at or below offset {bound} that a poll read; never read",
                [("send", j), *max_read])


def _unseen(p: _Partition, out: _Cases) -> None:
    """unseen: acknowledged (ok), never polled by an ok poll."""
    s = p.s
    for j in _np().flatnonzero(p.s_ok & ~p.read_ok[p.sv]):
        out.add("unseen", s.offset[j] if s.has_offset[j] else None, p.value_of(p.sv[j]), "acknowledged, never polled",
                [("send", j)])


def _precommitted_reads(p: _Partition, out: _Cases, read_committed: bool) -> None:
    """precommitted-read: a transaction read its own write, or a poll ended before the commit began."""
    np = _np()
    s, r = p.s, p.r
    i, j = _matches(p.matchable(p.rv), r.rows, p.matchable(p.sv), s.rows[(p.s_txn >= 0) & ~p.s_fail])
    own = (p.r_txn[i] >= 0) & (p.r_txn[i] == p.s_txn[j])
    early = (p.has_commit[j] & (r.end[i] < p.commit_ns[j])) if read_committed else np.zeros(len(i), dtype=bool)
    for k in np.flatnonzero(own | early):
        wtxn = p.sends_table.column("txn")[int(j[k])].as_py()
        detail = (f"transaction {wtxn} polled its own write" if own[k]
                  else f"polled before transaction {wtxn} began to commit")
        out.add("precommitted-read", r.offset[i[k]], p.value_of(p.rv[i[k]]), detail, [("send", j[k]), ("poll", i[k])])


def _poll_order(log: _Log, p: _Partition, out: _Cases) -> None:
    """poll-skip and nonmonotonic-poll (int- within one poll), per process: each ok-read record
    against the one read before it."""
    np = _np()
    r = p.r
    ok_rows = r.rows[p.r_ok]
    o = ok_rows[np.lexsort((p.r_pos[ok_rows], r.start[ok_rows], r.process[ok_rows]))]
    if len(o) <= 1:
        return
    idx = log.position(r.offset[o])
    cur, prev = o[1:], o[:-1]
    delta = idx[1:] - idx[:-1]
    same_process = r.process[cur] == r.process[prev]
    same_poll = r.start[cur] == r.start[prev]
    for k in np.flatnonzero(same_process & (delta != 1)):
        kind = ("int-" if same_poll[k] else "") + ("poll-skip" if delta[k] > 1 else "nonmonotonic-poll")
        out.add(kind, r.offset[cur[k]], p.value_of(p.rv[cur[k]]),
                f"offset {r.offset[cur[k]]} after offset {r.offset[prev[k]]}: {delta[k]} position(s) on",
                [("poll", prev[k]), ("poll", cur[k])])


def _send_order(log: _Log, p: _Partition, out: _Cases) -> None:
    """nonmonotonic-send (int- within one transaction), per process: each send that did not fail,
    its value at its first offset, against the one sent before it."""
    np = _np()
    s = p.s
    sent = s.rows[~p.s_fail & (p.sv != p.null) & log.present[p.sv]]
    q = sent[np.lexsort((s.start[sent], s.process[sent]))]
    if len(q) <= 1:
        return
    placed = log.first[p.sv[q]]
    idx = log.position(placed)
    cur, prev = q[1:], q[:-1]
    back = (s.process[cur] == s.process[prev]) & (idx[1:] <= idx[:-1])
    same_txn = (p.s_txn[cur] >= 0) & (p.s_txn[cur] == p.s_txn[prev])
    for k in np.flatnonzero(back):
        out.add(("int-" if same_txn[k] else "") + "nonmonotonic-send", placed[k + 1], p.value_of(p.sv[cur[k]]),
                f"sent after a value at offset {placed[k]}, placed at offset {placed[k + 1]}",
                [("send", prev[k]), ("send", cur[k])])


def _encoded(*columns: Any) -> pa.ChunkedArray:
    """The columns one after the other, dictionary-encoded (those read encoded stay so), for `_codes`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = []
    for column in columns:
        encoded = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
        chunks += encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
    return pa.chunked_array(chunks, pa.dictionary(pa.int32(), pa.string()))


# Columns of few distinct values (processes, transactions, outcomes): read dictionary-encoded as
# Parquet stores them, a tenth of the cost of decoding them into strings, and the judge's codes.
FEW_VALUES = ("process", "txn", "status", "outcome", "writer")


def _directory(path: str | None, columns: list[str], schema: pa.Schema) -> pa.Table:
    """One partition's directory of `write_parquet` (its part files), or no rows when it has none."""
    import pyarrow.parquet as pq

    from harness.integrity.layout import has_parts

    if not has_parts(path):
        return schema.empty_table()
    encoded = [c for c in columns if c in FEW_VALUES]
    return pq.read_table(path, columns=columns, schema=schema, partitioning=None, read_dictionary=encoded)


def _schema(columns: tuple[str, ...]) -> pa.Schema:
    """The Arrow types of `columns` of a history's sends or reads, from the schemas it is written with
    (`anomaly_frames.SEND_SCHEMA`, `READ_SCHEMA`); FEW_VALUES dictionary-encoded."""
    import pyarrow as pa

    from harness.integrity.anomaly_frames import READ_SCHEMA, SEND_SCHEMA

    arrow = {"string": pa.string(), "bigint": pa.int64(), "int": pa.int32()}
    types = {name: arrow[kind] for ddl in (SEND_SCHEMA, READ_SCHEMA)
             for name, kind in (field.split() for field in ddl.split(", "))}
    return pa.schema([(c, pa.dictionary(pa.int32(), pa.string()) if c in FEW_VALUES else types[c]) for c in columns])


def prove_writers(batches: Any) -> Any:
    """mapInArrow over (topic, partition, sends, reads) rows: the writers of sends that are not ok
    whose value an ok poll of the same partition read (must-have-committed?'s proof)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in batches:
        for row in batch.to_pylist():
            # Most partitions have no send that is not ok: their status column alone says so.
            status = _directory(row["sends"], ["status"], _schema(("status",))).column("status")
            if not pc.any(pc.fill_null(pc.not_equal(status, OK), False)).as_py():
                continue
            s_cols, r_cols = ["value", "status", "writer"], ["value", "outcome"]
            s = _directory(row["sends"], s_cols, _schema(tuple(s_cols)))
            unsure = s.filter(pc.fill_null(pc.not_equal(s.column("status"), OK), False))
            r = _directory(row["reads"], r_cols, _schema(tuple(r_cols)))
            seen = r.filter(pc.fill_null(pc.equal(r.column("outcome"), OK), False)).column("value")
            hit = unsure.filter(pc.fill_null(pc.is_in(unsure.column("value"), value_set=seen.combine_chunks()), False))
            writers = pc.unique(hit.column("writer").combine_chunks().cast(pa.string()))
            yield pa.RecordBatch.from_pydict({"writer": writers})


def judge_in_place(batches: Any, proven: set[str], read_committed: bool) -> Any:
    """mapInArrow over (topic, partition, sends, reads) rows: `judge` of each partition's directories,
    its sends `committed` as `committed_sends` defines it, with the writers `prove_writers` found."""
    import pyarrow as pa
    import pyarrow.compute as pc

    proven_set = pa.array(sorted(proven), pa.string())
    # The writer column matters only when some writer was proven: most histories have none.
    s_cols = [c for c in SEND_INPUT if c != "committed"] + (["writer"] if proven else [])
    for batch in batches:
        for row in batch.to_pylist():
            s = _directory(row["sends"], s_cols, _schema(tuple(s_cols)))
            r = _directory(row["reads"], list(READ_INPUT), _schema(READ_INPUT))
            status = s.column("status")
            committed = pc.fill_null(pc.equal(status, OK), False)
            if proven:
                proven_here = pc.fill_null(pc.is_in(s.column("writer"), value_set=proven_set), False)
                committed = pc.or_(committed, pc.and_(pc.fill_null(pc.equal(status, "info"), False), proven_here))
            s = s.append_column("committed", committed).select(list(SEND_INPUT))
            key = (pa.scalar(row["topic"], pa.string()), pa.scalar(row["partition"], pa.int32()))
            yield from judge(key, s, r, read_committed).to_batches()
