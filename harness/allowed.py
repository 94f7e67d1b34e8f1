"""Allowed behaviour staged: `kcts allowed [ID...] [--list]`.

Each entry of harness/allowed.toml is something a correct broker may do that Apache Kafka on one
machine seldom does (a retriable error once, a throttle, a short Fetch, a topic not yet known, a
lower version range), with the text that allows it and the proxy rules that make a local Apache Kafka
do it. An item runs the test files that exercise those APIs against that cluster seen through the
proxy (`kcts run --allowed ID`, which loads harness.proxy.replaying; the run machinery is
harness.replay's), its pytest output into `pytest.log` in the run's folder, then reads its
results.json. It is OK with 0 FAIL and 0 ERROR: allowed behaviour is never a broken promise, so a
FAIL there is a check that judges more than the texts allow, or a rule that makes the broker do what
they do not allow. An entry without rules is listed as not staged, never as passing.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from pathlib import Path

from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION
from harness.proxy.allowed import CATALOGUE, Allowed, load
from harness.replay import LOG, CheckVerdict, Run, run_entry
from harness.verdicts import JUDGED

__all__ = ["CATALOGUE", "Allowed", "AllowedOutcome", "load", "main", "run_one"]

DETAILS = "allowed.md"  # the item, its text and every FAIL or ERROR with its reason, in its folder
ACTED = "proxy rule: "  # how harness.proxy.replaying's summary names each rule and how often it acted
# The cells the one line always shows, in its order, and the word for each.
SHOWN = (("pass", "pass"), ("fail", "fail"), ("error", "error"), ("not-supported", "not-supported"),
         ("target-refused", "refused"))


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


@dataclass(frozen=True)
class AllowedOutcome:
    item: Allowed
    run: Run | None  # None: not staged, not run
    acted: tuple[str, ...] = ()  # each rule and how often it acted, from the run's own summary

    @property
    def cells(self) -> dict[str, int]:
        return self.run.cells() if self.run is not None else {}

    @property
    def problem(self) -> str:
        """Why the run gave no verdict on the item (no results, no checks); "" where it did."""
        if self.run is None:
            return ""
        if self.run.checks is None:
            return f"the run wrote no results.json (exit {self.run.exit_code})"
        return "" if self.run.checks else "no check ran"

    @property
    def broken(self) -> tuple[CheckVerdict, ...]:
        """The checks that FAILed or ERRORed."""
        return tuple(c for c in (self.run.checks or ()) if c.cell in ("fail", "error")) if self.run else ()

    @property
    def ok(self) -> bool:
        return self.run is not None and not self.problem and not self.broken

    @property
    def judged(self) -> float:
        """The judged fraction: checks whose cell is a verdict (harness.verdicts.JUDGED) over all checks."""
        total = sum(self.cells.values())
        return sum(n for cell, n in self.cells.items() if cell in JUDGED) / total if total else 0.0

    def render(self) -> str:
        if self.run is None:
            return f"NOT STAGED  {self.item.id}: {self.item.how}"
        cells = self.cells
        counts = [f"{cells.get(cell, 0)} {word}" for cell, word in SHOWN]
        counts += [f"{n} {cell}" for cell, n in sorted(cells.items()) if cell not in dict(SHOWN)]
        word = "OK" if self.ok else "BROKEN"
        problem = f" ({self.problem})" if self.problem else ""
        return (f"{word:<6}  {self.item.id}: {', '.join(counts)}; judged {self.judged:.0%}{problem}; "
                f"{self.run.seconds:.0f} s; {self.run.run_dir}")

    def details(self) -> str:
        """The item and what its run gave, as Markdown for the run's folder."""
        item = self.item
        lines = [f"# Allowed behaviour: {item.id}", "", item.title, "", f"- source: {item.source}",
                 f"- quote: \"{item.quote}\"", "- rules: " + "; ".join(r.describe() for r in item.rules),
                 f"- tests: {' '.join(item.tests)}" + (f" (-k {item.select!r})" if item.select else ""),
                 "", f"    {self.render()}", ""]
        lines += [f"- {line}" for line in self.acted] + ([""] if self.acted else [])
        for c in self.broken:
            lines.append(f"- {c.cell.upper()} `{c.nodeid}`: {first_line(c.reason)}")
        return "\n".join(lines) + "\n"


def run_one(item: Allowed, run_id: str, reports: Path, kafka_version: str, extra: list[str]) -> AllowedOutcome:
    """One item as a `kcts run` of its own (a fresh cluster, its own report folder)."""
    if not item.staged:
        return AllowedOutcome(item, None)
    log = reports / run_id / LOG
    run = run_entry(f"allowed: {item.id}", ["--allowed", item.id], item.tests, item.select, run_id, reports,
                    kafka_version, extra, log=log)
    said = log.read_text(errors="replace").splitlines() if log.is_file() else []
    outcome = AllowedOutcome(item, run, tuple(line for line in said if line.startswith(ACTED)))
    if run.run_dir.is_dir():
        (run.run_dir / DETAILS).write_text(outcome.details())
    return outcome


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcts allowed", description="stage behaviour the KIP texts and the protocol "
                                     "allow a correct broker, through the protocol proxy in front of a local Apache "
                                     "Kafka cluster; each item OK with 0 FAIL and 0 ERROR")
    parser.add_argument("ids", nargs="*", help="item ids of harness/allowed.toml (default: all)")
    parser.add_argument("--list", action="store_true", help="list the items, their sources and rules, and exit")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION)
    parser.add_argument("--reports-dir", type=Path, default=Path(os.environ.get("KCTS_REPORTS", "reports")))
    parser.add_argument("--stamp", default=os.environ.get("KCTS_RUN_STAMP") or time.strftime("%Y%m%d-%H%M%S"))
    opts, extra = parser.parse_known_args(args)
    items = load()
    unknown = [i for i in opts.ids if i not in items]
    if unknown:
        raise KctsError(f"no item {', '.join(unknown)} in {CATALOGUE}; known: {', '.join(items)}")
    chosen = [items[i] for i in opts.ids] if opts.ids else list(items.values())
    if opts.list:
        for a in chosen:
            staged = "; ".join(r.describe() for r in a.rules) if a.staged else f"not staged: {a.how}"
            print(f"{a.id}: {a.title}\n    source: {a.source}\n    {staged}\n    tests: {' '.join(a.tests)}"
                  + (f" -k {a.select!r}" if a.select else ""))
        return 0
    reports = opts.reports_dir.resolve()
    outcomes = []
    for a in chosen:
        outcome = run_one(a, f"allowed-{a.id}-{opts.stamp}", reports, opts.kafka_version, extra)
        print(outcome.render(), flush=True)
        outcomes.append(outcome)
    staged = [o for o in outcomes if o.run is not None]
    print(f"kcts allowed: {sum(o.ok for o in staged)} of {len(staged)} staged items OK"
          + (f"; {len(outcomes) - len(staged)} not staged" if len(staged) < len(outcomes) else ""))
    return 0 if all(o.ok for o in staged) else 1
