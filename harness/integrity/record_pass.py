"""The record checks that one Kafka partition decides alone, as one pass of numpy over its records.

`checker.check` maps `record_pass` over the records as read (Spark's mapInArrow over (topic,
partition, offset, raw); each task holds one or more partitions, or a part of one), or
`record_pass_in_place` over the part files (or directories) of a Parquet layout. A task parses
the values with Arrow (as `read.parse` does in SQL), orders its rows by (topic, partition, offset)
and returns rows of PASS_SCHEMA:
- anomaly rows (`kind` an `Anomaly`) it can name alone: checksum_mismatch, aborted_visible,
  unexpected, and each order_violation between two valid records of one key in its rows;
- a few summary rows (`kind` from `Summary`) that the driver merges across tasks: per topic the
  records read and the valid ids held, as a bitmap over the expectation's ids (dense from 0); per
  partition the offsets the task held, and each key's first and last valid record there, to compare
  a key across tasks where Spark split one partition;
- `COPY` rows: the valid records whose id the task holds twice, or that the driver asks for by id
  (`PassPlan.wanted`, a second pass): the evidence of duplicates and the source of lost records.

Definitions are `checker`'s (its module docstring); a record's transaction outcome comes from the
expectation's id ranges by binary search, so the cost per record does not grow with the ranges.
Nothing here imports Spark: unit tests call `record_pass` on Arrow batches.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from harness.integrity.model import Anomaly
from harness.workload.write_log import IdRange, TxnOutcome

if TYPE_CHECKING:
    import pyarrow as pa

PASS_COLUMNS = ("kind", "topic", "partition", "offset", "id", "key", "seq", "detail", "last_offset", "last_seq", "n",
                "bits")
PASS_SCHEMA = ("kind string, topic string, partition int, offset bigint, id bigint, key string, seq bigint, "
               "detail string, last_offset bigint, last_seq bigint, n bigint, bits binary")
INPUT_COLUMNS = ("topic", "partition", "offset", "raw")  # as `read.read_values` gives them
OUTCOMES = (TxnOutcome.COMMITTED, TxnOutcome.ABORTED, TxnOutcome.UNKNOWN)  # an outcome's code is its index


class Summary(StrEnum):
    """The rows a task gives the driver besides anomalies."""

    COUNT = "_count"  # topic: n = records read
    SEEN = "_seen"  # topic: bits = valid ids held, n = how many
    SPAN = "_span"  # topic, partition: offset .. last_offset held
    EDGE = "_edge"  # topic, partition, key: first valid (offset, id, seq), last valid (last_offset, last_seq)
    COPY = "_copy"  # a valid record, kept as evidence for the id it carries


@dataclass(frozen=True)
class PassPlan:
    """What each task is told: the expectation's id ranges, sorted, and the ids asked for by topic."""

    firsts: tuple[int, ...]
    ends: tuple[int, ...]
    outcomes: tuple[int, ...]  # index into OUTCOMES
    domain: int  # ids of valid records lie in [0, domain)
    wanted: Mapping[str, bytes] = field(default_factory=dict)  # topic -> packed bits of ids to keep as COPY

    @staticmethod
    def of(ranges: Sequence[IdRange], wanted: Mapping[str, bytes] | None = None) -> PassPlan:
        live = sorted((r for r in ranges if r.end > r.first), key=lambda r: r.first)
        return PassPlan(tuple(r.first for r in live), tuple(r.end for r in live),
                        tuple(OUTCOMES.index(r.outcome) for r in live), max((r.end for r in live), default=0),
                        dict(wanted or {}))


def outcome_codes(ids: Any, known: Any, plan: PassPlan) -> Any:
    """The OUTCOMES index of each id's range, -1 where no range holds it (or the id is unknown)."""
    import numpy as np

    firsts = np.asarray(plan.firsts, dtype=np.int64)
    ends = np.asarray(plan.ends, dtype=np.int64)
    codes = np.asarray(plan.outcomes, dtype=np.int8)
    if not len(firsts):
        return np.full(len(ids), -1, dtype=np.int8)
    at = np.searchsorted(firsts, ids, side="right") - 1
    held = known & (at >= 0) & (ids < ends[np.maximum(at, 0)])
    return np.where(held, codes[np.maximum(at, 0)], -1).astype(np.int8)


def packed(mask: Any) -> bytes:
    """A bool array as bits, for the wire (`unbits` reverses it)."""
    import numpy as np

    return np.packbits(mask).tobytes()


def unbits(packed: bytes, domain: int) -> Any:
    import numpy as np

    return np.unpackbits(np.frombuffer(packed, dtype=np.uint8), count=domain).astype(bool)


@dataclass(frozen=True)
class _Fields:
    """One topic's records, parsed, in (partition, offset) order: what a row of PASS_SCHEMA shows."""

    offset: Any
    id: Any
    has_id: Any
    key: pa.Array
    seq: Any
    has_seq: Any


def _known(values: Any, known: Any) -> list[int | None]:
    return [v if ok else None for v, ok in zip(values.tolist(), known.tolist(), strict=True)]


class _Rows:
    """PASS_SCHEMA rows, gathered column by column."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {c: [] for c in PASS_COLUMNS}

    def add(self, kind: str, topic: str, partition: int | None = None, offset: Any = None, id: Any = None,
            key: Any = None, seq: Any = None, detail: str | None = None, last_offset: Any = None,
            last_seq: Any = None, n: Any = None, bits: bytes | None = None) -> None:
        for c, v in zip(PASS_COLUMNS, (kind, topic, partition, offset, id, key, seq, detail, last_offset, last_seq,
                                       n, bits), strict=True):
            self.cols[c].append(v.item() if hasattr(v, "item") else v)

    def extend(self, kind: str, topic: str, partition: int | Any, f: _Fields, rows: Any,
               details: Iterable[str | None], last_offset: Any = None, last_seq: Any = None) -> None:
        """One row per index in `rows` of one topic's records `f`; `partition` one for all, or per row."""
        if not len(rows):
            return
        import pyarrow as pa

        m = len(rows)
        self.cols["kind"] += [kind] * m
        self.cols["topic"] += [topic] * m
        self.cols["partition"] += [partition] * m if isinstance(partition, int) else partition.tolist()
        self.cols["offset"] += f.offset[rows].tolist()
        self.cols["id"] += _known(f.id[rows], f.has_id[rows])
        self.cols["key"] += f.key.take(pa.array(rows)).to_pylist()
        self.cols["seq"] += _known(f.seq[rows], f.has_seq[rows])
        self.cols["detail"] += list(details)
        self.cols["last_offset"] += [None] * m if last_offset is None else [int(x) for x in last_offset]
        self.cols["last_seq"] += [None] * m if last_seq is None else [int(x) for x in last_seq]
        self.cols["n"] += [None] * m
        self.cols["bits"] += [None] * m

    def batch(self) -> pa.RecordBatch:
        import pyarrow as pa

        types = {"partition": pa.int32(), "offset": pa.int64(), "id": pa.int64(), "seq": pa.int64(),
                 "last_offset": pa.int64(), "last_seq": pa.int64(), "n": pa.int64(), "bits": pa.binary()}
        return pa.RecordBatch.from_arrays([pa.array(self.cols[c], types.get(c, pa.string())) for c in PASS_COLUMNS],
                                          names=list(PASS_COLUMNS))


def record_pass(batches: Iterator[pa.RecordBatch], plan: PassPlan) -> Iterator[pa.RecordBatch]:
    """mapInArrow over INPUT_COLUMNS (see the module docstring)."""
    import pyarrow as pa

    held = [b for b in batches if b.num_rows]
    if not held:
        return
    table = pa.Table.from_batches(held).combine_chunks()
    out = _Rows()
    for topic, t in _by_topic(table):
        _judge_topic(topic, t, plan, out)
    yield out.batch()


def record_pass_in_place(batches: Iterator[pa.RecordBatch], plan: PassPlan) -> Iterator[pa.RecordBatch]:
    """mapInArrow over (topic, partition, path) rows, a part file or a directory each of a Parquet
    layout of (offset, raw) partitioned by topic and partition (`checker.InPlace`): each read with
    Arrow and judged alone, so no record crosses from the JVM."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from harness.integrity.layout import has_parts

    for batch in batches:
        for row in batch.to_pylist():
            if not has_parts(row["path"]):
                continue
            t = pq.read_table(row["path"], columns=["offset", "raw"], partitioning=None)
            t = t.append_column("partition", pa.repeat(pa.scalar(row["partition"], pa.int32()), t.num_rows))
            out = _Rows()
            _judge_topic(row["topic"], t.sort_by("offset"), plan, out)
            yield out.batch()


def _by_topic(table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """Each topic's rows, ordered by (partition, offset)."""
    import pyarrow.compute as pc

    for topic in pc.unique(table.column("topic")).to_pylist():
        t = table.filter(pc.equal(table.column("topic"), topic))
        yield topic, t.sort_by([("partition", "ascending"), ("offset", "ascending")])


def string_buffers(values: pa.Array) -> tuple[Any, pa.Buffer]:
    """A string or binary array's value offsets (numpy, this slice's n + 1 of them) and data buffer
    (empty where every value is null or empty, and Arrow keeps none)."""
    import numpy as np
    import pyarrow as pa

    n = len(values)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset:values.offset + n + 1]
    return offsets, values.buffers()[2] or pa.py_buffer(b"")


def split_fields(raw: pa.Array) -> dict[str, pa.Array]:
    """Each of `pipeline_record.FIELDS` of every value as a string array: split at the first six separators,
    null where a value has fewer fields (as Spark's split and get)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from harness.workload import pipeline_record

    n, width = len(raw), len(pipeline_record.FIELDS)
    parts = pc.split_pattern(raw, pipeline_record.SEP, max_splits=width - 1)
    count = pc.fill_null(pc.list_value_length(parts), 0)
    short = pc.less(count, width)
    if pc.any(short).as_py():
        # A value with fewer fields is padded so every list has them all; the padding reads as null.
        padded = pc.if_else(short, pc.binary_join_element_wise(raw, pipeline_record.SEP * (width - 1), ""), raw)
        parts = pc.split_pattern(padded, pipeline_record.SEP, max_splits=width - 1)
    field = {name: pc.list_element(parts, i) if n else pa.array([], pa.string())
             for i, name in enumerate(pipeline_record.FIELDS)}
    if pc.any(short).as_py():
        field = {name: pc.if_else(pc.greater(count, i), col, pa.scalar(None, pa.string()))
                 for i, (name, col) in enumerate(field.items())}
    return field


def fields_at_separators(raw: pa.Array) -> dict[str, pa.Array] | None:
    """`split_fields`, when every value has exactly six separators (every record the pipeline
    writes: its payload has none), found with numpy over the values' bytes: a third of the cost of
    Arrow's split. Each field is then a zero-copy view of the bytes, as the even elements of a string
    array whose odd elements are the separators between them. None for any other input."""
    import numpy as np
    import pyarrow as pa

    from harness.workload import pipeline_record

    n, seps = len(raw), len(pipeline_record.FIELDS) - 1
    if not n or raw.null_count or raw.type != pa.string():
        return None
    offsets, data = string_buffers(raw)
    lo, hi = int(offsets[0]), int(offsets[-1])
    sep = pipeline_record.SEP_BYTES[0]
    at = np.flatnonzero(np.frombuffer(data, dtype=np.uint8)[lo:hi] == sep).astype(np.int32) + lo
    if len(at) != seps * n:
        return None
    at = at.reshape(n, seps)
    starts, ends = offsets[:-1], offsets[1:]
    # Positions are sorted: if each value's group of six lies inside it, each value has exactly six.
    if not ((at[:, 0] >= starts).all() and (at[:, -1] < ends).all()):
        return None
    firsts = [starts, *(at[:, j] + 1 for j in range(seps))]
    lasts = [*(at[:, j] for j in range(seps)), ends]
    even = pa.array(np.arange(0, 2 * n, 2, dtype=np.int64))
    fields = {}
    for name, first, last in zip(pipeline_record.FIELDS, firsts, lasts, strict=True):
        bounds = np.empty(2 * n + 1, dtype=np.int32)
        bounds[0:2 * n:2], bounds[1:2 * n:2], bounds[2 * n] = first, last, hi
        fields[name] = pa.StringArray.from_buffers(2 * n, pa.py_buffer(bounds), data).take(even)
    return fields


def parse_values(raw: pa.Array) -> dict[str, Any]:
    """`read.parse` over Arrow: the fields of each value (`pipeline_record.FIELDS`, split at the first six
    separators), the integers as numpy arrays with a mask of those that are integers, and `parsed`
    (id, seq and crc integers, a payload, flag A or C); `actual_crc` is crc32 of the payload bytes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    field = fields_at_separators(raw) or split_fields(raw)
    out: dict[str, Any] = {}
    for name in ("id", "seq", "crc"):
        col = field[name]
        try:
            ints = pc.cast(col, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            # Some field is not an integer: as Spark's try_cast, surrounding blanks are allowed and
            # anything else (or out of range) is null.
            col = pc.replace_substring_regex(pc.utf8_trim_whitespace(col), r"^\+", "")
            whole = pc.fill_null(pc.match_substring_regex(col, r"^-?[0-9]{1,18}$"), False)
            ints = pc.cast(pc.if_else(whole, col, pa.scalar(None, pa.string())), pa.int64())
        out[name] = pc.fill_null(ints, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        out["has_" + name] = pc.is_valid(ints).to_numpy(zero_copy_only=False)
    payload = field["payload"]
    has_payload = pc.is_valid(payload).to_numpy(zero_copy_only=False)
    flag = field["flag"]
    out["flag_a"] = pc.fill_null(pc.equal(flag, "A"), False).to_numpy(zero_copy_only=False)
    flag_c = pc.fill_null(pc.equal(flag, "C"), False).to_numpy(zero_copy_only=False)
    out["parsed"] = out["has_id"] & out["has_seq"] & out["has_crc"] & has_payload & (out["flag_a"] | flag_c)
    out["actual_crc"] = crc32_rows(pc.cast(payload, pa.binary()))
    out["key"] = field["key"]
    out["stage"] = field["stage"]
    return out


@functools.cache
def _crc_tables(width: int) -> tuple[int, Any]:
    """CRC-32 is affine over GF(2): crc(x) = crc(zeros) ^ the XOR over positions j of T_j[x_j],
    where T_j[b] = crc(b at j, zeros elsewhere) ^ crc(zeros). Here the zeros' CRC and, per pair of
    positions, a table of 65536 (the pair read as one little-endian uint16)."""
    import zlib

    import numpy as np

    zero = bytes(width)
    base = zlib.crc32(zero)
    single = np.array([[zlib.crc32(zero[:j] + bytes([b]) + zero[j + 1:]) ^ base for b in range(256)]
                       for j in range(width)], dtype=np.uint32)
    pairs = np.stack([(single[2 * k][None, :] ^ single[2 * k + 1][:, None]).ravel() for k in range(width // 2)])
    return base, pairs


def crc32_rows(values: pa.Array) -> Any:
    """zlib.crc32 of each value's bytes (0 for null), as int64.

    The generator's payloads all have one (even) length: then the bytes are a (rows x length/2)
    matrix of uint16 and the CRC is twelve table lookups XORed per row (`_crc_tables`), instead of a
    million calls. Values of mixed lengths (damaged ones) take zlib's loop."""
    import zlib

    import numpy as np
    import pyarrow.compute as pc

    n = len(values)
    lengths = pc.fill_null(pc.binary_length(values), -1).to_numpy(zero_copy_only=False)
    width = int(lengths[0]) if n else 0
    if n and width > 0 and width % 2 == 0 and values.null_count == 0 and (lengths == width).all():
        offsets, buffer = string_buffers(values)
        data = np.frombuffer(buffer, dtype=np.uint8)[offsets[0]:offsets[-1]]
        words = np.ascontiguousarray(data).view("<u2").reshape(n, width // 2)
        base, pairs = _crc_tables(width)
        crc = np.full(n, base, dtype=np.uint32)
        for k in range(width // 2):
            crc ^= pairs[k][words[:, k]]
        return crc.astype(np.int64)
    return np.fromiter((0 if b is None else zlib.crc32(b) for b in values.to_pylist()), dtype=np.int64, count=n)


def _judge_topic(topic: str, t: pa.Table, plan: PassPlan, out: _Rows) -> None:
    import numpy as np
    import pyarrow.compute as pc

    n = t.num_rows
    partition = pc.fill_null(t.column("partition"), -1).to_numpy().astype(np.int64)
    offset = pc.fill_null(t.column("offset"), -1).to_numpy().astype(np.int64)
    raw = t.column("raw").combine_chunks()
    f = parse_values(raw)
    ids, seq, crc, actual, parsed, flag_a = f["id"], f["seq"], f["crc"], f["actual_crc"], f["parsed"], f["flag_a"]
    outcome = outcome_codes(ids, f["has_id"], plan)
    intact = parsed & (crc == actual)
    aborted = intact & (flag_a | (outcome == OUTCOMES.index(TxnOutcome.ABORTED)))
    valid = intact & ~aborted & ((outcome == OUTCOMES.index(TxnOutcome.COMMITTED))
                                 | (outcome == OUTCOMES.index(TxnOutcome.UNKNOWN)))
    fields = _Fields(offset, ids, f["has_id"], f["key"], seq, f["has_seq"])
    out.add(Summary.COUNT, topic, n=n)

    stage = f["stage"]
    for p, lo, hi in _partitions(partition):
        part = int(p)
        out.add(Summary.SPAN, topic, part, offset=offset[lo], last_offset=offset[hi - 1])
        rows = np.arange(lo, hi)
        bad = rows[~intact[lo:hi]]
        out.extend(Anomaly.CHECKSUM_MISMATCH, topic, part, fields, bad, (
            f"unparseable value: {(raw[int(i)].as_py() or '')[:80]}" if not parsed[i]
            else f"crc field {crc[i]} but crc32(payload) = {actual[i]}" for i in bad))
        gone = rows[aborted[lo:hi]]
        out.extend(Anomaly.ABORTED_VISIBLE, topic, part, fields, gone, (
            f"written by {stage[int(i)].as_py()} into a transaction it aborted" if flag_a[i]
            else "id of a generator transaction that was aborted" for i in gone))
        stray = rows[intact[lo:hi] & ~aborted[lo:hi] & ~valid[lo:hi]]
        out.extend(Anomaly.UNEXPECTED, topic, part, fields, stray, (
            f"id never written by the generator; stage {stage[int(i)].as_py()}" for i in stray))
        _along_keys(topic, part, fields, rows[valid[lo:hi]], out)

    kept = np.flatnonzero(valid)
    vids = ids[kept]
    seen = np.zeros(plan.domain, dtype=bool)
    seen[vids] = True
    distinct = int(seen.sum())
    out.add(Summary.SEEN, topic, n=distinct, bits=packed(seen))
    keep = np.zeros(len(kept), dtype=bool)
    if distinct < len(vids):
        order = np.sort(vids)
        keep |= np.isin(vids, order[1:][order[1:] == order[:-1]])
    if topic in plan.wanted:
        keep |= unbits(plan.wanted[topic], plan.domain)[vids]
    copies = kept[keep]
    out.extend(Summary.COPY, topic, partition[copies], fields, copies, (None for _ in copies))


def _partitions(partition: Any) -> Iterator[tuple[int, int, int]]:
    """(partition, first row, end row) of each run of one partition in rows ordered by partition."""
    import numpy as np

    starts = np.flatnonzero(np.r_[True, partition[1:] != partition[:-1]])
    ends = np.r_[starts[1:], len(partition)]
    return zip(partition[starts].tolist(), starts.tolist(), ends.tolist(), strict=True)


def _along_keys(topic: str, partition: int, f: _Fields, rows: Any, out: _Rows) -> None:
    """order_violation between consecutive valid records of one key (rows in offset order), and
    each key's first and last valid record (EDGE) for the driver to compare across tasks."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(rows):
        return
    encoded = pc.dictionary_encode(f.key.take(pa.array(rows)))
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    order = np.argsort(codes, kind="stable")
    along, k = rows[order], codes[order]
    seq, offset = f.seq, f.offset
    same = k[1:] == k[:-1]
    back = same & (seq[along[1:]] < seq[along[:-1]])
    cur, prev = along[1:][back], along[:-1][back]
    out.extend(Anomaly.ORDER_VIOLATION, topic, partition, f, cur, (
        f"seq {seq[c]} after seq {seq[p]} at offset {offset[p]}" for c, p in zip(cur, prev, strict=True)),
        last_offset=offset[prev], last_seq=seq[prev])
    first = np.flatnonzero(np.r_[True, ~same])
    last = np.r_[first[1:] - 1, len(along) - 1]
    out.extend(Summary.EDGE, topic, partition, f, along[first], (None for _ in first),
               last_offset=offset[along[last]], last_seq=seq[along[last]])
