"""Promise coverage: for each promise of harness/promises.toml, the checks that judge it, the API
versions they judged it at, and each target's verdict, from the catalogue, the suites and the last
results.json of each target.

`kcts coverage [RESULTS...] [--json]`: RESULTS are report folders or results.json files; by default
the newest run of each target under reports/. The checks of a promise come from the suites' own
`@pytest.mark.promise(...)` markers (read from the source, so no run is needed to list them); the
versions and verdicts come from the runs (each check's `promises` and `apis`, schema_version 2).

"since" is read from the same verdicts, never written by hand: the oldest Apache Kafka release among
the targets (columns titled by a release, `4.4.0`) whose checks of the promise pass, a known client
gap's aside (`tox -e releases` runs every line from 3.3 on, so there it is the first line that keeps
the promise).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import layout
from harness.promises import Promise, catalogue
from harness.verdicts import CELLS

# A promise's verdict on one target, from the cells of its checks: the worst of them that judged.
WORST_FIRST = ("fail", "error", "client-gap", "not-supported", "pass", "target-refused", "skipped")


def checks_by_promise(suites: Path = layout.ROOT / "suites") -> dict[str, list[str]]:
    """promise id -> the checks ("suites/kip320/test_x.py::test_y") whose @pytest.mark.promise names it."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(suites.rglob("test_*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            for ids in _promise_args(node.decorator_list):
                for pid in ids:
                    found[pid].append(f"{path.relative_to(suites.parent)}::{node.name}")
    return dict(found)


def _promise_args(decorators: list[ast.expr]) -> Iterable[list[str]]:
    for d in decorators:
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "promise":
            yield [a.value for a in d.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


@dataclass
class Coverage:
    promise: Promise
    checks: list[str]
    versions: dict[str, set[int]] = field(default_factory=dict)  # API -> versions judged, within the promise's
    targets: dict[str, str] = field(default_factory=dict)  # target -> the promise's verdict there
    # target -> the verdict of the checks there that a known client gap did not end: what the target
    # (not a client with a named upstream gap) did with the promise
    apart_from_gaps: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.promise.unobservable:
            return "unobservable"
        if self.promise.pending:
            return "not judged"
        return "judged" if self.checks else "NO CHECK"

    @property
    def since(self) -> str | None:
        """The oldest Apache Kafka release among the targets that keep the promise: its checks there
        pass, but for those that ended on a known client gap (named upstream, narrowed to the client's
        own failure): another client passing the same promise on that release shows the release keeps
        it, and the gap is the client's. A promise only a gapped client judged has no pass to show."""
        kept = [t for t, cell in self.apart_from_gaps.items() if cell == "pass" and release_key(t) is not None]
        return min(kept, key=lambda t: release_key(t) or ()) if kept else None

    def since_text(self) -> str:
        """`since` for a reader: the release, or why no release here keeps the promise."""
        if self.since is not None:
            return self.since
        releases = sorted((t for t in self.targets if release_key(t) is not None), key=lambda t: release_key(t) or ())
        if not releases:
            return "-" if self.status == "judged" else self.status
        seen = sorted({self.targets[t] for t in releases},
                      key=lambda c: WORST_FIRST.index(c) if c in WORST_FIRST else 99)
        return f"none of {releases[0]}..{releases[-1]} ({', '.join(seen)})"

    def versions_text(self) -> str:
        return "; ".join(f"{api} {_ranges(sorted(v))}" for api, v in sorted(self.versions.items())) or "-"

    def to_json(self) -> dict[str, Any]:
        p = self.promise
        return {"id": p.id, "kip": p.kip, "section": p.section, "side": p.side, "text": p.text, "apis": p.apis,
                "status": self.status, "why": p.unobservable or p.pending, "checks": self.checks,
                "versions_judged": {api: sorted(v) for api, v in sorted(self.versions.items())},
                "targets": self.targets, "since": self.since, "since_text": self.since_text()}


def _ranges(values: list[int]) -> str:
    out: list[str] = []
    for v in values:
        if out and out[-1].split("-")[-1] == str(v - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return "v" + ",".join(out)


_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def release_key(target: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a column titled by an Apache Kafka release (`3.3.2`); None for any other."""
    m = _RELEASE.match(target)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _worst(cells: list[str]) -> str:
    return min(cells, key=lambda c: WORST_FIRST.index(c) if c in WORST_FIRST else 99)


def _base(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def build(runs: Mapping[str, Mapping[str, Any]], promises: Mapping[str, Promise] | None = None,
          by_promise: Mapping[str, list[str]] | None = None) -> list[Coverage]:
    """Coverage of every promise from `runs` (target label -> results.json contents)."""
    promises = catalogue() if promises is None else promises
    by_promise = checks_by_promise() if by_promise is None else by_promise
    out = []
    for pid, p in promises.items():
        cov = Coverage(p, sorted(by_promise.get(pid, [])))
        mine = set(cov.checks)
        for target, results in runs.items():
            cells = []
            for check in results.get("checks", []):
                if _base(check["nodeid"]) not in mine and pid not in check.get("promises", []):
                    continue
                cells.append(check["cell"])
                if check["cell"] in ("pass", "fail"):
                    for entry in check.get("apis", []):
                        api, _, v = entry.rpartition(" v")
                        if p.concerns(api, int(v)):
                            cov.versions.setdefault(api, set()).add(int(v))
            if cells:
                cov.targets[target] = _worst(cells)
            if judged := [c for c in cells if c != "client-gap"]:
                cov.apart_from_gaps[target] = _worst(judged)
        out.append(cov)
    return out


def summary(coverage: list[Coverage]) -> dict[str, Any]:
    by_status: dict[str, int] = defaultdict(int)
    by_kip: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for c in coverage:
        by_status[c.status] += 1
        by_kip[c.promise.kip][c.status] += 1
    return {"promises": len(coverage), "by_status": dict(by_status),
            "by_kip": {k: dict(v) for k, v in by_kip.items()}}


def render(coverage: list[Coverage], targets: list[str]) -> str:
    s = summary(coverage)
    lines = [f"{s['promises']} promises: " + ", ".join(f"{n} {k}" for k, n in sorted(s["by_status"].items())),
             *(f"  {kip}: " + ", ".join(f"{n} {k}" for k, n in sorted(v.items())) for kip, v in s["by_kip"].items()),
             f"targets: {', '.join(targets) or 'none (no results.json found)'}", ""]
    for c in coverage:
        verdicts = " ".join(f"{t}={v}" for t, v in c.targets.items()) or "-"
        lines.append(f"{c.promise.id}  [{c.status}]  {c.promise.kip} \"{c.promise.section}\"")
        if c.checks:
            lines.append(f"    checks: {', '.join(ch.rsplit('::', 1)[1] for ch in c.checks)}")
        if c.promise.unobservable or c.promise.pending:
            lines.append(f"    why: {c.promise.unobservable or c.promise.pending}")
        lines.append(f"    versions judged: {c.versions_text()}   since: {c.since_text()}   targets: {verdicts}")
    return "\n".join(lines)


def latest_runs(reports: Path) -> dict[str, Path]:
    """The newest results.json of each target under `reports/` (matrix target folders included)."""
    newest: dict[str, tuple[float, Path]] = {}
    for path in reports.rglob("results.json"):
        if "latest" in path.parts:
            continue
        try:
            target = json.loads(path.read_text()).get("target", "?")
        except (OSError, ValueError):
            continue
        mtime = path.stat().st_mtime
        if target not in newest or mtime > newest[target][0]:
            newest[target] = (mtime, path)
    return {t: p for t, (_, p) in sorted(newest.items())}


def load_runs(paths: list[Path]) -> dict[str, dict[str, Any]]:
    runs: dict[str, dict[str, Any]] = {}
    for p in paths:
        f = p / "results.json" if p.is_dir() else p
        data = json.loads(f.read_text())
        label = data.get("target", str(p))
        runs[label if label not in runs else f"{label} ({p})"] = data
    return runs


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcts coverage", description="promise -> checks -> versions -> targets")
    parser.add_argument("results", nargs="*", type=Path,
                        help="report folders or results.json files (default: the newest run of each target)")
    parser.add_argument("--reports-dir", type=Path, default=Path(os.environ.get("KCTS_REPORTS", "reports")))
    parser.add_argument("--json", action="store_true", help="JSON instead of text")
    opts = parser.parse_args(argv)
    paths = opts.results or list(latest_runs(opts.reports_dir).values())
    runs = load_runs(paths)
    coverage = build(runs)
    if opts.json:
        print(json.dumps({"summary": summary(coverage), "targets": list(runs),
                          "promises": [c.to_json() for c in coverage]}, indent=1))
    else:
        print(render(coverage, list(runs)))
    return 0


__all__ = ["CELLS", "Coverage", "build", "checks_by_promise", "main", "release_key", "render", "summary"]
