"""The checker's output: report.json and anomalies.parquet for machines, summary.txt for people.

Everything goes to `<run dir>/integrity/<name>/` and is attached to the Allure result of the test.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

from harness import attach
from harness.integrity.model import Anomaly, Findings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

COLUMNS = [a for a in Anomaly]


def verdict(findings: Findings) -> str:
    if findings.ok:
        return "PASS"
    return "FAIL: " + ", ".join(f"{n} {k.value}" for k, n in findings.failures.items())


def to_json(findings: Findings, meta: dict[str, object]) -> dict[str, object]:
    return {
        "verdict": verdict(findings),
        "ok": findings.ok,
        "counts": {k.value: findings.count(k) for k in Anomaly},
        "failures": {k.value: n for k, n in findings.failures.items()},
        "totals": [
            {
                "topic": t.topic, "role": t.role, "records": t.records, "distinct_valid": t.distinct_valid,
                "expected": t.expected, "aborted_in_log": t.aborted_in_log,
                "uncommitted_records": t.uncommitted_records, "uncommitted_capped": t.uncommitted_capped,
                "anomalies": {k.value: n for k, n in t.anomalies.items()},
            }
            for t in findings.totals
        ],
        "truncation_windows": [
            {"topic": w.topic, "partition": w.partition, "start": w.start, "end": w.end} for w in findings.windows
        ],
        "samples": {k.value: [dataclasses.asdict(r) for r in rows] for k, rows in findings.samples.items()},
        "timings": findings.timings,
        "meta": meta,
    }


def summary(findings: Findings, meta: dict[str, object]) -> str:
    heads = [
        "topic", "role", "read", "distinct", "expected", "uncommitted", "aborted-in-log", *[a.value for a in COLUMNS]
    ]
    rows = [
        [t.topic, t.role, str(t.records), str(t.distinct_valid), str(t.expected),
         "-" if t.uncommitted_records is None else f"{t.uncommitted_records}{'*' if t.uncommitted_capped else ''}",
         "-" if t.aborted_in_log is None else str(t.aborted_in_log), *[str(t.anomalies.get(a, 0)) for a in COLUMNS]]
        for t in findings.totals
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    table = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in [heads, *rows])
    lines = [
        f"Record integrity: {verdict(findings)}",
        "",
        *[f"{k}: {v}" for k, v in meta.items()],
        "",
        table,
        "",
        "uncommitted / aborted-in-log: read under read_uncommitted (* = a prefix of each partition only)",
        "Truncation windows reported by the nemesis: "
        + (", ".join(str(w) for w in findings.windows) or "none"),
    ]
    for kind in Anomaly:
        if findings.count(kind):
            lines += ["", findings.evidence(kind, 10)]
    lines += ["", "Timings (s): " + ", ".join(f"{k}={v}" for k, v in findings.timings.items())]
    return "\n".join(lines) + "\n"


def write(findings: Findings, anomalies: DataFrame, out_dir: Path, meta: dict[str, object]) -> dict[str, Path]:
    """Write the three files and attach them to Allure; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    report = out_dir / "report.json"
    report.write_text(json.dumps(to_json(findings, meta), indent=2, default=str))
    text = out_dir / "summary.txt"
    text.write_text(summary(findings, meta))
    parquet_dir = out_dir / "anomalies.parquet"
    anomalies.coalesce(1).write.mode("overwrite").parquet(str(parquet_dir))
    paths = {"json": report, "summary": text, "parquet": parquet_dir}
    _attach(paths)
    return paths


def _attach(paths: dict[str, Path]) -> None:
    attach.file(paths["summary"], "integrity summary (lost, duplicated, aborted-visible)")
    attach.file(paths["json"], "integrity findings (JSON)", "json")
    for part in sorted(paths["parquet"].glob("*.parquet")):
        attach.file(part, "integrity anomalies (parquet)", "parquet")
