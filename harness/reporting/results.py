"""Per-check results of one run, as the matrix reads them: `results.json` (the checks and a summary)
and, for each check that did not pass, its text evidence and its wire evidence (harness.reporting.wire).

`results.json` is a published format: `harness/reporting/results.schema.json` describes it (and
`python -m harness.reporting.schema FILE...` validates files against it). A change to its shape
bumps `SCHEMA_VERSION` and the schema with it (3 adds each check's history findings, `history`; 4 the
defects: each FAIL's `defect` key, their count in `summary` and the `defects` list, harness.reporting.defects).
Besides the checks it carries the kcts version and commit that wrote it, and the target's fingerprint
(harness.reporting.fingerprint)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness import layout
from harness.areas import AREAS, OTHER
from harness.reporting import defects, wire
from harness.verdicts import CELLS, JUDGED, classify

if TYPE_CHECKING:  # the type only: every run's plugin imports this module
    from harness.integrity.anomaly_report import AnomalyReport

SCHEMA_VERSION = 4

# The type of the exception a check's call raised (set by the pytest plugin's pytest_pyfunc_call):
# a failed assertion is a FAIL, anything else an ERROR. Only the type: the exception itself would
# keep the check's frames, and the clients in them, alive past its teardown.
RAISED_KEY = pytest.StashKey[type[BaseException]]()
# The histories a check judged (fixtures.integrity's anomaly_reporter adds each as it is written).
ANOMALY_REPORTS_KEY = pytest.StashKey["list[AnomalyReport]"]()


@dataclass(frozen=True)
class HistoryResult:
    """One history a check judged, as results.json keeps it: its name, the count of each anomaly
    class found (none: a clean history), and its report and timeline, relative to the run folder."""

    name: str
    operations: int
    counts: dict[str, int]
    report: str
    plot: str | None


@dataclass
class CheckResult:
    nodeid: str
    area: str
    promise: str
    outcome: str  # passed, failed, skipped, xfailed, xpassed, error
    cell: str  # one of harness.verdicts.CELLS
    reason: str
    duration_s: float
    evidence: str | None = None  # path relative to the run folder
    wire_evidence: str | None = None  # the decoded raw-protocol exchanges (.wire.json), relative to the run folder
    promises: list[str] = field(default_factory=list)  # ids in harness/promises.toml
    apis: list[str] = field(default_factory=list)  # what the check's raw client exchanged: "Fetch v12"
    history: list[HistoryResult] = field(default_factory=list)  # the client histories it judged
    defect: str | None = None  # a FAIL's defect key (harness.reporting.defects); None for any other cell


@dataclass
class RunResults:
    target: str
    environment: dict[str, str] = field(default_factory=dict)
    fingerprint: dict[str, Any] | None = None
    checks: dict[str, CheckResult] = field(default_factory=dict)
    failures: dict[str, defects.Failure] = field(default_factory=dict)  # what each FAIL's defect key is read from

    def record(self, item: pytest.Item, report: pytest.TestReport, run_dir: Path) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed) or (
            report.when == "teardown" and report.failed
        ):
            outcome = _outcome(report)
            previous = self.checks.get(item.nodeid)
            if previous is not None and previous.outcome in ("failed", "error"):
                return
            reason = _reason(report)
            raised = item.stash.get(RAISED_KEY, None) if report.when == "call" else None
            cell = classify(outcome, reason, raised)
            result = CheckResult(item.nodeid, area_of(item), promise_of(item), outcome, cell, reason,
                                 round(report.duration, 3), promises=promises_of(item), apis=_apis(item),
                                 history=[history_result(h, run_dir) for h in item.stash.get(ANOMALY_REPORTS_KEY, [])])
            if cell != "pass":
                result.evidence = _write_evidence(run_dir, item.nodeid, report)
                result.wire_evidence = _write_wire_evidence(run_dir, item)
            if cell == "fail":
                self.failures[item.nodeid] = defects.Failure(
                    item.nodeid, _failure_message(report) or reason, tuple(result.promises), tuple(result.apis),
                    same_defect_as_of(item))
            self.checks[item.nodeid] = result

    def summary(self) -> dict[str, Any]:
        return summarize(c.cell for c in self.checks.values())

    def group_defects(self) -> list[defects.Defect]:
        """The run's FAILs grouped by cause; each FAIL check gets its defect key."""
        fails = [c for c in self.checks.values() if c.cell == "fail"]
        found = defects.group(self.failures.get(c.nodeid) or defects.Failure(
            c.nodeid, c.reason, tuple(c.promises), tuple(c.apis)) for c in fails)
        keys = defects.keys_of(found)
        for c in self.checks.values():
            c.defect = keys.get(c.nodeid)
        return found

    def write(self, path: Path) -> None:
        found = self.group_defects()
        data = {"schema_version": SCHEMA_VERSION, "kcts": kcts_build(), "target": self.target,
                "environment": self.environment, "fingerprint": self.fingerprint,
                "summary": {**self.summary(), "defects": len(found)},
                "checks": [asdict(c) for c in self.checks.values()], "defects": [d.to_json() for d in found]}
        path.write_text(json.dumps(data, indent=1))


def _relative(path: Path, run_dir: Path) -> str:
    try:
        return str(path.resolve().relative_to(run_dir.resolve()))
    except ValueError:  # written outside the run folder (a test's tmp_path): named as it is
        return str(path)


def history_result(h: AnomalyReport, run_dir: Path) -> HistoryResult:
    return HistoryResult(h.name, h.operations, h.counts, _relative(h.report, run_dir),
                         None if h.plot is None else _relative(h.plot, run_dir))


def promises_of(item: pytest.Item) -> list[str]:
    """The promise ids a check names with @pytest.mark.promise, in order, each once."""
    ids = [i for m in item.iter_markers("promise") for i in m.args]
    return list(dict.fromkeys(ids))


def same_defect_as_of(item: pytest.Item) -> tuple[str, ...]:
    """The promise ids a check names with @pytest.mark.same_defect_as: a FAIL of one of them is the
    cause of its own FAIL (harness.reporting.defects)."""
    return tuple(dict.fromkeys(i for m in item.iter_markers("same_defect_as") for i in m.args))


def _apis(item: pytest.Item) -> list[str]:
    recorder = wire.recorder_of(item)
    if recorder is None:
        return []
    return [f"{api} v{version}" for api, version in sorted(recorder.apis)]


@cache
def kcts_build() -> dict[str, Any]:
    """The kcts that wrote a file: its version, and the commit of its checkout (None outside git)."""
    try:
        version = metadata.version("kcts")
    except metadata.PackageNotFoundError:
        version = "unknown"
    commit: str | None = None
    dirty: bool | None = None
    if layout.CHECKOUT is None:  # an installed kcts: its version is all there is
        return {"version": version, "commit": commit, "dirty": dirty}
    git = ["git", "-C", str(layout.CHECKOUT)]
    try:
        head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode == 0:
            commit = head.stdout.strip()
            status = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=10)
            dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {"version": version, "commit": commit, "dirty": dirty}


def summarize(cells: Iterable[str]) -> dict[str, Any]:
    """How deep a run went: its checks, how many reached a verdict (harness.verdicts.JUDGED), and
    the count of each cell. Cells outside CELLS (the matrix's "absent") are counted apart."""
    counts = dict.fromkeys(CELLS, 0)
    absent = 0
    for cell in cells:
        if cell in counts:
            counts[cell] += 1
        else:
            absent += 1
    total = sum(counts.values())
    judged = sum(counts[c] for c in JUDGED)
    out: dict[str, Any] = {"total": total, "judged": judged,
                           "judged_fraction": round(judged / total, 4) if total else 0.0, "counts": counts}
    if absent:
        out["absent"] = absent
    return out


def area_of(item: pytest.Item) -> str:
    for area in AREAS:
        if item.get_closest_marker(area.marker):
            return area.marker
    return OTHER.marker


def promise_of(item: pytest.Item) -> str:
    """The promise a check names: its docstring's first sentence, on one line."""
    doc = getattr(getattr(item, "function", None), "__doc__", None) or ""
    text = " ".join(doc.split())
    first = re.split(r"(?<=\.)\s+(?=[A-Z])", text, maxsplit=1)[0] if text else ""
    if len(first) > 240:
        first = first[:237].rsplit(" ", 1)[0] + "..."
    return first or item.name.removeprefix("test_").replace("_", " ")


def _outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    if report.when != "call" and report.failed:
        return "error"
    return report.outcome


def _reason(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return str(report.wasxfail)
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    if report.failed:
        text = str(report.longrepr)
        errors = [ln for ln in text.splitlines() if ln.startswith("E ")]
        return " ".join(ln[2:].strip() for ln in errors[:3])[:500] or text.splitlines()[-1][:500]
    return ""


def _failure_message(report: pytest.TestReport) -> str:
    """The exception a failed check raised, its whole message as pytest reported it (the reason keeps
    its first lines only, and of a chain the first exception's)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    return str(getattr(crash, "message", "") or "")


def evidence_stem(nodeid: str) -> str:
    """The file name a check's evidence files share (`.txt`, `.wire.json`)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid)[:180]


def _write_wire_evidence(run_dir: Path, item: pytest.Item) -> str | None:
    recorder = wire.recorder_of(item)
    if recorder is None:
        return None
    path = recorder.write(run_dir / "evidence" / f"{evidence_stem(item.nodeid)}.wire.json", item.nodeid)
    wire.attach(path)
    return str(path.relative_to(run_dir))


def _write_evidence(run_dir: Path, nodeid: str, report: pytest.TestReport) -> str:
    path = run_dir / "evidence" / f"{evidence_stem(nodeid)}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [f"{nodeid}\noutcome: {_outcome(report)}\n", str(report.longrepr or "")]
    parts += [f"\n----- {title} -----\n{text}" for title, text in report.sections]
    path.write_text("\n".join(parts))
    return str(path.relative_to(run_dir))
