"""Jepsen's per-partition anomaly classes over one (topic, partition) of a client history, vectorized.

Every class here but must-have-committed? is local to one partition (and, for the poll and send
orders, to one process within it): Jepsen's keys are partitions, and its version order is one
partition's. So Spark gathers each partition's sends and reads once (one cogroup, in
`history_checks.all_cases`) and this module judges them together with numpy and pandas, sorted
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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

OK, FAIL = "ok", "fail"
EXAMPLES = 8  # operations kept per case of the classes that gather many (Jepsen's condense-error)
OP_FIELDS = ("role", "process", "start_ns", "end_ns", "txn", "topic", "partition", "offset", "value")
# What Spark hands each side (history_checks.all_cases); `offset` and `commit_ns` may be null.
SEND_INPUT = ("process", "start_ns", "end_ns", "txn", "offset", "value", "status", "commit_ns", "committed")
READ_INPUT = ("process", "start_ns", "end_ns", "txn", "outcome", "pos", "offset", "value")
CASE_WIRE_SCHEMA = ("kind string, topic string, partition int, offset bigint, value string, detail string, "
                    "ops string")
OPS_SCHEMA = ("array<struct<role: string, process: string, start_ns: bigint, end_ns: bigint, txn: string, "
              "topic: string, partition: int, offset: bigint, value: string>>")


class _Cases:
    """Case rows as columns, ops as JSON (Spark parses them back against OPS_SCHEMA)."""

    def __init__(self, topic: str, partition: int, sends: pd.DataFrame, reads: pd.DataFrame) -> None:
        self.topic, self.partition = topic, partition
        self.frames = {"send": sends, "poll": reads}
        self.cols: dict[str, list[Any]] = {k: [] for k in ("kind", "offset", "value", "detail", "ops")}

    def op(self, role: str, row: int) -> dict[str, Any]:
        df = self.frames[role]
        return {"role": role, "process": _opt(df["process"].iat[row]), "start_ns": _opt_int(df["start_ns"].iat[row]),
                "end_ns": _opt_int(df["end_ns"].iat[row]), "txn": _opt(df["txn"].iat[row]), "topic": self.topic,
                "partition": self.partition, "offset": _opt_int(df["offset"].iat[row]),
                "value": _opt(df["value"].iat[row])}

    def add(self, kind: str, offset: Any, value: Any, detail: str, ops: list[tuple[str, int]]) -> None:
        self.cols["kind"].append(kind)
        self.cols["offset"].append(_opt_int(offset))
        self.cols["value"].append(_opt(value))
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


def _opt(v: Any) -> str | None:
    import pandas as pd

    return None if v is None or pd.isna(v) else str(v)


def _opt_int(v: Any) -> int | None:
    import pandas as pd

    return None if v is None or pd.isna(v) else int(v)


def _frame(table: pa.Table, columns: tuple[str, ...]) -> pd.DataFrame:
    """Arrow to pandas with nullable integers (nanosecond times stay exact; a float would not)."""
    import pandas as pd
    import pyarrow as pa

    mapper = {pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get
    return table.select(list(columns)).to_pandas(types_mapper=mapper).reset_index(drop=True)


def judge(key: tuple[Any, ...], sends_table: pa.Table, reads_table: pa.Table, read_committed: bool = True) -> pa.Table:
    """Every per-partition case of one (topic, partition): the cogroup's function."""
    import numpy as np
    import pandas as pd

    topic, partition = key[0].as_py(), key[1].as_py()
    s = _frame(sends_table, SEND_INPUT)
    r = _frame(reads_table, READ_INPUT)
    out = _Cases(topic, partition, s, r)
    s_rows, r_rows = np.arange(len(s)), np.arange(len(r))
    ok_read = (r["outcome"] == OK).to_numpy(dtype=bool, na_value=False)
    committed = s["committed"].to_numpy(dtype=bool, na_value=False)
    status = s["status"]

    # The log: committed sends with an offset, then every poll's record.
    logged = committed & s["offset"].notna().to_numpy()
    log = pd.DataFrame({
        "offset": pd.concat([s["offset"][logged], r["offset"]], ignore_index=True).astype("int64"),
        "value": pd.concat([s["value"][logged], r["value"]], ignore_index=True),
        "role": np.concatenate([np.full(int(logged.sum()), "send"), np.full(len(r), "poll")]),
        "row": np.concatenate([s_rows[logged], r_rows]),
    })
    offsets = np.unique(log["offset"].to_numpy())  # position of an offset = its index here + 1

    def position(o: np.ndarray) -> np.ndarray:
        return np.searchsorted(offsets, o.astype("int64")) + 1

    def log_ops(rows: pd.DataFrame) -> list[tuple[str, int]]:
        return list(zip(rows["role"].iloc[:EXAMPLES], rows["row"].iloc[:EXAMPLES], strict=True))

    # inconsistent-offsets: an offset held by two values
    held = log[log["value"].notna().to_numpy()]
    distinct = held.drop_duplicates(["offset", "value"])
    torn = distinct["offset"][distinct["offset"].duplicated()].unique()
    if len(torn):
        for o, rows in log[log["offset"].isin(torn).to_numpy()].groupby("offset", sort=True):
            values = sorted(set(rows["value"].dropna()))
            out.add("inconsistent-offsets", o, ",".join(values), "offset holds " + ", ".join(values), log_ops(rows))

    # duplicate: one value at two offsets (spans: the first and last offset each value was seen at)
    spans = log.groupby("value", dropna=False, sort=False)["offset"].agg(["min", "max"])
    twice = spans.index[(spans["min"] != spans["max"]).to_numpy()]
    if len(twice):
        rows_of = log[log["value"].isin(twice).to_numpy(dtype=bool, na_value=False)
                      | (log["value"].isna().to_numpy() & bool(twice.isna().any()))]
        for v, rows in rows_of.groupby("value", dropna=False, sort=True):
            offs = sorted(set(rows["offset"].tolist()))
            out.add("duplicate", offs[0], v, "value at offsets " + ", ".join(map(str, offs)), log_ops(rows))

    ok_r = r[ok_read]
    read_values = set(ok_r["value"].dropna())

    # G1a: an ok poll read a failed writer's value
    failed = s[(status == FAIL).to_numpy(dtype=bool, na_value=False) & s["value"].notna().to_numpy()]
    if len(failed):
        pairs = ok_r.reset_index().merge(failed.reset_index(), on="value", suffixes=("_r", "_s"))
        for _, p in pairs.iterrows():
            wtxn = _opt(p["txn_s"]) or "(no txn)"
            out.add("G1a", p["offset_r"], p["value"], f"read a value of aborted or failed writer {wtxn}",
                    [("send", p["index_s"]), ("poll", p["index_r"])])

    # lost-write, below the bound of the highest first offset of a value an ok poll read
    seen_spans = spans[spans.index.isin(read_values)]
    if len(seen_spans):
        bound = int(seen_spans["min"].max())
        at_bound = ok_r[(ok_r["offset"] == bound).to_numpy(dtype=bool, na_value=False)]
        max_read = [("poll", int(at_bound["start_ns"].astype("int64").idxmin()))] if len(at_bound) else []
        owed = spans[(spans["max"] <= bound) & ~spans.index.isin(read_values) & spans.index.notna()]
        if len(owed):
            writers = s[committed & s["value"].isin(owed.index).to_numpy(dtype=bool, na_value=False)]
            for i, w in writers.iterrows():
                first = int(owed.loc[w["value"], "min"])
                out.add("lost-write", first, w["value"],
                        f"committed at offset {first}, at or below offset {bound} that a poll read; never read",
                        [("send", i), *max_read])

    # unseen: acknowledged (ok), never polled by an ok poll
    acked = (status == OK).to_numpy(dtype=bool, na_value=False)
    never = ~s["value"].isin(read_values).to_numpy(dtype=bool, na_value=False)
    for i in s_rows[acked & never]:
        out.add("unseen", s["offset"].iat[i], s["value"].iat[i], "acknowledged, never polled", [("send", i)])

    # precommitted-read: a transaction read its own write, or a poll ended before the commit began
    in_txn = s["txn"].notna().to_numpy() & ~(status == FAIL).to_numpy(dtype=bool, na_value=False)
    w = s[in_txn & s["value"].notna().to_numpy()]
    if len(w) and len(r):
        j = r[r["value"].notna()].reset_index().merge(w.reset_index(), on="value", suffixes=("_r", "_s"))
        own = (j["txn_r"].notna() & (j["txn_r"] == j["txn_s"])).to_numpy(dtype=bool, na_value=False)
        early = np.zeros(len(j), dtype=bool)
        if read_committed:
            early = (j["commit_ns"].notna() & (j["end_ns_r"] < j["commit_ns"])).to_numpy(dtype=bool, na_value=False)
        for k in np.flatnonzero(own | early):
            p = j.iloc[k]
            detail = (f"transaction {p['txn_s']} polled its own write" if own[k]
                      else f"polled before transaction {p['txn_s']} began to commit")
            out.add("precommitted-read", p["offset_r"], p["value"], detail,
                    [("send", p["index_s"]), ("poll", p["index_r"])])

    # poll order, per process: each ok-read record against the one read before it
    if len(ok_r):
        o = ok_r.assign(idx=position(ok_r["offset"].to_numpy()), row=r_rows[ok_read]).sort_values(
            ["process", "start_ns", "pos"], kind="stable")
        prev = o.groupby("process", sort=False).shift(1)
        has = prev["idx"].notna().to_numpy()
        delta = (o["idx"].to_numpy() - prev["idx"].to_numpy(dtype="float64", na_value=np.nan))
        same = (prev["start_ns"] == o["start_ns"]).to_numpy(dtype=bool, na_value=False)
        for k in np.flatnonzero(has & (delta != 1)):
            kind = ("int-" if same[k] else "") + ("poll-skip" if delta[k] > 1 else "nonmonotonic-poll")
            cur, before = o.iloc[k], prev.iloc[k]
            out.add(kind, cur["offset"], cur["value"],
                    f"offset {int(cur['offset'])} after offset {int(before['offset'])}: {int(delta[k])} position(s) on",
                    [("poll", int(before["row"])), ("poll", int(cur["row"]))])

    # send order, per process: each send that did not fail, its value at its first offset
    known = spans[spans.index.notna()]["min"]
    sent = s[~(status == FAIL).to_numpy(dtype=bool, na_value=False) & s["value"].isin(known.index).to_numpy(
        dtype=bool, na_value=False)]
    if len(sent):
        first = known.reindex(sent["value"]).to_numpy(dtype="int64")
        q = sent.assign(first=first, idx=position(first), row=sent.index.to_numpy()).sort_values(
            ["process", "start_ns"], kind="stable")
        prev = q.groupby("process", sort=False).shift(1)
        has = prev["idx"].notna().to_numpy()
        back = has & (q["idx"].to_numpy() <= prev["idx"].to_numpy(dtype="float64", na_value=np.nan))
        same = (q["txn"].notna() & (q["txn"] == prev["txn"].fillna(""))).to_numpy(dtype=bool, na_value=False)
        for k in np.flatnonzero(back):
            cur, before = q.iloc[k], prev.iloc[k]
            out.add(("int-" if same[k] else "") + "nonmonotonic-send", cur["first"], cur["value"],
                    f"sent after a value at offset {int(before['first'])}, placed at offset {int(cur['first'])}",
                    [("send", int(before["row"])), ("send", int(cur["row"]))])
    return out.table()
