"""Per-check results of one run, as the matrix reads them: `results.json` and one evidence file per non-pass."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

from harness.areas import AREAS, OTHER
from harness.verdicts import classify


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


@dataclass
class RunResults:
    target: str
    environment: dict[str, str] = field(default_factory=dict)
    checks: dict[str, CheckResult] = field(default_factory=dict)

    def record(self, item: pytest.Item, report: pytest.TestReport, run_dir: Path) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed) or (
            report.when == "teardown" and report.failed
        ):
            outcome = _outcome(report)
            previous = self.checks.get(item.nodeid)
            if previous is not None and previous.outcome in ("failed", "error"):
                return
            reason = _reason(report)
            cell = classify("failed" if outcome == "error" else outcome, reason)
            result = CheckResult(item.nodeid, area_of(item), promise_of(item), outcome, cell, reason,
                                 round(report.duration, 3))
            if cell != "pass":
                result.evidence = _write_evidence(run_dir, item.nodeid, report)
            self.checks[item.nodeid] = result

    def write(self, path: Path) -> None:
        data = {"target": self.target, "environment": self.environment,
                "checks": [asdict(c) for c in self.checks.values()]}
        path.write_text(json.dumps(data, indent=1))


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


def _write_evidence(run_dir: Path, nodeid: str, report: pytest.TestReport) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid)[:180] + ".txt"
    path = run_dir / "evidence" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [f"{nodeid}\noutcome: {_outcome(report)}\n", str(report.longrepr or "")]
    parts += [f"\n----- {title} -----\n{text}" for title, text in report.sections]
    path.write_text("\n".join(parts))
    return str(path.relative_to(run_dir))
