"""`kcts diff OLD NEW`: what changed between two runs (or two matrices), for a CI comment and a gate.

Each side is a run folder (or its `results.json`) or a matrix folder (`matrix.json`; its columns are
matched by target name). For each pair it lists every check whose verdict changed with what its
evidence says changed (the failure's first lines, and the error codes the target answered on the
wire), the checks that are new and those that were removed, and what changed in the target's
fingerprint. A check renamed since OLD (harness/reporting/renamed.py) is paired with its new id. The
exit code is 1 when a check that passed in OLD fails (FAIL or ERROR) in NEW, so a gate can stop on a
regression; 0 otherwise; 2 on input it cannot read.

Besides checks it compares defects (FAILs of one cause, harness.reporting.defects) by their keys: the
defects NEW has and OLD had not, and those OLD had and NEW has not. Both sides' recorded defects are
compared where both files have them (schema 4); against a file from before, both sides are grouped
again from what every results.json holds (each FAIL's reason), so that like is compared with like.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.protocol.errors import describe
from harness.reporting import defects
from harness.reporting.defects import Defect
from harness.reporting.fingerprint import short
from harness.reporting.renamed import current_id

REGRESSED = ("fail", "error")


@dataclass(frozen=True)
class DiffSide:
    """One side of a comparison: a target's results, and the folder its evidence paths are relative to."""

    name: str
    folder: Path
    data: dict[str, Any]

    @property
    def checks(self) -> dict[str, dict[str, Any]]:
        """The checks by their node id of today: an old id is read as the one it was renamed to."""
        return {current_id(c["nodeid"]): c for c in self.data.get("checks", [])}


@dataclass
class Change:
    nodeid: str
    old: str
    new: str
    evidence: str  # what the evidence says changed, one line

    @property
    def regression(self) -> bool:
        return self.old == "pass" and self.new in REGRESSED


@dataclass
class RunDiff:
    target: str
    old: str
    new: str
    changed: list[Change] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    fingerprint: list[str] = field(default_factory=list)
    same: int = 0
    renamed: list[str] = field(default_factory=list)  # "old id -> new id" of the checks paired across a rename
    defects_before: list[Defect] = field(default_factory=list)
    defects_after: list[Defect] = field(default_factory=list)

    @property
    def new_defects(self) -> list[Defect]:
        """Defects NEW has and OLD had not, by key."""
        before = {d.key for d in self.defects_before}
        return [d for d in self.defects_after if d.key not in before]

    @property
    def fixed_defects(self) -> list[Defect]:
        """Defects OLD had and NEW has not, by key."""
        after = {d.key for d in self.defects_after}
        return [d for d in self.defects_before if d.key not in after]

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changed if c.regression]


def load(path: Path) -> list[DiffSide]:
    """The runs a path holds: one for a run folder or results.json, one per column for a matrix."""
    if path.is_dir() and (path / "matrix.json").is_file():
        matrix = _read(path / "matrix.json")
        runs = []
        for target in matrix.get("targets", []):
            folder = path / target["folder"]
            results = folder / "results.json"
            data = _read(results) if results.is_file() else _from_matrix(matrix, target)
            runs.append(DiffSide(target["name"], folder, data))
        return runs
    results = path / "results.json" if path.is_dir() else path
    if not results.is_file():
        raise KctsError(f"{path} holds neither results.json nor matrix.json: name a run folder (reports/<run-id>), "
                        "its results.json, or a matrix folder (reports/matrix-<stamp>)")
    data = _read(results)
    return [DiffSide(data.get("target") or results.parent.name, results.parent, data)]


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise KctsError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise KctsError(f"{path} is not a kcts results or matrix file")
    return data


def _from_matrix(matrix: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """A column of matrix.json as results, where the target's own folder was not kept beside it."""
    name = target["name"]
    checks = [{"nodeid": r["nodeid"], **r["cells"][name]} for r in matrix.get("rows", [])
              if r["cells"].get(name, {}).get("cell") not in (None, "absent")]
    out = {"target": name, "fingerprint": target.get("fingerprint"), "checks": checks}
    if name in (matrix.get("defects") or {}):
        out["defects"] = matrix["defects"][name]
    return out


def diff(old: Path, new: Path) -> list[RunDiff]:
    """Pair the runs of both sides (by target name; a single run on each side pairs whatever its name)."""
    olds, news = load(old), load(new)
    if len(olds) == 1 and len(news) == 1:
        pairs = [(olds[0], news[0])]
    else:
        by_name = {r.name: r for r in olds}
        pairs = [(by_name[r.name], r) for r in news if r.name in by_name]
        if not pairs:
            raise KctsError(f"no target in both {old} ({', '.join(r.name for r in olds)}) and {new} "
                            f"({', '.join(r.name for r in news)})")
    return [diff_runs(a, b) for a, b in pairs]


def diff_runs(old: DiffSide, new: DiffSide) -> RunDiff:
    a, b = old.checks, new.checks
    target = new.name if new.name == old.name else f"{old.name} -> {new.name}"
    out = RunDiff(target, str(old.folder), str(new.folder))
    for nodeid in sorted(set(a) & set(b)):
        ca, cb = a[nodeid]["cell"], b[nodeid]["cell"]
        if ca == cb:
            out.same += 1
        else:
            out.changed.append(Change(nodeid, ca, cb, what_changed(old, a[nodeid], new, b[nodeid])))
    out.added = sorted(set(b) - set(a))
    out.removed = sorted(set(a) - set(b))
    out.fingerprint = fingerprint_changes(old.data.get("fingerprint"), new.data.get("fingerprint"))
    out.renamed = [f"{c['nodeid']} -> {current_id(c['nodeid'])}" for c in old.data.get("checks", [])
                   if current_id(c["nodeid"]) != c["nodeid"] and current_id(c["nodeid"]) in b]
    out.defects_before, out.defects_after = defects_of(old.data, new.data)
    return out


def defects_of(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[Defect], list[Defect]]:
    """Both sides' defects, found alike: as recorded where both files record them, else grouped
    again from their reasons (a file from before schema 4 has nothing else)."""
    if isinstance(old.get("defects"), list) and isinstance(new.get("defects"), list):
        return defects.of_results(old), defects.of_results(new)
    return defects.from_reasons(old), defects.from_reasons(new)


def what_changed(old: DiffSide, a: dict[str, Any], new: DiffSide, b: dict[str, Any]) -> str:
    """One line from both sides' evidence: the wire error codes that differ, then the new reason."""
    errs_a, errs_b = answered(old, a), answered(new, b)
    parts = []
    if errs_a != errs_b and (errs_a or errs_b):
        parts.append(f"answered {', '.join(errs_b) or 'no error'}, was {', '.join(errs_a) or 'no error'}")
    reason = (b.get("reason") or "").strip() or (a.get("reason") or "").strip()
    if reason:
        side = "now" if (b.get("reason") or "").strip() else "was"
        parts.append(f"{side}: {reason[:300]}")
    return "; ".join(parts) or "no evidence kept (a pass keeps none)"


def answered(run: DiffSide, check: dict[str, Any]) -> list[str]:
    """The error codes other than NONE that the target answered in the check's wire evidence, per API."""
    rel = check.get("wire_evidence") or check.get("wire")
    if not rel:
        return []
    path = run.folder / rel
    if not path.is_file():
        path = run.folder.parent / rel  # a matrix cell's path is relative to the matrix folder
    try:
        exchanges = json.loads(path.read_text()).get("exchanges", [])
    except (OSError, ValueError):
        return []
    seen: list[str] = []
    for ex in exchanges:
        for code in _error_codes(ex.get("response")):
            text = f"{describe(code)} to {ex.get('api')} v{ex.get('version')}"
            if text not in seen:
                seen.append(text)
    return seen


def _error_codes(node: object) -> list[int]:
    if isinstance(node, dict):
        codes = [v for k, v in node.items() if k == "ErrorCode" and isinstance(v, int) and v]
        return codes + [c for k, v in node.items() if k != "ErrorCode" for c in _error_codes(v)]
    if isinstance(node, list):
        return [c for v in node for c in _error_codes(v)]
    return []


def fingerprint_changes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """What differs between two fingerprints, one line each (nothing when their digests agree)."""
    if (old or {}).get("digest") and (old or {}).get("digest") == (new or {}).get("digest"):
        return []
    if not old or not new or "error" in old or "error" in new:
        return [f"fingerprint: {short(old)} -> {short(new)}"] if short(old) != short(new) else []
    out = []
    for key in ("version", "brokers"):
        if old.get(key) != new.get(key):
            out.append(f"{key}: {old.get(key)} -> {new.get(key)}")
    apis_a, apis_b = old.get("api_versions", {}), new.get("api_versions", {})
    for api in sorted(set(apis_a) | set(apis_b)):
        ra, rb = apis_a.get(api), apis_b.get(api)
        if ra != rb:
            out.append(f"{api}: {_range(ra)} -> {_range(rb)}")
    for kind in ("supported", "finalized"):
        fa, fb = old.get("features", {}).get(kind, {}), new.get("features", {}).get(kind, {})
        for name in sorted(set(fa) | set(fb)):
            if fa.get(name) != fb.get(name):
                out.append(f"{kind} feature {name}: {_range(fa.get(name))} -> {_range(fb.get(name))}")
    return out


def _range(r: list[int] | None) -> str:
    return f"v{r[0]}-{r[1]}" if r else "absent"


def to_markdown(diffs: list[RunDiff]) -> str:
    lines = ["# kcts diff", ""]
    for d in diffs:
        regress = len(d.regressions)
        lines += [f"## {d.target}", "",
                  f"{len(d.changed)} changed ({regress} pass -> FAIL/ERROR), {len(d.added)} new, "
                  f"{len(d.removed)} removed, {d.same} the same. Old: `{d.old}`; new: `{d.new}`.", "",
                  f"Defects: {defects.count_line(d.defects_after)}, was {defects.count_line(d.defects_before)}: "
                  f"{len(d.new_defects)} new, {len(d.fixed_defects)} fixed.", ""]
        if d.changed:
            lines += ["| check | old | new | what the evidence says |", "|---|---|---|---|"]
            for c in d.changed:
                mark = " **regression**" if c.regression else ""
                lines.append(f"| `{c.nodeid}` | {c.old} | {c.new}{mark} | {_cell(c.evidence)} |")
            lines.append("")
        for title, ids in (("New checks", d.added), ("Removed checks", d.removed),
                           ("Renamed checks, paired with their new id", d.renamed)):
            if ids:
                lines += [f"{title}:", "", *[f"- `{n}`" for n in ids], ""]
        for title, found in (("New defects", d.new_defects), ("Fixed defects", d.fixed_defects)):
            if found:
                lines += [f"{title}:", "", *[_defect_line(x) for x in found], ""]
        if d.fingerprint:
            lines += ["Target fingerprint changed:", "", *[f"- {f}" for f in d.fingerprint], ""]
    return "\n".join(lines).rstrip() + "\n"


def _defect_line(d: Defect) -> str:
    """"- **Fetch: NONE(0), expected UNKNOWN_LEADER_EPOCH** (KIP-320, Leader Fetch Handling): 2 FAILs: `a`, `b`" """
    cites = f" ({d.cites()})" if d.documents else ""
    return (f"- **{_cell(d.title)}**{_cell(cites)}: {defects.fails_text(len(d.checks))}: "
            + ", ".join(f"`{n}`" for n in d.checks))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_json(diffs: list[RunDiff]) -> dict[str, Any]:
    return {"regressions": sum(len(d.regressions) for d in diffs),
            "new_defects": sum(len(d.new_defects) for d in diffs),
            "targets": [{**asdict(d), "changed": [{**asdict(c), "regression": c.regression} for c in d.changed],
                         "new_defects": [x.key for x in d.new_defects],
                         "fixed_defects": [x.key for x in d.fixed_defects]} for d in diffs]}


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcts diff", description="what changed between two runs or matrices; "
                                     "exit 1 when a check that passed fails now")
    parser.add_argument("old", type=Path, help="a run folder, its results.json, or a matrix folder")
    parser.add_argument("new", type=Path)
    parser.add_argument("--markdown", type=Path, help="write the markdown here (default: print it)")
    parser.add_argument("--json", type=Path, help="write the JSON here")
    opts = parser.parse_args(args)
    diffs = diff(opts.old, opts.new)
    text = to_markdown(diffs)
    if opts.markdown:
        opts.markdown.write_text(text)
    else:
        print(text, end="")
    if opts.json:
        opts.json.write_text(json.dumps(to_json(diffs), indent=1))
    regressions = sum(len(d.regressions) for d in diffs)
    if regressions:
        print(f"kcts diff: {regressions} check(s) went from pass to FAIL or ERROR")
    return 1 if regressions else 0
