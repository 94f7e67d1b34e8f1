"""The compatibility matrix: rows are checks grouped by KIP, columns are targets, cells are verdicts.

Built from each target's `results.json`; written as matrix.json, matrix.md and a self-contained
matrix.html (no script or style from anywhere else, so it works offline and from a CI artifact).
Each target's column shows its depth (how many checks reached a verdict, "judged N/M (P%)") and
its counts; a FAIL or ERROR cell links to the check's text evidence and its decoded wire exchanges; a
check that judged client histories shows, per history, the count of each anomaly class it found,
linked to the history's timeline. The FAILs of each column are also counted as defects (FAILs of one
cause, harness.reporting.defects): "2 defects (3 FAILs)" under its name, its FAIL cells marked with their
defect's number, and a list of the defects with the documents their promises come from.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.areas import AREAS, OTHER
from harness.reporting import coverage, defects
from harness.reporting.fingerprint import short as fingerprint_line
from harness.reporting.results import summarize
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


def build(
    targets: list[tuple[Target, dict[str, Any]]], soaks: Sequence[tuple[str, dict[str, Any]]] = (),
) -> dict[str, Any]:
    """Merge per-target results into one matrix (pure: no I/O); each soak (title, its soak.json) adds
    a column of pass k/n per check."""
    rows: dict[str, dict[str, Any]] = {}
    found = {target.name: defects.of_results(results) for target, results in targets}
    for target, results in targets:
        stack = results.get("environment", {}).get("client_stack")
        keys = defects.keys_of(found[target.name])
        for check in results.get("checks", []):
            nodeid = client_row(check["nodeid"], stack)
            row = rows.setdefault(
                nodeid,
                {"nodeid": nodeid, "area": check["area"], "promise": check["promise"],
                 "variant": variant(nodeid), "cells": {}},
            )
            evidence = f"{target.folder}/{check.get('evidence') or 'results.json'}"
            wire = check.get("wire_evidence")
            row["cells"][target.name] = {
                "cell": check["cell"], "outcome": check["outcome"], "reason": check["reason"], "evidence": evidence,
                "wire": f"{target.folder}/{wire}" if wire and check["cell"] in WIRE_CELLS else None,
                "history": [{"name": h["name"], "counts": h["counts"],
                             "report": f"{target.folder}/{h['report']}",
                             "plot": f"{target.folder}/{h['plot']}" if h.get("plot") else None}
                            for h in check.get("history") or ()],
                "defect": check.get("defect") or keys.get(check["nodeid"]),
            }
    names = [t.name for t, _ in targets]
    absent = {"cell": "absent", "outcome": "absent", "reason": "not run", "evidence": None, "wire": None}
    for row in rows.values():
        for name in names:
            row["cells"].setdefault(name, absent)
    order = list(AREA_TITLES)
    ordered = sorted(rows.values(), key=lambda r: (order.index(r["area"]) if r["area"] in order else 99, r["nodeid"]))
    summary = {name: summarize(r["cells"][name]["cell"] for r in ordered) for name in names}
    promises = coverage.build({t.name: res for t, res in targets})
    for _, soak in soaks:  # a check only the soak ran still gets its row
        for c in soak.get("checks", []):
            if c["nodeid"] not in rows:
                parts = c["nodeid"].split("/")
                rows[c["nodeid"]] = {"nodeid": c["nodeid"], "area": parts[1] if parts[0] == "suites" else "other",
                                     "promise": c["nodeid"].rsplit("::", 1)[-1], "variant": variant(c["nodeid"]),
                                     "cells": dict.fromkeys(names, absent)}
    ordered = sorted(rows.values(), key=lambda r: (order.index(r["area"]) if r["area"] in order else 99, r["nodeid"]))
    for title, soak in soaks:
        by_id = {c["nodeid"]: c for c in soak.get("checks", [])}
        for row in ordered:
            c = by_id.get(row["nodeid"])
            row.setdefault("soak", {})[title] = (
                {"pass": c["pass"], "n": c["n"], "flipped": c["flipped"], "cells": c["cells"]} if c else None)
    return {
        "clients": client_summary(targets),
        "soaks": [{"name": title, "repeat": soak.get("repeat"), "summary": soak.get("summary", {})}
                  for title, soak in soaks],
        "targets": [{"name": t.name, "folder": t.folder, "environment": res.get("environment", {}),
                     "fingerprint": res.get("fingerprint")} for t, res in targets],
        "rows": ordered,
        "summary": summary,
        "defects": {name: [d.to_json() for d in found[name]] for name in names},
        "coverage": {"summary": coverage.summary(promises), "promises": [c.to_json() for c in promises]},
    }


def soak_cell(k: dict[str, Any] | None) -> str:
    """"pass 10/10", "not supported 10/10", "pass 9/10, flipped" (k/n: runs that gave that verdict, of
    the runs that ran the check), or "-" where the soak did not run it."""
    if k is None or not k["n"]:
        return "-"
    if k["flipped"]:
        return f"pass {k['pass']}/{k['n']}, flipped"
    (cell,) = k["cells"]
    return f"{CELL_LABELS.get(cell, cell)} {k['n']}/{k['n']}"


def client_row(nodeid: str, stack: str | None) -> str:
    """In a client-only column (one stack judged), the row of a check parametrized by client stands for
    every stack: `test_x[franz-go-earliest]` is `test_x[client-earliest]`, so each client version's
    verdict of one check sits in one row."""
    if not stack:
        return nodeid
    match = re.search(r"\[(.+)\]$", nodeid)
    if match is None:
        return nodeid
    words = match[1].split("-")
    size = len(stack.split("-"))  # franz-go is two words of the id
    for i in range(len(words) - size + 1):
        if "-".join(words[i:i + size]) == stack:
            words[i:i + size] = ["client"]
            break
    inner = "-".join(words)
    return nodeid[: match.start()] + f"[{inner}]"


# What a client keeps of a promise, from its checks' cells, first found first: a failure of any check
# of it; else a pass, since a check that could not run (the client lacks another API its driver
# calls, or the check runs the pinned release only) does not unkeep what another check saw kept.
PROMISE_ORDER = ("fail", "error", "client-gap", "pass", "not-supported", "target-refused", "skipped")
PROMISE_LABELS = {"pass": "kept", "fail": "BROKEN", "error": "ERROR", "client-gap": "known gap",
                  "not-supported": "not supported", "target-refused": "refused", "skipped": "not judged"}


def client_summary(targets: Sequence[tuple[Target, dict[str, Any]]]) -> dict[str, Any]:
    """For each client-only column, each promise its checks judge and what the client kept of it:
    BROKEN, ERROR or known gap when a check of it gave that; else "kept" when a check of it passed;
    else not supported, refused or not judged."""
    columns: dict[str, dict[str, str]] = {}
    texts: dict[str, str] = {}
    for target, results in targets:
        if not results.get("environment", {}).get("client_stack"):
            continue
        cells: dict[str, list[str]] = {}
        for check in results.get("checks", []):
            for promise in check.get("promises") or []:
                cells.setdefault(promise, []).append(check["cell"])
                texts.setdefault(promise, check["promise"])
        columns[target.name] = {p: min(c, key=lambda x: PROMISE_ORDER.index(x) if x in PROMISE_ORDER else 0)
                                for p, c in cells.items()}
    promises = sorted({p for c in columns.values() for p in c})
    return {"columns": list(columns), "promises": [
        {"id": p, "text": texts[p], "clients": {name: PROMISE_LABELS.get(columns[name][p], columns[name][p])
                                                if p in columns[name] else "-" for name in columns}}
        for p in promises]}


def client_areas(clients: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The promises of the client table by area (the first part of the id: kip320, kip1094, eos)."""
    areas: dict[str, list[dict[str, Any]]] = {}
    for p in clients["promises"]:
        areas.setdefault(p["id"].split(".", 1)[0], []).append(p)
    return areas


def _short(promise_id: str) -> str:
    """A promise's name in a column head: its id without the area and the party (`kip320.consumer.x`: x)."""
    parts = promise_id.split(".")
    return parts[-1] if len(parts) > 1 else promise_id


def variant(nodeid: str) -> str | None:
    """The parametrized variant a row is ("leader-moves" of `test_x[leader-moves]`), or None."""
    match = re.search(r"\[(.+)\]$", nodeid)
    return match[1] if match else None


def environment_line(environment: dict[str, str]) -> str:
    """The few facts a reader compares first: the target kind, broker and client versions (the broker
    count is in the fingerprint's line beside it)."""
    keys = ("target_kind", "broker_version", "client_stack", "java_clients", "librdkafka", "librdkafka_driver",
            "go_client")
    labels = {"target_kind": "", "broker_version": "broker ", "java_clients": "Java clients ",
              "librdkafka": "librdkafka ", "client_stack": "judging ", "librdkafka_driver": "librdkafka driver on ",
              "go_client": ""}
    parts = [f"{labels[k]}{environment[k]}" for k in keys if environment.get(k)]
    return " · ".join(parts) or ("; ".join(f"{k}={v}" for k, v in environment.items())[:80] or "not recorded")


def depth(summary: dict[str, Any]) -> str:
    """"judged 40/52 (76%)": checks that reached a verdict, of those the target ran. The percentage
    is rounded down, so that 100% means every check was judged."""
    total, judged = summary["total"], summary["judged"]
    return f"judged {judged}/{total} ({judged * 100 // total}%)" if total else "judged 0/0"


def counts(summary: dict[str, Any]) -> str:
    """"pass 38, FAIL 2, ERROR 1, not supported 0, refused 3, gap 0, skipped 8"."""
    return ", ".join(f"{COUNT_LABELS[c]} {summary['counts'].get(c, 0)}" for c in CELLS)


def defects_line(found: list[dict[str, Any]] | None) -> str:
    """"2 defects (3 FAILs)": what a column's FAILs come to (its list of `defects` in matrix.json);
    "" for a matrix.json from before defects."""
    if found is None:
        return ""
    return defects.count_text(len(found), sum(len(d["checks"]) for d in found))


def column_defects(matrix: dict[str, Any], name: str) -> list[dict[str, Any]] | None:
    """A column's defects as matrix.json keeps them; None in a matrix.json from before defects."""
    return (matrix.get("defects") or {}).get(name)


def defect_numbers(matrix: dict[str, Any], name: str) -> dict[str, int]:
    """Each defect key of a column by its number there (D1 has the most FAILs)."""
    return {d["key"]: i for i, d in enumerate(column_defects(matrix, name) or (), 1)}


def anomaly_line(history: dict[str, Any]) -> str:
    """What the anomaly checks found in one history: "anomalies: lost-write 1, unseen 1", or
    "anomalies: nothing found"."""
    found = ", ".join(f"{k} {n}" for k, n in history["counts"].items())
    return f"anomalies: {found or 'nothing found'}"


def summary_line(name: str, summary: dict[str, Any], found: list[dict[str, Any]] | None = None) -> str:
    """One line per target, as `kcts matrix` prints it at the end; with its defects when given
    ("...; 2 defects (3 FAILs)")."""
    absent = f", not run {summary['absent']}" if summary.get("absent") else ""
    tail = f"; {defects_line(found)}" if found is not None else ""
    return f"{name}: {depth(summary)}: {counts(summary)}{absent}{tail}"


def column_line(matrix: dict[str, Any], name: str) -> str:
    """A column's summary line, its defects included, as `kcts matrix` and its merge print it."""
    return summary_line(name, matrix["summary"][name], column_defects(matrix, name))


def write_all(matrix: dict[str, Any], folder: Path) -> list[Path]:
    paths = [folder / "matrix.json", folder / "matrix.md", folder / "matrix.html"]
    paths[0].write_text(json.dumps(matrix, indent=1))
    paths[1].write_text(to_markdown(matrix))
    paths[2].write_text(to_html(matrix))
    return paths


def to_markdown(matrix: dict[str, Any]) -> str:
    names = [t["name"] for t in matrix["targets"]]
    lines = ["# Compatibility matrix", ""]
    fingerprints = {t["name"]: t.get("fingerprint") for t in matrix["targets"]}
    # A column's defects are in the table of targets at the end and in the list of defects, not in its head.
    heads = [f"{n}<br>{depth(matrix['summary'][n])}<br>{counts(matrix['summary'][n])}"
             + (f"<br>fp {fingerprints[n]['digest']}" if (fingerprints.get(n) or {}).get("digest") else "")
             for n in names]
    numbers = {n: defect_numbers(matrix, n) for n in names}
    soaks = [k["name"] for k in matrix.get("soaks", [])]
    heads += [f"soak {n}" for n in soaks]
    lines.append("| check | " + " | ".join(h.replace("|", "\\|") for h in heads) + " |")
    lines.append("|---|" + "---|" * (len(names) + len(soaks)))
    area = None
    for row in matrix["rows"]:
        if row["area"] != area:
            area = row["area"]
            lines.append(f"| **{AREA_TITLES.get(area, area)}** |" + " |" * (len(names) + len(soaks)))
        cells = []
        for name in names:
            c = row["cells"][name]
            label = CELL_LABELS[c["cell"]]
            text = f"[{label}]({c['evidence']})" if c["evidence"] else label
            if c.get("defect") in numbers[name]:
                text = f"D{numbers[name][c['defect']]}: {text}"
            if c.get("wire"):
                text += f" [wire]({c['wire']})"
            for h in c.get("history") or ():
                line = anomaly_line(h)
                text += f"<br>[{line}]({h['plot'] or h['report']})"
            cells.append(text)
        cells += [soak_cell((row.get("soak") or {}).get(n)) for n in soaks]
        promise = row["promise"].replace("|", "\\|")
        if row.get("variant"):
            promise = f"*[{row['variant']}]* {promise}"
        lines.append(f"| {promise} | " + " | ".join(cells) + " |")
    lines += _defects_markdown(matrix, names)
    lines += _clients_markdown(matrix.get("clients"))
    cov = matrix.get("coverage")
    if cov:
        s = cov["summary"]
        lines += ["", "## Promise coverage", "",
                  f"{s['promises']} promises: " + ", ".join(f"{n} {k}" for k, n in sorted(s["by_status"].items())), "",
                  "| promise | status | versions judged | since | " + " | ".join(names) + " |",
                  "|---|---|---|---|" + "---|" * len(names)]
        for p in cov["promises"]:
            versions = "; ".join(f"{api} {','.join(map(str, v))}" for api, v in p["versions_judged"].items()) or "-"
            lines.append(f"| `{p['id']}` | {p['status']} | {versions} | {p.get('since_text', '-')} | "
                         + " | ".join(CELL_LABELS.get(p["targets"].get(n, "absent"), "-") for n in names) + " |")
    lines += ["", "| target | environment | fingerprint | judged | " + " | ".join(CELL_LABELS[k] for k in CELLS)
              + " | defects |", "|---|---|---|---|" + "---|" * (len(CELLS) + 1)]
    for t in matrix["targets"]:
        s = matrix["summary"][t["name"]]
        facts = [environment_line(t["environment"]), fingerprint_line(t.get("fingerprint"))]
        lines.append(f"| {t['name']} | " + " | ".join(f.replace("|", "\\|") for f in facts)
                     + f" | {depth(s).removeprefix('judged ')} | "
                     + " | ".join(str(s["counts"].get(k, 0)) for k in CELLS)
                     + f" | {_count(matrix, t['name'], fails=True)} |")
    return "\n".join(lines) + "\n"


def _defects_markdown(matrix: dict[str, Any], names: list[str]) -> list[str]:
    """Each column's defects: its number, what went wrong, the documents it breaks, its FAILs."""
    found = matrix.get("defects") or {}
    if not any(found.get(n) for n in names):
        return []
    lines = ["", "## Defects", "", "FAILs of one cause are one defect (harness/reporting/defects.py).", "",
             "| target | defect | cites | FAILs |", "|---|---|---|---|"]
    for name in names:
        for number, d in enumerate(found.get(name, []), 1):
            defect = defects.Defect.from_json(d)
            checks = "<br>".join(f"`{n}`" + (" (consequence)" if n in defect.consequences else "")
                                 for n in defect.checks)
            lines.append(f"| {name} | D{number} {_md(defect.title)} | {_md(defect.cites()) or '-'} | "
                         f"{len(defect.checks)}: {checks} |")
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _clients_markdown(clients: dict[str, Any] | None) -> list[str]:
    if not clients or not clients["columns"]:
        return []
    names = clients["columns"]
    lines = ["", "## What each client keeps", "",
             "A row per client column, a column per promise its checks judge, a table per area: BROKEN, ERROR or "
             "known gap when a check of the promise gave that, else kept when one passed, else why none could "
             "judge it (\"-\": no check of it runs that client). Each head is the promise's id without its area "
             "and party; the list under each table gives the whole id and its text."]
    for area, promises in client_areas(clients).items():
        lines += ["", f"### {area}", "",
                  "| client | " + " | ".join(f"`{_short(p['id'])}`" for p in promises) + " |",
                  "|---|" + "---|" * len(promises)]
        lines += [f"| {n.replace('|', chr(92) + '|')} | " + " | ".join(p["clients"][n] for p in promises) + " |"
                  for n in names]
        lines += [""] + [f"- `{p['id']}`: {p.get('text', '')}" for p in promises]
    return lines


_STYLE = """
body{font-family:system-ui,sans-serif;margin:1em;color:#222;max-width:100%}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;font-size:13px;overflow-wrap:anywhere}
th{background:#f0f0f0;position:sticky;top:0;z-index:1}
#matrix{table-layout:fixed}
#summary th,#summary td.name,#summary td.judged{white-space:nowrap}
#matrix col.promise{width:34%}
tr.area td{background:#e8e8f4;font-weight:bold}
div.wide{overflow-x:auto}
#clients{width:auto}
#clients th.promise{vertical-align:bottom;white-space:nowrap;padding:6px 2px}
#clients th.promise span{writing-mode:vertical-rl;transform:rotate(180deg)}
#clients th{white-space:nowrap}
td.cell{text-align:center}
td.pass{background:#d7f5d7} td.fail{background:#f7c4c4;font-weight:bold}
td.error{background:#f9dcc0;font-weight:bold}
td.not-supported{background:#e2e2e2}
td.target-refused{background:#e6e0f0} td.client-gap{background:#fbe7b5} td.skipped{background:#f4f4f4;color:#666}
td.absent{color:#aaa}
.nodeid{color:#777;font-size:11px}
.variant{display:inline-block;background:#dde6f7;border-radius:3px;padding:0 4px;margin-right:4px;font-size:11px;
  font-weight:bold;color:#234}
.depth{font-weight:normal;font-size:12px} .counts{font-weight:normal;font-size:11px;color:#555}
a.wire,a.defect{font-weight:normal;font-size:11px;margin-left:.4em}
.defects{font-weight:bold;font-size:12px;color:#a00}
#defect-list td:nth-child(1){white-space:nowrap} #defect-list td:nth-child(2){width:30%}
#defect-list td:nth-child(4){width:30%}
.anomalies{font-weight:normal;font-size:11px} .anomalies.found a{color:#a00;font-weight:bold}
details{font-weight:normal;font-size:11px;color:#555;text-align:left}
details summary{cursor:pointer}
details .full{white-space:pre-wrap;margin-top:2px}
.apis{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,16em),1fr));column-gap:1em;margin:2px 0}
.apis span{white-space:nowrap} .apis b{font-weight:normal;color:#222;overflow-wrap:anywhere;white-space:normal}
.apis h4{grid-column:1/-1;margin:4px 0 0;font-size:11px}
#summary .apis{min-width:36em}
#matrix th .apis{max-height:16em;overflow-y:auto}  /* the head is sticky: it must not cover the rows */
a{color:inherit}
"""


def _details(summary: str, body: str) -> str:
    """Folded text: `summary` (escaped) shown, `body` (already HTML) on click."""
    return f"<details><summary>{html.escape(summary)}</summary><div class='full'>{body}</div></details>"


def _fingerprint(fp: dict[str, Any] | None) -> str:
    if not fp:
        return f"<div class='counts'>{html.escape(fingerprint_line(fp))}</div>"
    if "error" in fp:  # why the target told nothing is worth a click, not a line in every head
        return _details(fingerprint_line(fp), html.escape(str(fp["error"])))
    esc = html.escape
    # A grid of "Name vLo-Hi" items: as many columns as the cell is wide, one in a narrow column head.
    apis = "".join(f"<span><b>{esc(name)}</b> v{lo}-{hi}</span>"
                   for name, (lo, hi) in sorted(fp.get("api_versions", {}).items()))
    features = "".join(
        f"<h4>{kind} features</h4>"
        + "".join(f"<span><b>{esc(name)}</b> {lo}-{hi}</span>" for name, (lo, hi) in sorted(ranges.items()))
        for kind in ("finalized", "supported") if (ranges := fp.get("features", {}).get(kind)))
    return _details(fingerprint_line(fp), f"<div class='apis'><h4>ApiVersions</h4>{apis}{features}</div>")


def _reason(reason: str) -> str:
    """A long reason folded to its first clause; a short one shown as it is."""
    if len(reason) <= 60:
        return f"<div class='counts'>{html.escape(reason)}</div>"
    # The cell already names the verdict (a FAIL is a failed assertion), so the summary is what the
    # reason is about; an ERROR keeps its exception's name, which is what it is about. A verdict's own
    # reason puts its evidence in parentheses; an assertion's parentheses are often what it found.
    text, marked = re.subn(r"^(NOT_SUPPORTED|TARGET_REFUSED|KNOWN_CLIENT_GAP): ", "", reason)
    text = text.removeprefix("AssertionError: ").strip()
    head = re.split(r"\s\(|;\s|:\s|\n" if marked else r";\s|:\s|\n", text, maxsplit=1)[0]
    if len(head) > 60:
        head = head[:57].rsplit(" ", 1)[0] + "..."
    return _details(head, html.escape(reason))


def to_html(matrix: dict[str, Any]) -> str:
    esc = html.escape
    names = [t["name"] for t in matrix["targets"]]
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>kcts compatibility matrix</title>",
           "<meta name='viewport' content='width=device-width'>",
           f"<style>{_STYLE}</style></head><body><h1>kcts compatibility matrix</h1>"]
    out.append("<table id='summary'><tr><th>target</th><th>environment</th><th>fingerprint</th><th>judged</th>"
               + "".join(f"<th title='{esc(CELL_LABELS[k])}'>{esc(COUNT_LABELS[k])}</th>" for k in CELLS)
               + "<th title='FAILs of one cause are one defect'>defects</th></tr>")
    for t in matrix["targets"]:
        env = "<br>".join(f"{esc(k)}={esc(str(v))}" for k, v in sorted(t["environment"].items()))
        s = matrix["summary"][t["name"]]
        out.append(f"<tr><td class='name'>{esc(t['name'])}</td>"
                   f"<td>{_details(environment_line(t['environment']), env)}</td>"
                   f"<td>{_fingerprint(t.get('fingerprint'))}</td>"
                   f"<td class='judged'>{esc(depth(s).removeprefix('judged '))}</td>"
                   + "".join(f"<td>{s['counts'].get(k, 0)}</td>" for k in CELLS)
                   + f"<td class='{'defects' if _count(matrix, t['name']) not in ('0', '-') else 'none'}'>"
                     f"{_count(matrix, t['name'])}</td></tr>")
    soaks = [k["name"] for k in matrix.get("soaks", [])]
    out.append("</table><p></p><table id='matrix'><colgroup><col class='promise'>"
               + "<col>" * (len(names) + len(soaks)) + "</colgroup><tr><th>check (promise)</th>"
               + "".join(f"<th data-target='{esc(t['name'])}'>{esc(t['name'])}<div class='depth'>"
                         f"{esc(depth(matrix['summary'][t['name']]))}</div><div class='counts'>"
                         f"{esc(counts(matrix['summary'][t['name']]))}</div>"
                         f"{_defects_head(column_defects(matrix, t['name']))}{_fingerprint(t.get('fingerprint'))}</th>"
                         for t in matrix["targets"])
               + "".join(f"<th data-soak='{esc(n)}'>soak {esc(n)}</th>" for n in soaks)
               + "</tr>")
    numbers = {n: defect_numbers(matrix, n) for n in names}
    area = None
    for row in matrix["rows"]:
        if row["area"] != area:
            area = row["area"]
            out.append(f"<tr class='area'><td colspan='{len(names) + len(soaks) + 1}'>"
                       f"{esc(AREA_TITLES.get(area, area))}</td></tr>")
        tag = f"<span class='variant'>variant: {esc(row['variant'])}</span>" if row.get("variant") else ""
        out.append(f"<tr data-nodeid='{esc(row['nodeid'])}'><td>{tag}{esc(row['promise'])}"
                   f"<div class='nodeid'>{esc(row['nodeid'])}</div></td>")
        for name in names:
            c = row["cells"][name]
            label = esc(CELL_LABELS[c["cell"]])
            body = f"<a href='{esc(c['evidence'])}'>{label}</a>" if c["evidence"] else label
            if c.get("wire"):
                body += f"<a class='wire' href='{esc(c['wire'])}'>wire</a>"
            number = numbers[name].get(c.get("defect") or "")
            if number:
                body += (f"<a class='defect' href='#{_defect_anchor(name, number)}' "
                         f"title='{esc(c['defect'])}'>D{number}</a>")
            if c["cell"] not in ("pass", "absent") and c["reason"]:
                body += _reason(c["reason"])
            for h in c.get("history") or ():
                css = "anomalies found" if h["counts"] else "anomalies"
                body += (f"<div class='{css}'><a href='{esc(h['plot'] or h['report'])}' title='{esc(h['name'])}'>"
                         f"{esc(anomaly_line(h))}</a></div>")
            out.append(f"<td class='cell {c['cell']}' data-target='{esc(name)}' data-cell='{c['cell']}'>{body}</td>")
        for n in soaks:
            k = (row.get("soak") or {}).get(n)
            css = "absent" if not k else "fail" if k["flipped"] else next(iter(k["cells"]))
            out.append(f"<td class='cell {css}' data-soak='{esc(n)}'>{esc(soak_cell(k))}</td>")
        out.append("</tr>")
    out.append("</table>")
    out.extend(_defects_html(matrix, names))
    out.extend(_clients_html(matrix.get("clients")))
    out.extend(_coverage_html(matrix.get("coverage"), names))
    out.append("</body></html>")
    return "\n".join(out)


def _defects_head(found: list[dict[str, Any]] | None) -> str:
    line = defects_line(found)
    return f"<div class='defects'>{html.escape(line)}</div>" if line else ""


def _count(matrix: dict[str, Any], name: str, fails: bool = False) -> str:
    """A column's number of defects ("2 (3 FAILs)" with `fails`), "-" in a matrix.json from before defects."""
    found = column_defects(matrix, name)
    if found is None:
        return "-"
    checks = sum(len(d["checks"]) for d in found)
    return f"{len(found)} ({defects.fails_text(checks)})" if fails and checks else str(len(found))


def _defect_anchor(name: str, number: int) -> str:
    return f"defect-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}-{number}"


def _defects_html(matrix: dict[str, Any], names: list[str]) -> list[str]:
    """Each column's defects: its number, what went wrong, the documents it breaks, its FAILs."""
    found = matrix.get("defects") or {}
    if not any(found.get(n) for n in names):
        return []
    esc = html.escape
    out = ["<h2 id='defects'>Defects</h2><p>FAILs of one cause are one defect: the same wrong answer of one "
           "API, the same promise not kept, or a FAIL a check declares the consequence of another "
           "(harness/reporting/defects.py).</p>",
           "<table id='defect-list'><tr><th>target</th><th>defect</th><th>cites</th><th>FAILs</th></tr>"]
    for name in names:
        for number, d in enumerate(found.get(name, []), 1):
            defect = defects.Defect.from_json(d)
            checks = "".join(f"<div class='nodeid'>{esc(n)}{' (consequence)' if n in defect.consequences else ''}"
                             "</div>" for n in defect.checks)
            out.append(f"<tr id='{_defect_anchor(name, number)}' data-target='{esc(name)}' "
                       f"data-defect='{esc(defect.key)}'><td>{esc(name)}</td><td>D{number} {esc(defect.title)}</td>"
                       f"<td class='cites'>{esc(defect.cites()) or '-'}</td>"
                       f"<td>{_details(defects.fails_text(len(defect.checks)), checks)}</td></tr>")
    out.append("</table>")
    return out


def _clients_html(clients: dict[str, Any] | None) -> list[str]:
    """What each client column keeps of each promise its checks judge."""
    if not clients or not clients["columns"]:
        return []
    esc = html.escape
    css = {v: k for k, v in PROMISE_LABELS.items()}
    promises = [p for ps in client_areas(clients).values() for p in ps]
    out = ["<h2>What each client keeps</h2><p>A row per client column, a column per promise its checks judge: "
           "BROKEN, ERROR or known gap when a check of it gave that, else kept when one passed, else why none "
           "could judge it. A column head's title is the promise's text.</p>"
           "<div class='wide'><table id='clients'><tr><th>client</th>"
           + "".join(f"<th class='promise' data-promise='{esc(p['id'])}' title='{esc(p.get('text', ''))}'>"
                     f"<span>{esc(p['id'])}</span></th>" for p in promises) + "</tr>"]
    for name in clients["columns"]:
        out.append(f"<tr data-client='{esc(name)}'><th>{esc(name)}</th>" + "".join(
            f"<td class='cell {css.get(v, 'absent')}'>{esc(v)}</td>"
            for v in (p["clients"][name] for p in promises)) + "</tr>")
    out.append("</table></div>")
    return out


def _coverage_html(cov: dict[str, Any] | None, names: list[str]) -> list[str]:
    """The promise coverage section: each promise, its status, the versions judged and each target's verdict."""
    if not cov:
        return []
    esc = html.escape
    s = cov["summary"]
    head = f"{s['promises']} promises: " + ", ".join(f"{n} {k}" for k, n in sorted(s["by_status"].items()))
    out = [f"<h2 id='coverage'>Promise coverage</h2><p class='coverage-summary'>{esc(head)}</p>",
           "<table id='promises'><tr><th>promise</th><th>status</th><th>versions judged</th>"
           "<th title='the oldest Apache Kafka release here that passes it'>since</th>"
           + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr>"]
    for p in cov["promises"]:
        versions = "; ".join(f"{api} {', '.join(map(str, v))}" for api, v in p["versions_judged"].items()) or "-"
        why = f"<div class='nodeid'>{esc(p['why'])}</div>" if p.get("why") else ""
        out.append(f"<tr data-promise='{esc(p['id'])}'><td>{esc(p['text'])}<div class='nodeid'>{esc(p['id'])} · "
                   f"{esc(p['kip'])} “{esc(p['section'])}”</div></td><td>{esc(p['status'])}{why}</td>"
                   f"<td>{esc(versions)}</td><td class='since'>{esc(p.get('since_text', '-'))}</td>"
                   + "".join(f"<td class='cell {esc(p['targets'].get(n, 'absent'))}'>"
                             f"{esc(CELL_LABELS.get(p['targets'].get(n, 'absent'), '-'))}</td>" for n in names)
                   + "</tr>")
    out.append("</table>")
    return out
