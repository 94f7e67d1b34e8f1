"""Replays of documented broker bugs: `kcts replay [ID...]`.

Each entry of harness/replays.toml is a bug a Kafka-compatible broker shipped, with its public link,
the promise of harness/promises.toml it broke, the proxy rules that make Apache Kafka answer as that
broker did (harness/proxy/rules.py), and the test files that bear on the promise. A replay runs those
files against a local Apache Kafka cluster seen through the proxy (`kcts run --replay ID`, which
loads harness.proxy.replaying), then reads the run's results.json: CAUGHT when a check of the broken
promise FAILed, MISSED otherwise. A missed replay is a missing check.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.kafka.dist import DEFAULT_VERSION
from harness.proxy.replays import CATALOGUE, Replay, RuleSpec, load

__all__ = ["CATALOGUE", "DEFAULT_VERSION", "Replay", "RuleSpec", "judge", "load", "main", "run_one"]

PLUGIN = "harness.proxy.replaying"


# -- reading a run ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    replay: Replay
    caught_by: tuple[str, ...]  # checks of the broken promise that FAILed
    cells: dict[str, int]  # cell -> how many checks gave it
    run_dir: Path
    exit_code: int
    seconds: float
    problem: str = ""  # why there is no verdict (no results.json)

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)

    def render(self) -> str:
        word = "CAUGHT" if self.caught else "MISSED"
        counts = ", ".join(f"{n} {cell}" for cell, n in sorted(self.cells.items())) or "no checks"
        head = f"{word}  {self.replay.id}: {self.replay.title} ({self.replay.link})"
        lines = [head, f"    promise {self.replay.promise}; rules {', '.join(r.describe() for r in self.replay.rules)}"]
        if self.caught:
            lines.append("    caught by " + ", ".join(self.caught_by))
        else:
            lines.append("    no check of the promise failed: a missing check" + (f" ({self.problem})" if self.problem
                                                                                   else ""))
        lines.append(f"    {counts}; {self.seconds:.0f} s; {self.run_dir}")
        return "\n".join(lines)


def judge(replay: Replay, results: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, int]]:
    """(the FAILed checks of the replay's promise, the count of each cell) from a results.json."""
    cells: dict[str, int] = {}
    caught = []
    for check in results.get("checks", []):
        cell = check.get("cell", "")
        cells[cell] = cells.get(cell, 0) + 1
        if cell == "fail" and replay.promise in check.get("promises", []):
            caught.append(check["nodeid"].split("::", 1)[-1])
    return tuple(caught), cells


def run_one(replay: Replay, run_id: str, reports: Path, kafka_version: str, extra: list[str]) -> Outcome:
    """One replay as a `kcts run` of its own (a fresh cluster, its own report folder)."""
    cmd = [sys.executable, "-m", "harness.cli", "run", "--kafka-version", kafka_version, "-p", PLUGIN,
           "--replay", replay.id, "--run-id", run_id, "--reports-dir", str(reports), *replay.tests]
    if replay.select:
        cmd += ["-k", replay.select]
    cmd += extra
    print(f"kcts replay: {replay.id}: {' '.join(cmd[2:])}", flush=True)
    started = time.monotonic()
    # From the caller's directory: `kcts run` finds suites/ paths in the suite root (harness.layout).
    code = subprocess.call(cmd)
    seconds = time.monotonic() - started
    run_dir = reports / run_id
    path = run_dir / "results.json"
    if not path.is_file():
        return Outcome(replay, (), {}, run_dir, code, seconds, f"the run wrote no results.json (exit {code})")
    caught, cells = judge(replay, json.loads(path.read_text()))
    return Outcome(replay, caught, cells, run_dir, code, seconds)


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcts replay", description="replay documented broker bugs through the "
                                     "protocol proxy in front of a local Apache Kafka cluster; CAUGHT when a check "
                                     "of the promise each broke FAILs")
    parser.add_argument("ids", nargs="*", help="replay ids of harness/replays.toml (default: all)")
    parser.add_argument("--list", action="store_true", help="list the replays and exit")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION)
    parser.add_argument("--reports-dir", type=Path, default=Path(os.environ.get("KCTS_REPORTS", "reports")))
    parser.add_argument("--stamp", default=os.environ.get("KCTS_RUN_STAMP") or time.strftime("%Y%m%d-%H%M%S"))
    opts, extra = parser.parse_known_args(args)
    replays = load()
    unknown = [i for i in opts.ids if i not in replays]
    if unknown:
        raise KctsError(f"no replay {', '.join(unknown)} in {CATALOGUE}; known: {', '.join(replays)}")
    chosen = [replays[i] for i in opts.ids] if opts.ids else list(replays.values())
    if opts.list:
        for r in chosen:
            print(f"{r.id}: {r.title} ({r.link}); promise {r.promise}; tests {' '.join(r.tests)}")
        return 0
    reports = opts.reports_dir.resolve()
    outcomes = [run_one(r, f"replay-{r.id}-{opts.stamp}", reports, opts.kafka_version, extra) for r in chosen]
    print("\nkcts replay: " + f"{sum(o.caught for o in outcomes)} of {len(outcomes)} documented bugs caught")
    for o in outcomes:
        print(o.render())
    return 0 if all(o.caught for o in outcomes) else 1
