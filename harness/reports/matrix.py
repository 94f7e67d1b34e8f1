"""The compatibility matrix: rows are checks grouped by KIP, columns are targets, cells are verdicts.

Built from each target's `results.json`; written as matrix.json, matrix.md and a self-contained
matrix.html (no script or style from anywhere else, so it works offline and from a CI artifact).
Each target's column shows its depth (how many checks reached a verdict, "judged N/M (P%)") and
its counts; a FAIL or ERROR cell links to the check's text evidence and its decoded wire exchanges.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.areas import AREAS, OTHER
from harness.reports.results import summarize
from harness.verdicts import CELLS

AREA_TITLES = {**{a.marker: a.title for a in AREAS}, OTHER.marker: OTHER.title}
CELL_LABELS = {
    "pass": "pass",
    "fail": "FAIL",
    "error": "ERROR",
    "not-supported": "not supported",
    "target-refused": "target refused the premise",
    "client-gap": "known client gap",
    "skipped": "skipped",
    "absent": "—",
}
# The same, short, for the counts under each target's name.
COUNT_LABELS = {
    "pass": "pass", "fail": "FAIL", "error": "ERROR", "not-supported": "not supported",
    "target-refused": "refused", "client-gap": "gap", "skipped": "skipped",
}
WIRE_CELLS = ("fail", "error")  # the cells that link to the wire evidence too


@dataclass(frozen=True)
class Target:
    name: str  # the column title, e.g. "4.4.0", "kfake", "external:host:9092"
    folder: str  # the target's run folder, relative to the matrix folder


def build(targets: list[tuple[Target, dict[str, Any]]]) -> dict[str, Any]:
    """Merge per-target results into one matrix (pure: no I/O)."""
    rows: dict[str, dict[str, Any]] = {}
    for target, results in targets:
        for check in results.get("checks", []):
            row = rows.setdefault(
                check["nodeid"],
                {"nodeid": check["nodeid"], "area": check["area"], "promise": check["promise"], "cells": {}},
            )
            evidence = f"{target.folder}/{check.get('evidence') or 'results.json'}"
            wire = check.get("wire_evidence")
            row["cells"][target.name] = {
                "cell": check["cell"], "outcome": check["outcome"], "reason": check["reason"], "evidence": evidence,
                "wire": f"{target.folder}/{wire}" if wire and check["cell"] in WIRE_CELLS else None,
            }
    names = [t.name for t, _ in targets]
    for row in rows.values():
        for name in names:
            absent = {"cell": "absent", "outcome": "absent", "reason": "not run", "evidence": None, "wire": None}
            row["cells"].setdefault(name, absent)
    order = list(AREA_TITLES)
    ordered = sorted(rows.values(), key=lambda r: (order.index(r["area"]) if r["area"] in order else 99, r["nodeid"]))
    summary = {name: summarize(r["cells"][name]["cell"] for r in ordered) for name in names}
    return {
        "targets": [{"name": t.name, "folder": t.folder, "environment": res.get("environment", {})}
                    for t, res in targets],
        "rows": ordered,
        "summary": summary,
    }


def depth(summary: dict[str, Any]) -> str:
    """"judged 40/52 (76%)": checks that reached a verdict, of those the target ran. The percentage
    is rounded down, so that 100% means every check was judged."""
    total, judged = summary["total"], summary["judged"]
    return f"judged {judged}/{total} ({judged * 100 // total}%)" if total else "judged 0/0"


def counts(summary: dict[str, Any]) -> str:
    """"pass 38, FAIL 2, ERROR 1, not supported 0, refused 3, gap 0, skipped 8"."""
    return ", ".join(f"{COUNT_LABELS[c]} {summary['counts'].get(c, 0)}" for c in CELLS)


def summary_line(name: str, summary: dict[str, Any]) -> str:
    """One line per target, as `kcts matrix` prints it at the end."""
    absent = f", not run {summary['absent']}" if summary.get("absent") else ""
    return f"{name}: {depth(summary)}: {counts(summary)}{absent}"


def write_all(matrix: dict[str, Any], folder: Path) -> list[Path]:
    paths = [folder / "matrix.json", folder / "matrix.md", folder / "matrix.html"]
    paths[0].write_text(json.dumps(matrix, indent=1))
    paths[1].write_text(to_markdown(matrix))
    paths[2].write_text(to_html(matrix))
    return paths


def to_markdown(matrix: dict[str, Any]) -> str:
    names = [t["name"] for t in matrix["targets"]]
    lines = ["# Compatibility matrix", ""]
    heads = [f"{n}<br>{depth(matrix['summary'][n])}<br>{counts(matrix['summary'][n])}" for n in names]
    lines.append("| check | " + " | ".join(h.replace("|", "\\|") for h in heads) + " |")
    lines.append("|---|" + "---|" * len(names))
    area = None
    for row in matrix["rows"]:
        if row["area"] != area:
            area = row["area"]
            lines.append(f"| **{AREA_TITLES.get(area, area)}** |" + " |" * len(names))
        cells = []
        for name in names:
            c = row["cells"][name]
            label = CELL_LABELS[c["cell"]]
            text = f"[{label}]({c['evidence']})" if c["evidence"] else label
            if c.get("wire"):
                text += f" [wire]({c['wire']})"
            cells.append(text)
        promise = row["promise"].replace("|", "\\|")
        lines.append(f"| {promise} | " + " | ".join(cells) + " |")
    lines += ["", "| target | judged | " + " | ".join(CELL_LABELS[k] for k in CELLS) + " |",
              "|---|---|" + "---|" * len(CELLS)]
    for name in names:
        s = matrix["summary"][name]
        lines.append(f"| {name} | {depth(s).removeprefix('judged ')} | "
                     + " | ".join(str(s["counts"].get(k, 0)) for k in CELLS) + " |")
    return "\n".join(lines) + "\n"


_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top;font-size:14px}
th{background:#f0f0f0;position:sticky;top:0}
tr.area td{background:#e8e8f4;font-weight:bold}
td.cell{text-align:center;white-space:nowrap}
td.pass{background:#d7f5d7} td.fail{background:#f7c4c4;font-weight:bold}
td.error{background:#f9dcc0;font-weight:bold}
td.not-supported{background:#e2e2e2}
td.target-refused{background:#e6e0f0} td.client-gap{background:#fbe7b5} td.skipped{background:#f4f4f4;color:#666}
td.absent{color:#aaa}
.nodeid{color:#777;font-size:12px}
.depth{font-weight:normal;font-size:12px} .counts{font-weight:normal;font-size:11px;color:#555}
a.wire{font-weight:normal;font-size:11px;margin-left:.4em}
.why{font-size:11px;color:#555;white-space:normal;max-width:22em}
a{color:inherit}
"""


def to_html(matrix: dict[str, Any]) -> str:
    esc = html.escape
    names = [t["name"] for t in matrix["targets"]]
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>kcts compatibility matrix</title>",
           f"<style>{_STYLE}</style></head><body><h1>kcts compatibility matrix</h1>"]
    out.append("<table id='summary'><tr><th>target</th><th>environment</th><th>judged</th>"
               + "".join(f"<th>{esc(CELL_LABELS[k])}</th>" for k in CELLS) + "</tr>")
    for t in matrix["targets"]:
        env = ", ".join(f"{k}={v}" for k, v in t["environment"].items())
        s = matrix["summary"][t["name"]]
        out.append(f"<tr><td>{esc(t['name'])}</td><td>{esc(env)}</td>"
                   f"<td>{esc(depth(s).removeprefix('judged '))}</td>"
                   + "".join(f"<td>{s['counts'].get(k, 0)}</td>" for k in CELLS) + "</tr>")
    out.append("</table><p></p><table id='matrix'><tr><th>check (promise)</th>"
               + "".join(f"<th data-target='{esc(n)}'>{esc(n)}<div class='depth'>{esc(depth(matrix['summary'][n]))}"
                         f"</div><div class='counts'>{esc(counts(matrix['summary'][n]))}</div></th>" for n in names)
               + "</tr>")
    area = None
    for row in matrix["rows"]:
        if row["area"] != area:
            area = row["area"]
            out.append(f"<tr class='area'><td colspan='{len(names) + 1}'>{esc(AREA_TITLES.get(area, area))}</td></tr>")
        out.append(f"<tr data-nodeid='{esc(row['nodeid'])}'><td>{esc(row['promise'])}"
                   f"<div class='nodeid'>{esc(row['nodeid'])}</div></td>")
        for name in names:
            c = row["cells"][name]
            label = esc(CELL_LABELS[c["cell"]])
            body = f"<a href='{esc(c['evidence'])}'>{label}</a>" if c["evidence"] else label
            if c.get("wire"):
                body += f"<a class='wire' href='{esc(c['wire'])}'>wire</a>"
            if c["cell"] not in ("pass", "absent") and c["reason"]:
                reason = c["reason"] if len(c["reason"]) <= 90 else c["reason"][:87] + "..."
                body += f"<div class='why'>{esc(reason)}</div>"
            out.append(f"<td class='cell {c['cell']}' data-target='{esc(name)}' data-cell='{c['cell']}' "
                       f"title='{esc(c['reason'])}'>{body}</td>")
        out.append("</tr>")
    out.append("</table></body></html>")
    return "\n".join(out)
