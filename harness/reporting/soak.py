"""`kcts soak --repeat N [kcts run args]`: the same selection N times, each on a fresh cluster, and
what each check gave each time.

A check that flips between runs makes a gate that people ignore, so soak states per check:
- its verdicts (pass k/n, and the other cells it gave);
- the spread of its duration (min, median, max);
- for a check that flipped, each side's evidence: the run, the reason, and the evidence file.

Each run is a plain `kcts run` in a process of its own, with the run id `<soak id>-<i>`, so every run
keeps its own report folder. `reports/<soak id>/soak.json` and `soak.md` hold the result. The exit
code is 0 when no check flipped, 1 when one did, and 2 when a run wrote no results at all.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import KctsError


@dataclass(frozen=True)
class SoakRun:
    run_id: str
    exit_code: int
    seconds: float
    results: dict[str, Any] | None  # its results.json; None when the run wrote none


@dataclass
class CheckSoak:
    nodeid: str
    cells: list[tuple[str, str]] = field(default_factory=list)  # (run id, cell), in run order
    durations: list[float] = field(default_factory=list)
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)  # cell -> the first run that gave it

    @property
    def passed(self) -> int:
        return sum(1 for _, c in self.cells if c == "pass")

    @property
    def flipped(self) -> bool:
        return len({c for _, c in self.cells}) > 1

    def to_json(self, runs: int) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid, "pass": self.passed, "n": len(self.cells), "runs": runs,
            "cells": dict(Counter(c for _, c in self.cells)), "flipped": self.flipped,
            "durations_s": _spread(self.durations),
            "sides": self.sides if self.flipped else {},
        }


def _spread(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"min": round(min(values), 2), "median": round(statistics.median(values), 2), "max": round(max(values), 2)}


def aggregate(runs: Sequence[SoakRun]) -> list[CheckSoak]:
    """Per check, in the order first seen: every run's cell, duration and, per cell, its first evidence."""
    checks: dict[str, CheckSoak] = {}
    for run in runs:
        for c in (run.results or {}).get("checks", []):
            soak = checks.setdefault(c["nodeid"], CheckSoak(c["nodeid"]))
            soak.cells.append((run.run_id, c["cell"]))
            soak.durations.append(float(c.get("duration_s") or 0.0))
            soak.sides.setdefault(c["cell"], {"run": run.run_id, "reason": c.get("reason", ""),
                                              "evidence": c.get("evidence"), "wire_evidence": c.get("wire_evidence")})
    return list(checks.values())


def report(soak_id: str, args: Sequence[str], runs: Sequence[SoakRun], checks: Sequence[CheckSoak]) -> dict[str, Any]:
    flips = [c for c in checks if c.flipped]
    missing = [c for c in checks if len(c.cells) < len(runs)]
    return {
        "soak_id": soak_id, "args": list(args), "repeat": len(runs),
        "runs": [{"run_id": r.run_id, "exit_code": r.exit_code, "seconds": round(r.seconds, 1),
                  "results": r.results is not None} for r in runs],
        "summary": {
            "checks": len(checks), "flipped": len(flips), "always_pass": sum(1 for c in checks
                                                                              if c.passed == len(runs)),
            "not_in_every_run": len(missing), "wall_s": round(sum(r.seconds for r in runs), 1),
            "cells": dict(Counter(cell for c in checks for _, cell in c.cells)),
        },
        "checks": [c.to_json(len(runs)) for c in checks],
    }


def render_md(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    per_run = ", ".join(f"{r['seconds']:.0f}" for r in doc["runs"])
    lines = [
        f"# Soak {doc['soak_id']}: {doc['repeat']} runs of `kcts run {' '.join(doc['args'])}`", "",
        f"- {s['checks']} checks; {s['always_pass']} passed every run; **{s['flipped']} flipped**; "
        f"{s['not_in_every_run']} missing from some run",
        f"- verdicts over all runs: {', '.join(f'{k} {v}' for k, v in sorted(s['cells'].items()))}",
        f"- wall time: {s['wall_s']:.0f} s ({per_run} s per run)", "",
    ]
    flips = [c for c in doc["checks"] if c["flipped"]]
    if flips:
        lines += ["## Flipped", ""]
        for c in flips:
            lines.append(f"### `{c['nodeid']}`: pass {c['pass']}/{c['n']}, {c['cells']}")
            for cell, side in c["sides"].items():
                lines.append(f"- **{cell}** (first in {side['run']}): {side['reason'] or '-'}"
                             + (f"; evidence `{side['evidence']}`" if side.get("evidence") else ""))
            lines.append("")
    lines += ["## Every check", "", "| check | pass k/n | verdicts | duration min / median / max (s) |",
              "|---|---|---|---|"]
    for c in doc["checks"]:
        d = c["durations_s"]
        spread = f"{d['min']} / {d['median']} / {d['max']}" if d else "-"
        cells = ", ".join(f"{k} {v}" for k, v in sorted(c["cells"].items()))
        lines.append(f"| `{c['nodeid']}` | {c['pass']}/{c['n']} | {cells} | {spread} |")
    return "\n".join(lines) + "\n"


def _kcts() -> list[str]:
    """The kcts command beside this interpreter (`python -m harness.cli` imports the harness before
    pytest can rewrite its asserts, and pytest warns of it)."""
    script = Path(sys.executable).with_name("kcts")
    return [str(script)] if script.exists() else [sys.executable, "-m", "harness.cli"]


def run_soak(repeat: int, args: Sequence[str], reports: Path, soak_id: str | None = None) -> int:
    """Run `kcts run args` `repeat` times; write soak.json and soak.md; the exit code (see the module)."""
    if repeat < 1:
        raise KctsError(f"--repeat must be at least 1, not {repeat}")
    if any(a == "--run-id" or a.startswith("--run-id=") for a in args):
        raise KctsError("kcts soak names each run itself (<soak id>-<i>): drop --run-id")
    soak_id = soak_id or f"soak-{time.strftime('%Y%m%d-%H%M%S')}"
    runs: list[SoakRun] = []
    for i in range(1, repeat + 1):
        run_id = f"{soak_id}-{i}"
        print(f"kcts soak: run {i}/{repeat} ({run_id})", flush=True)
        start = time.monotonic()
        done = subprocess.run([*_kcts(), "run", *args, "--run-id", run_id, "--reports-dir", str(reports)], check=False)
        path = reports / run_id / "results.json"
        results = json.loads(path.read_text()) if path.exists() else None
        runs.append(SoakRun(run_id, done.returncode, time.monotonic() - start, results))
        if done.returncode == 130:
            print("kcts soak: interrupted; writing what the finished runs gave", file=sys.stderr)
            break
    doc = report(soak_id, args, runs, aggregate(runs))
    out = reports / soak_id
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "soak.md").write_text(render_md(doc))
    s = doc["summary"]
    print(f"kcts soak: {s['checks']} checks, {len(runs)} runs: {s['always_pass']} passed every run, {s['flipped']} "
          f"flipped; {out / 'soak.md'}")
    if any(r.results is None for r in runs):
        return 2
    return 1 if s["flipped"] else 0
