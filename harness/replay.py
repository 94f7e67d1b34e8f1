"""Replays of documented broker bugs: `kcts replay [ID...]`.

Each entry of harness/replays.toml is a bug a Kafka-compatible broker shipped, with its public link,
the promise of harness/promises.toml it broke, the proxy rules that make Apache Kafka answer as that
broker did (harness/proxy/rules/), and the test files that bear on the promise. A replay runs those
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

__all__ = [
    "CATALOGUE", "DEFAULT_VERSION", "CheckVerdict", "Replay", "RuleSpec", "Run", "count_cells", "judge", "load", "main",
    "run_entry", "run_one", "verdicts",
]

PLUGIN = "harness.proxy.replaying"


# -- one catalogue entry as a run of its own -----------------------------------------------------
@dataclass(frozen=True)
class CheckVerdict:
    """One check of a run as results.json gives it: its cell, the promises it checks, its reason."""

    nodeid: str
    cell: str
    promises: tuple[str, ...]
    reason: str


def count_cells(checks: tuple[CheckVerdict, ...]) -> dict[str, int]:
    """cell -> how many checks gave it."""
    out: dict[str, int] = {}
    for c in checks:
        out[c.cell] = out.get(c.cell, 0) + 1
    return out


def verdicts(results: dict[str, Any]) -> tuple[CheckVerdict, ...]:
    """The checks of a parsed results.json."""
    return tuple(CheckVerdict(c["nodeid"], c.get("cell", ""), tuple(c.get("promises", ())), c.get("reason", ""))
                 for c in results.get("checks", []))


LOG = "pytest.log"  # a catalogue run's pytest output, in its folder
DETAILS = "replay.md"  # the replay, its rules and what caught it, in its folder


@dataclass(frozen=True)
class Run:
    """What one `kcts run` of a catalogue entry left: its folder, exit code, time, and its checks (None
    where it wrote no results.json)."""

    run_dir: Path
    exit_code: int
    seconds: float
    checks: tuple[CheckVerdict, ...] | None

    def cells(self) -> dict[str, int]:
        return count_cells(self.checks or ())


def run_entry(name: str, option: list[str], tests: tuple[str, ...], select: str | None, run_id: str,
              reports: Path, kafka_version: str, extra: list[str], log: Path | None = None) -> Run:
    """One catalogue entry as a `kcts run` of its own (a fresh cluster, its own report folder), with
    `option` (`--replay ID`, `--allowed ID`) for the proxy plugin; its pytest output to the terminal,
    or into `log` where given."""
    cmd = [sys.executable, "-m", "harness.cli", "run", "--kafka-version", kafka_version, "-p", PLUGIN, *option,
           "--run-id", run_id, "--reports-dir", str(reports), *tests]
    if select:
        cmd += ["-k", select]
    cmd += extra
    run_dir = reports / run_id
    path = run_dir / "results.json"
    path.unlink(missing_ok=True)  # a run that writes none must not be read as an earlier one of that id
    started = time.monotonic()
    # From the caller's directory: `kcts run` finds suites/ paths in the suite root (harness.layout).
    if log is None:
        print(f"kcts {name}: kcts {' '.join(cmd[3:])}", flush=True)
        code = subprocess.call(cmd)
    else:
        run_dir.mkdir(parents=True, exist_ok=True)  # the run itself makes it too, and keeps what is there
        with log.open("w") as out:
            out.write(f"kcts {name}: kcts {' '.join(cmd[3:])}\n")
            out.flush()
            code = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - started
    checks = verdicts(json.loads(path.read_text())) if path.is_file() else None
    return Run(run_dir, code, seconds, checks)


# -- reading a replay's run -------------------------------------------------------------------
@dataclass(frozen=True)
class ReplayOutcome:
    replay: Replay
    caught_by: tuple[str, ...]  # checks of the broken promise that FAILed
    cells: dict[str, int]  # cell -> how many checks gave it
    run_dir: Path
    exit_code: int
    seconds: float
    problem: str = ""  # why there is no verdict (no results.json)
    client: str = ""  # the client the run judged, as results.json names it (a client replay's)

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)

    def render(self) -> str:
        """One line: the verdict, the bug and its link, what caught it (or why nothing did), the run folder
        (its pytest output in pytest.log there)."""
        word = "CAUGHT" if self.caught else "MISSED"
        counts = ", ".join(f"{n} {cell}" for cell, n in sorted(self.cells.items())) or "no checks"
        if self.caught:
            how = f"{len(self.caught_by)} FAIL of {self.replay.promise}"
        else:
            how = f"no FAIL of {self.replay.promise}" + (f" ({self.problem})" if self.problem else "")
        judged = self.client or self.replay.client_stack
        client = f" on {judged}" if judged else ""
        return (f"{word:<7}{self.replay.id}{client} ({self.replay.link}): {how}; {counts}; {self.seconds:.0f} s; "
                f"{self.run_dir}")

    def details(self) -> str:
        """replay.md in the run folder: the bug, its rules and the checks that caught it."""
        lines = [f"# Replay: {self.replay.id}", "", self.replay.title, "", f"- link: {self.replay.link}",
                 f"- promise: {self.replay.promise}",
                 *([f"- client: {self.client or self.replay.client_stack}"] if self.replay.client_stack else []),
                 f"- rules: {'; '.join(r.describe() for r in self.replay.rules)}",
                 f"- tests: {' '.join(self.replay.tests)}", "", "    " + self.render(), ""]
        lines += [f"- caught by `{c}`" for c in self.caught_by]
        return "\n".join(lines) + "\n"


def _caught_by(replay: Replay, checks: tuple[CheckVerdict, ...]) -> tuple[str, ...]:
    """The checks of the replay's promise that FAILed: an ERROR or another promise's FAIL is no catch."""
    return tuple(c.nodeid.split("::", 1)[-1] for c in checks if c.cell == "fail" and replay.promise in c.promises)


def judge(replay: Replay, results: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, int]]:
    """(the FAILed checks of the replay's promise, the count of each cell) from a results.json."""
    checks = verdicts(results)
    return _caught_by(replay, checks), count_cells(checks)


def run_one(replay: Replay, run_id: str, reports: Path, kafka_version: str, extra: list[str],
            client_stack: str | None = None) -> ReplayOutcome:
    """One replay as a `kcts run` of its own (a fresh cluster, its own report folder), its pytest output
    into pytest.log there and replay.md beside it. `client_stack` judges that stack instead of the
    entry's own (a client bug's rules against the release that fixed it)."""
    client = client_stack or replay.client_stack
    option = ["--replay", replay.id] + (["--client-stack", client] if client else [])
    run = run_entry(f"replay: {replay.id}", option, replay.tests, replay.select, run_id, reports,
                    kafka_version, extra, log=reports / run_id / LOG)
    if run.checks is None:
        outcome = ReplayOutcome(replay, (), {}, run.run_dir, run.exit_code, run.seconds,
                          f"the run wrote no results.json (exit {run.exit_code}; see {LOG} there)")
    else:
        outcome = ReplayOutcome(replay, _caught_by(replay, run.checks), run.cells(), run.run_dir, run.exit_code,
                          run.seconds, client=_client(run.run_dir) if client else "")
    if run.run_dir.is_dir():
        (run.run_dir / DETAILS).write_text(outcome.details())
    return outcome


def _client(run_dir: Path) -> str:
    """The client release a run judged, as its results.json names it."""
    return str(json.loads((run_dir / "results.json").read_text()).get("environment", {}).get("client") or "")


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcts replay", description="replay documented broker bugs through the "
                                     "protocol proxy in front of a local Apache Kafka cluster; CAUGHT when a check "
                                     "of the promise each broke FAILs")
    parser.add_argument("ids", nargs="*", help="replay ids of harness/replays.toml (default: all)")
    parser.add_argument("--list", action="store_true", help="list the replays and exit")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION)
    parser.add_argument("--reports-dir", type=Path, default=Path(os.environ.get("KCTS_REPORTS", "reports")))
    parser.add_argument("--client-stack", metavar="S[@VERSION]",
                        help="judge this client stack instead of each replay's own (a client bug's rules against "
                             "the release that fixed it: MISSED is the fix seen)")
    parser.add_argument("--stamp", default=os.environ.get("KCTS_RUN_STAMP") or time.strftime("%Y%m%d-%H%M%S"))
    opts, extra = parser.parse_known_args(args)
    replays = load()
    unknown = [i for i in opts.ids if i not in replays]
    if unknown:
        raise KctsError(f"no replay {', '.join(unknown)} in {CATALOGUE}; known: {', '.join(replays)}")
    chosen = [replays[i] for i in opts.ids] if opts.ids else list(replays.values())
    if opts.list:
        for r in chosen:
            client = f"; client {r.client_stack}" if r.client_stack else ""
            print(f"{r.id}: {r.title} ({r.link}); promise {r.promise}{client}; tests {' '.join(r.tests)}")
        return 0
    reports = opts.reports_dir.resolve()
    outcomes = []
    for r in chosen:
        outcome = run_one(r, f"replay-{r.id}-{opts.stamp}", reports, opts.kafka_version, extra, opts.client_stack)
        print(outcome.render(), flush=True)
        outcomes.append(outcome)
    print(f"kcts replay: {sum(o.caught for o in outcomes)} of {len(outcomes)} documented bugs caught")
    return 0 if all(o.caught for o in outcomes) else 1
