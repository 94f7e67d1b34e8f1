"""`kcts matrix --targets 4.4.0,4.3.1,kfake,external:HOST:PORT [pytest args]`: one run per target, one matrix."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from harness.cluster.target import TargetSpec, from_profile, parse, to_run_args
from harness.process.spawn import die_with_parent
from harness.reports.matrix import Target, build, summary_line, write_all


def target_spec(text: str) -> TargetSpec:
    """One `--targets` entry: a short spelling (see harness.cluster.target) or a profile file."""
    return from_profile(Path(text)) if text.endswith(".toml") else parse(text)


def target_args(text: str) -> list[str]:
    """The `kcts run` arguments that select one target."""
    return to_run_args(target_spec(text))


def slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec)


def run_matrix(targets: list[str], pytest_args: list[str], reports: Path = Path("reports")) -> Path:
    """Run the suites against every target (one pytest process each) and write the matrix files."""
    selected = [(text, target_spec(text)) for text in targets]  # bad specs fail before any run
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = reports / f"matrix-{stamp}"
    (folder / "targets").mkdir(parents=True, exist_ok=True)
    runs: list[tuple[Target, dict]] = []
    for spec, target in selected:
        name = slug(spec)
        env = {**os.environ, "KCTS_NO_LATEST": "1"}
        if target.security.password:
            env["KCTS_SASL_PASSWORD"] = target.security.password
        cmd = [sys.executable, "-m", "harness.cli", "run", *to_run_args(target),
               "--reports-dir", str(folder / "targets"), "--run-id", name, *pytest_args]
        print(f"kcts matrix: {spec}: {' '.join(cmd[3:])}", flush=True)
        # Each target's run dies with the matrix run (and takes its brokers with it: it has its own reaper).
        code = subprocess.call(cmd, env=env, preexec_fn=die_with_parent)
        results = folder / "targets" / name / "results.json"
        if not results.exists():
            print(f"kcts matrix: {spec}: no results (exit {code}); its column shows nothing ran", flush=True)
            data: dict = {"target": spec, "environment": {"error": f"run exited {code} before any check"}, "checks": []}
        else:
            data = json.loads(results.read_text())
        runs.append((Target(spec, f"targets/{name}"), data))
    matrix = build(runs)
    paths = write_all(matrix, folder)
    latest = reports / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    latest.symlink_to(folder.name)
    for p in paths:
        print(f"kcts matrix: wrote {p}")
    # Last, so that the depth of every target is what the terminal ends with.
    for t in matrix["targets"]:
        print(f"kcts matrix: {summary_line(t['name'], matrix['summary'][t['name']])}", flush=True)
    return folder
