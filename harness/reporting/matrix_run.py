"""`kcts matrix --targets 4.4.0,4.3.1,kfake,external:HOST:PORT [pytest args]`: one run per target, one matrix."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from harness.cluster.target import TargetSpec, from_profile, parse, secret_env, to_run_args
from harness.errors import KctsError
from harness.process.spawn import die_with_parent
from harness.reporting.matrix import Target, build, column_line, write_all
from harness.reporting.run_names import point_latest

LIVE = sys.stdout.isatty() and os.environ.get("CI", "").lower() not in ("1", "true", "yes")


def target_spec(text: str) -> TargetSpec:
    """One `--targets` entry: a short spelling (see harness.cluster.target) or a profile file."""
    return from_profile(Path(text)) if text.endswith(".toml") else parse(text)


def target_args(text: str) -> list[str]:
    """The `kcts run` arguments that select one target."""
    return to_run_args(target_spec(text))


def soak_title(folder: Path) -> str:
    """A soak column's title: its id and how many runs, e.g. "soak10-gate (10 runs)"."""
    doc = json.loads((folder / "soak.json").read_text())
    return f"{doc.get('soak_id', folder.name)} ({doc.get('repeat', '?')} runs)"


def slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec)


@dataclass(frozen=True)
class ClientAxis:
    """Client versions as columns of their own. Each column is a client-only run (`kcts run
    --client-stack S`) of one stack: a librdkafka release (confluent-kafka from PyPI), a Java
    kafka-clients release, franz-go, or any stack of harness.clients.stacks.registry (`stacks`, each
    "S" or "S@VERSION"). With none given, each target runs once, whole."""

    java: list[str] = field(default_factory=list)
    librdkafka: list[str] = field(default_factory=list)
    go: bool = False
    stacks: list[str] = field(default_factory=list)

    def columns(self, spec: str) -> list[tuple[str, list[str]]]:
        """(column title, extra `kcts run` arguments) for one target."""
        from harness.clients.stacks.franz_go import module_version as go_module_version

        cols = [(f"{spec} · librdkafka {v}", ["--librdkafka", v, "--client-stack", "librdkafka"])
                for v in self.librdkafka]
        cols += [(f"{spec} · java {v}", ["--java-clients", v, "--client-stack", "java"]) for v in self.java]
        if self.go:
            cols.append((f"{spec} · franz-go {go_module_version()}", ["--go-client", "--client-stack", "franz-go"]))
        cols += [(f"{spec} · {stack}", ["--client-stack", stack]) for stack in self.stacks]
        return cols or [(spec, [])]


def run_matrix(targets: list[str], pytest_args: list[str], reports: Path = Path("reports"),
               clients: ClientAxis | None = None, soaks: Sequence[Path] = (), jobs: int = 1) -> Path:
    """Run the suites against every target (one pytest process each, per client column; `jobs` of them
    at once) and write the matrix files."""
    if jobs < 1:
        raise KctsError(f"--jobs {jobs}: give 1 or more columns to run at once")
    clients = clients or ClientAxis()
    selected = [(title, target_spec(text), extra) for text in targets  # bad specs fail before any run
                for title, extra in clients.columns(text)]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = reports / f"matrix-{stamp}"
    (folder / "targets").mkdir(parents=True, exist_ok=True)
    before = previous_durations(reports, folder)
    names = [slug(spec) for spec, _, _ in selected]

    def column(index: int) -> tuple[Target, dict]:
        spec, target, extra = selected[index]
        name = names[index]
        # Side by side, the columns' own estimates are all that is left: each counts its own time only.
        later = [] if jobs > 1 else names[index + 1:]

        def progress_line(state: RunProgress) -> str:
            return describe(state, f"[{index + 1}/{len(selected)}] {spec}", before.get(name),
                            [before.get(n) for n in later])

        return _run_column(folder, spec, target, extra, name, pytest_args, progress_line,
                           live=LIVE and jobs == 1, to_file=LIVE or jobs > 1)

    if jobs == 1:
        runs = [column(i) for i in range(len(selected))]
    else:
        # Each column is a process of its own with its own cluster, ports and reaper: only the machine's
        # room limits how many run at once. Their order in the matrix stays the command line's.
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            runs = list(pool.map(column, range(len(selected))))
    matrix = build(runs, [(soak_title(p), json.loads((p / "soak.json").read_text())) for p in soaks])
    paths = write_all(matrix, folder)
    point_latest(reports, folder.name)
    for p in paths:
        print(f"kcts matrix: wrote {p}")
    # Last, so that the depth of every target is what the terminal ends with.
    for t in matrix["targets"]:
        print(f"kcts matrix: {column_line(matrix, t['name'])}", flush=True)
    return folder


def _run_column(folder: Path, spec: str, target: TargetSpec, extra: list[str], name: str, pytest_args: list[str],
                progress_line: Callable[[RunProgress], str], live: bool, to_file: bool) -> tuple[Target, dict]:
    """One column's `kcts run`, watched to its end (a live line, or a plain line now and then); its output
    into its log file or this process's; its results (or an empty column saying why)."""
    env = {**os.environ, "KCTS_NO_LATEST": "1", **secret_env(target)}
    cmd = [sys.executable, "-m", "harness.cli", "run", *to_run_args(target), *extra,
           "--reports-dir", str(folder / "targets"), "--run-id", name, *pytest_args]
    print(f"kcts matrix: {spec}: {' '.join(cmd[3:])}", flush=True)
    # Each target's run dies with the matrix run (and takes its brokers with it: it has its own reaper).
    # On a terminal the run's own output goes to its folder and one live line shows where it is;
    # elsewhere (CI) the output is kept in the log, with a progress line now and then; columns run side
    # by side each keep their output in their folder, so that their lines do not interleave.
    log = folder / "targets" / f"{name}.pytest.log"
    with open(log, "wb") if to_file else open(os.devnull, "wb") as out:
        proc = subprocess.Popen(cmd, env=env, preexec_fn=die_with_parent,
                                **({"stdout": out, "stderr": subprocess.STDOUT} if to_file else {}))
        code = watch(proc, folder / "targets" / name / "progress.jsonl", progress_line, live=live)
    if to_file:
        print(f"kcts matrix: {spec}: its output is in {log}", flush=True)
    results = folder / "targets" / name / "results.json"
    if not results.exists():
        print(f"kcts matrix: {spec}: no results (exit {code}); its column shows nothing ran", flush=True)
        return Target(spec, f"targets/{name}"), {"target": spec, "environment": {"error": f"run exited {code} before "
                                                                                     "any check"}, "checks": []}
    return Target(spec, f"targets/{name}"), json.loads(results.read_text())


@dataclass(frozen=True)
class RunProgress:
    """How far one target's run has got, from its progress.jsonl (written by the pytest plugin)."""

    collected: int | None
    done: int
    elapsed_s: float
    failed: int


def read_progress(path: Path) -> RunProgress:
    collected, done, failed, elapsed = None, 0, 0, 0.0
    try:
        lines = path.read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a line being written
        elapsed = float(item.get("elapsed_s", elapsed))
        if "collected" in item:
            collected = int(item["collected"])
        elif "nodeid" in item:
            done += 1
            failed += item.get("cell") in ("fail", "error")
    return RunProgress(collected, done, elapsed, failed)


def previous_durations(reports: Path, current: Path) -> dict[str, float]:
    """Each target's wall time in the newest earlier matrix that ran it: the last elapsed_s of its
    progress.jsonl, or (a matrix from before progress files) the sum of its checks' durations."""
    out: dict[str, float] = {}
    for folder in sorted(reports.glob("matrix-*"), reverse=True):
        if folder.resolve() == current.resolve():
            continue
        for target in sorted((folder / "targets").glob("*")):
            if target.name in out:
                continue
            if (target / "progress.jsonl").exists():
                out[target.name] = read_progress(target / "progress.jsonl").elapsed_s
            elif (target / "results.json").exists():
                try:
                    checks = json.loads((target / "results.json").read_text()).get("checks", [])
                except ValueError:
                    continue
                out[target.name] = sum(float(c.get("duration_s", 0)) for c in checks)
    return out


def _minutes(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def describe(state: RunProgress, title: str, previous: float | None, later: list[float | None]) -> str:
    """"[2/3] kfake: 31/64 checks (1 FAIL/ERROR), 2 min 10 s in; about 6 min 40 s left" """
    of = f"/{state.collected}" if state.collected is not None else ""
    bad = f" ({state.failed} FAIL/ERROR)" if state.failed else ""
    text = f"{title}: {state.done}{of} checks{bad}, {_minutes(state.elapsed_s)} in"
    if previous is None or any(t is None for t in later):
        return text + "; no earlier run of every target left to estimate the time from"
    left = max(previous - state.elapsed_s, 0.0) + sum(t for t in later if t is not None)
    return text + f"; about {_minutes(left)} left (from the last matrix's durations)"


def watch(proc: subprocess.Popen[bytes], progress: Path, line: Callable[[RunProgress], str],
          every: float = 30.0, live: bool | None = None) -> int:
    """Wait for one target's run, showing its progress: a live line on a terminal, a plain line every
    `every` seconds elsewhere (CI). Returns its exit code."""
    live = LIVE if live is None else live
    last = time.monotonic()
    while True:
        try:
            code = proc.wait(timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            pass
        state = read_progress(progress)
        if live:
            sys.stdout.write(f"\r\x1b[2K{line(state)}")
            sys.stdout.flush()
        elif time.monotonic() - last >= every:
            print(f"kcts matrix: {line(state)}", flush=True)
            last = time.monotonic()
    final = read_progress(progress)
    print(f"{chr(13) + chr(27) + '[2K' if live else ''}kcts matrix: {line(final)}; exit {code}", flush=True)
    return code
