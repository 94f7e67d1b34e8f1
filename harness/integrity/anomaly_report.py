"""What a check's anomaly checks found, as the run keeps it and a reader sees it: per anomaly class its
count and first examples (harness.integrity.anomaly_checks), and the history's timeline
(harness.integrity.timeline_plot).

Three files beside the history they judge, `<name>.anomalies.json` (for machines), `<name>.anomalies.txt`
(for people) and `<name>.timeline.png`, each attached to the check's Allure result; the check's entry
in results.json names them with the counts (harness.reporting.results), and the matrix page shows the
counts in the check's cell.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness import attach
from harness.histories.history import Operation
from harness.integrity import timeline_plot
from harness.integrity.timeline_plot import NemesisEvent

if TYPE_CHECKING:  # types only: the report is written without Spark or the judge's numpy and Arrow
    from harness.integrity.anomaly_checks import AnomalyFindings, Case


@dataclass(frozen=True)
class AnomalyReport:
    """One judged history: its name (what it stands for: a scene, a topic), where it is, how many
    operations it holds, the findings, and the files written of them."""

    name: str
    history: Path  # the folder of its process files
    operations: int
    findings: AnomalyFindings
    report: Path  # <name>.anomalies.json
    text: Path  # <name>.anomalies.txt
    plot: Path | None  # <name>.timeline.png; None when it could not be drawn (the reason is in the text)

    @property
    def counts(self) -> dict[str, int]:
        """Count per class found, in the order of Jepsen's classes; a class not found is absent."""
        return self.findings.found


def case_json(case: Case) -> dict[str, object]:
    return {"topic": case.topic, "partition": case.partition, "offset": case.offset, "value": case.value,
            "detail": case.detail, "ops": [asdict(o) for o in case.ops]}


def to_json(report: AnomalyReport) -> dict[str, object]:
    f = report.findings
    return {
        "name": report.name, "history": str(report.history), "operations": report.operations,
        "counts": report.counts,
        "examples": {k.value: [case_json(c) for c in cases] for k, cases in f.examples.items()},
        "plot": None if report.plot is None else report.plot.name,
    }


def summary(report: AnomalyReport, note: str = "") -> str:
    """The findings to read: a line per class with its count, then each class's first examples."""
    f = report.findings
    found = report.counts
    lines = [f"Anomaly checks of {report.name}: "
             + (", ".join(f"{k} {n}" for k, n in found.items()) if found else "nothing found"),
             f"history: {report.history} ({report.operations} operations)"]
    if report.plot is not None:
        lines.append(f"timeline: {report.plot}")
    if note:
        lines.append(note)
    if found:
        width = max(len("class"), *(len(k) for k in found))
        lines += ["", f"{'class'.ljust(width)}  count", *(f"{k.ljust(width)}  {n}" for k, n in found.items())]
    for kind, cases in f.examples.items():
        lines += ["", f"{kind.value}: first {len(cases)} of {f.count(kind)}", *(f"  {c}" for c in cases)]
    return "\n".join(lines) + "\n"


def file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")[:150] or "history"


def write(name: str, findings: AnomalyFindings, ops: Sequence[Operation], history: Path,
          events: Sequence[NemesisEvent] = (), out_dir: Path | None = None,
          max_per_lane: int = timeline_plot.MAX_PER_LANE) -> AnomalyReport:
    """The three files of `findings` over `ops` (the history in `history`, read back), written into
    `out_dir` (the history's folder unless told) and attached to the running check's Allure result."""
    out = out_dir or history
    out.mkdir(parents=True, exist_ok=True)
    stem = file_stem(name)
    picture = out / f"{stem}.timeline.png"
    plot: Path | None = picture
    note = ""
    try:
        drawn = timeline_plot.write(picture, ops, findings, events, name, max_per_lane)
        if drawn.left_out:
            note = f"timeline: {drawn.total - drawn.left_out} of {drawn.total} sends and polls drawn (sampled)"
    except (OSError, ValueError, RuntimeError) as exc:
        # A picture that cannot be drawn must not hide the findings: they are written all the same.
        note, plot = f"timeline not drawn: {type(exc).__name__}: {exc}", None
    report = AnomalyReport(name, history, len(ops), findings, out / f"{stem}.anomalies.json",
                           out / f"{stem}.anomalies.txt", plot)
    report.report.write_text(json.dumps(to_json(report), indent=1))
    report.text.write_text(summary(report, note))
    attach.file(report.text, f"anomaly checks of {name}: count and first examples per class")
    attach.file(report.report, f"anomaly checks of {name} (JSON)", "json")
    if report.plot is not None:
        attach.file(report.plot, f"history timeline of {name}", "png")
    return report
