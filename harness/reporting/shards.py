"""`kcts run --shards N`: one run's selection split by test module into N runs side by side, each a
`kcts run` with its own cluster, then joined into the one run folder a serial run would have written.

A module's checks share its module-scoped scenes, so a module is never split; the modules are dealt
to the shards by their durations in the newest earlier run that has them (the longest first, each to
the shard with the least so far), else by the durations kcts ships, else at the median. Every shard
writes `shards/shard-<i>/` in the run folder; the run folder then gets one results.json (each check's
evidence paths led into its shard's folder, the defects grouped again over every FAIL), one junit.xml
and one allure-results/.
Nothing about a verdict depends on the split: each check runs as it does serially, on a cluster of its
own shard's (`kcts compare` against a serial run is the proof the docs give).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.process.spawn import die_with_parent
from harness.reporting import defects
from harness.reporting.matrix_run import read_progress
from harness.reporting.results import summarize

PATH_FIELDS = ("evidence", "wire_evidence")
# Each module's time (junit.xml, set-up included) in a serial run of the whole suite on local Apache
# Kafka 4.4.0 (run v42-after-4.4.0), and of the harness's tests as the gate selects them (tests-bench-
# serial-20261130-052336): the weights where no earlier run is at hand, as in CI's fresh clone.
SHIPPED_DURATIONS = Path(__file__).with_name("module_durations.json")
PROGRESS_EVERY_S = 30.0


@dataclass(frozen=True)
class Shard:
    index: int
    modules: tuple[str, ...]
    weight: float


def modules_of(paths: Sequence[str]) -> list[str]:
    """The test modules (or node ids, kept whole) the selection names, each once, in order."""
    out: list[str] = []
    for arg in paths:
        head = Path(arg.split("::")[0])
        found = [arg] if "::" in arg or head.is_file() else [str(p) for p in sorted(head.rglob("test_*.py"))]
        out += [m for m in found if m not in out]
    return out


def durations(reports: Path, target: str | None = None, under: str = "suites/") -> dict[str, float]:
    """Each module's time in the earlier run that tells most: among the newest thirty under `reports`,
    the one of `target` (its environment's) with the most tests under `under` (the suites, or the
    harness's own tests/), else of any target; a module that run lacks, and every module when there is
    none, the time kcts ships. A module's time is its tests' in junit.xml, set-up included (a module's
    scene is set up in its first test), else its checks' own in results.json."""
    runs = sorted(reports.glob("*/results.json"), key=lambda p: p.stat().st_mtime, reverse=True)[:30]
    best: tuple[bool, int] = (False, 0)
    chosen: tuple[Path, list[dict[str, Any]]] | None = None
    for path in runs:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        checks = [c for c in data.get("checks", []) if str(c.get("nodeid", "")).startswith(under)]
        rank = ((data.get("environment") or {}).get("target") == target, len(checks))
        if rank > best:
            best, chosen = rank, (path.parent, checks)
    shipped = {k: float(v) for k, v in json.loads(SHIPPED_DURATIONS.read_text()).items() if k.startswith(under)}
    if chosen is None:  # a fresh machine
        return shipped
    # The newest runs are often narrower than the one being dealt (the gate's selection leaves the
    # integrity and partition areas out). Weighed at the median, the suite's longest module (integrity,
    # 92 s) was taken last and ran alone for a minute after the other shard had ended.
    return shipped | module_times(*chosen, under=under)


def module_times(run: Path, checks: list[dict[str, Any]], under: str = "suites/") -> dict[str, float]:
    """Each module's time in one run: from its junit.xml where it has one, else its checks' own."""
    out: dict[str, float] = {}
    try:
        for case in ET.parse(run / "junit.xml").getroot().iter("testcase"):
            module = str(case.get("classname", "")).replace(".", "/") + ".py"
            if module.startswith(under):
                out[module] = out.get(module, 0.0) + float(case.get("time") or 0.0)
    except (OSError, ET.ParseError, ValueError):
        out = {}
    if out:
        return out
    for c in checks:
        module = str(c["nodeid"]).split("::")[0]
        out[module] = out.get(module, 0.0) + float(c.get("duration_s") or 0.0)
    return out


@dataclass(frozen=True)
class Unit:
    """Modules that run in one process: one module, or those sharing a session cluster."""

    weight: float
    modules: tuple[str, ...]


def units(modules: Sequence[str], known: dict[str, float],
          together: Sequence[Sequence[str]] = ()) -> list[Unit]:
    """The modules as units, the longest first; the modules of each group in `together` (those sharing
    a session cluster) are one unit."""
    def key(module: str) -> str:  # results.json names a module from the repository's root
        tail = module.split("::")[0]
        for root in ("suites/", "tests/"):
            if root in tail:
                return tail[tail.index(root):]
        return tail

    median = statistics.median(known.values()) if known else 1.0
    grouped = {m: i for i, group in enumerate(together) for m in group}
    found: dict[object, list[str]] = {}
    for m in modules:
        found.setdefault(("group", grouped[m]) if m in grouped else m, []).append(m)
    weighted = [Unit(sum(known.get(key(m), median) for m in unit), tuple(unit)) for unit in found.values()]
    return sorted(weighted, key=lambda u: -u.weight)


def deal(modules: Sequence[str], known: dict[str, float], n: int,
         together: Sequence[Sequence[str]] = ()) -> list[Shard]:
    """The modules dealt to `n` shards, the longest unit first (`units`), each to the lightest shard so far."""
    loads: list[list[str]] = [[] for _ in range(n)]
    weights = [0.0] * n
    for unit in units(modules, known, together):
        i = weights.index(min(weights))
        loads[i] += unit.modules
        weights[i] += unit.weight
    return [Shard(i, tuple(mods), weights[i]) for i, mods in enumerate(loads) if mods]


def pool_args(folder: Path, known: dict[str, float], n: int) -> list[list[str]]:
    """Each of `n` shards' pytest options to take modules from one pool (harness/plugin/shard.py), weighed by
    `known`: the weights written to `folder`, and the pool made empty there, once for all of them (a pool
    left by an earlier run of the same run id holds that run's taken units, and would leave this one
    nothing to run)."""
    weights = folder / "weights.json"
    weights.write_text(json.dumps(known, indent=1))
    pool = folder / "pool"
    shutil.rmtree(pool, ignore_errors=True)
    pool.mkdir(parents=True)
    return [["--shard", f"{i}/{n}", "--shard-weights", str(weights), "--shard-pool", str(pool)] for i in range(n)]


def run_sharded(n: int, target_args: list[str], selection: list[str], run_dir: Path, reports: Path,
                target: str | None = None) -> int:
    """Run the selection in `n` shards side by side, each taking modules from a pool they share (the longest
    first by the target's earlier runs, `target` its label; harness/plugin/shard.py), and join them into
    `run_dir`; pytest's exit code of the whole (0 only when every shard's is 0, or 5 where none selected
    anything)."""
    modules = modules_of(selection)
    if not modules:
        raise KctsError(f"--shards {n}: the selection {selection} names no test module")
    folder = run_dir / "shards"
    folder.mkdir(parents=True, exist_ok=True)
    pooled = pool_args(folder, durations(reports, target), n)
    print(f"kcts: {len(modules)} modules in {n} shards, each taking the next module when it is ready for one, "
          f"the longest first by the last run; their output in {folder}/shard-<i>.log", flush=True)
    procs = start([[sys.executable, "-m", "harness.cli", "run", *target_args, "--reports-dir", str(folder),
                    "--run-id", f"shard-{i}", *args, *selection] for i, args in enumerate(pooled)], folder)
    codes = wait_all(procs, folder, pooled=True)
    join(run_dir, [folder / f"shard-{i}" for i in range(n)])
    return exit_code(codes)


def start(commands: Sequence[Sequence[str]], folder: Path) -> list[subprocess.Popen[bytes]]:
    """Command i (shard i's run, writing `folder`/shard-<i>/) started, its output in `folder`/shard-<i>.log;
    each dies with this process."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "KCTS_NO_LATEST": "1"}
    procs: list[subprocess.Popen[bytes]] = []
    for i, cmd in enumerate(commands):
        with open(folder / f"shard-{i}.log", "wb") as log:
            procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                          preexec_fn=die_with_parent))
    return procs


def exit_code(codes: Sequence[int]) -> int:
    """pytest's exit code of the whole: the worst shard's, 5 only where no shard selected anything. A shard
    ended by a signal (a negative code: its tests unrun, its results missing from the join) is the
    shell's 128 + the signal's number, never a pass."""
    ran = [128 - c if c < 0 else c for c in codes if c != 5]
    return 5 if not ran else max(ran)


def wait_all(procs: list[subprocess.Popen[bytes]], folder: Path, pooled: bool = False) -> list[int]:
    """Each shard's exit code, with a line on where they are every PROGRESS_EVERY_S (`pooled`: the shards
    take their tests from one pool, which each counts as collected); on Ctrl-C (which reaches them too)
    each is given its own teardown."""
    last = time.monotonic()
    try:
        while any(p.poll() is None for p in procs):
            time.sleep(0.5)
            if time.monotonic() - last >= PROGRESS_EVERY_S:
                last = time.monotonic()
                states = [read_progress(folder / f"shard-{i}" / "progress.jsonl") for i in range(len(procs))]
                if pooled:
                    whole = next((st.collected for st in states if st.collected is not None), "?")
                    print(f"kcts: shards {sum(st.done for st in states)}/{whole} (" + "; ".join(
                        f"{i}: {st.done}" + (" done" if p.poll() is not None else "")
                        for i, (p, st) in enumerate(zip(procs, states, strict=True))) + ")", flush=True)
                    continue
                print("kcts: shards " + "; ".join(
                    f"{i}: {st.done}/{st.collected if st.collected is not None else '?'}"
                    + (" done" if p.poll() is not None else "")
                    for i, (p, st) in enumerate(zip(procs, states, strict=True))), flush=True)
    except KeyboardInterrupt:
        for p in procs:
            try:
                p.wait(120)
            except subprocess.TimeoutExpired:
                p.kill()
        raise
    return [int(p.returncode) for p in procs]


def join(run_dir: Path, shard_dirs: Sequence[Path]) -> None:
    """results.json, junit.xml and allure-results/ of the shards, as one run's."""
    merged: dict[str, Any] | None = None
    checks: list[dict[str, Any]] = []
    suites = ET.Element("testsuites")
    (run_dir / "allure-results").mkdir(parents=True, exist_ok=True)
    for shard in shard_dirs:
        results = shard / "results.json"
        if results.exists():
            data = json.loads(results.read_text())
            merged = merged or data
            lead = shard.relative_to(run_dir)
            for c in data.get("checks", []):
                checks.append(_led(c, lead))
        junit = shard / "junit.xml"
        if junit.exists():
            root = ET.parse(junit).getroot()
            suites.extend(root.iter("testsuite"))
        for f in (shard / "allure-results").glob("*") if (shard / "allure-results").is_dir() else ():
            shutil.copy2(f, run_dir / "allure-results" / f.name)
    if merged is None:
        raise KctsError(f"no shard of {run_dir} wrote results.json: see the shards' logs in {run_dir / 'shards'}")
    found = defects.group(defects.Failure.from_json(c) for c in checks if c.get("cell") == "fail")
    keys = defects.keys_of(found)
    for c in checks:
        c["defect"] = keys.get(c["nodeid"])
    merged = {**merged, "checks": checks, "summary": {**summarize(c["cell"] for c in checks), "defects": len(found)},
              "defects": [d.to_json() for d in found]}
    (run_dir / "results.json").write_text(json.dumps(merged, indent=1))
    ET.ElementTree(suites).write(run_dir / "junit.xml", encoding="utf-8", xml_declaration=True)


def _led(check: dict[str, Any], lead: Path) -> dict[str, Any]:
    """A shard's check with its files' paths relative to the run folder."""
    out = dict(check)
    for name in PATH_FIELDS:
        if out.get(name):
            out[name] = str(lead / out[name])
    out["history"] = [{**h, "report": str(lead / h["report"]),
                       "plot": None if h.get("plot") is None else str(lead / h["plot"])}
                      for h in out.get("history") or []]
    return out


def split_args(args: list[str]) -> tuple[int | None, str | None, str | None, list[str]]:
    """`--shards N`, `--run-id` and `--reports-dir` taken out of `kcts run`'s arguments, and the rest."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--shards", type=int)
    parser.add_argument("--run-id")
    parser.add_argument("--reports-dir")
    own, rest = parser.parse_known_args(args)
    if own.shards is not None and own.shards < 1:
        raise KctsError(f"--shards {own.shards}: give 1 or more")
    return own.shards, own.run_id, own.reports_dir, rest
