"""`kcts matrix --targets 4.4.0,4.3.1,kfake,external:HOST:PORT [pytest args]`: one run per target, one matrix."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from harness import session
from harness.errors import KctsError
from harness.kafka.dist import normalize_version
from harness.reports.matrix import Target, build, write_all


def target_args(spec: str) -> list[str]:
    """The `kcts run` arguments that select one target."""
    if spec == "kfake":
        return ["--backend", "kfake"]
    if spec.startswith("external:"):
        hostport = spec.removeprefix("external:")
        if ":" not in hostport:
            raise KctsError(f"target {spec!r}: use external:HOST:PORT")
        return ["--backend", "external", "--bootstrap-servers", hostport]
    return ["--kafka-version", normalize_version(spec)]


def slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec)


def run_matrix(targets: list[str], pytest_args: list[str], reports: Path = Path("reports")) -> Path:
    """Run the suites against every target (one pytest process each) and write the matrix files."""
    selected = [(spec, target_args(spec)) for spec in targets]  # bad specs fail before any run
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = reports / f"matrix-{stamp}"
    (folder / "targets").mkdir(parents=True, exist_ok=True)
    runs: list[tuple[Target, dict]] = []
    for spec, args in selected:
        name = slug(spec)
        cmd = [sys.executable, "-m", "harness.cli", "run", *args,
               "--reports-dir", str(folder / "targets"), "--run-id", name, *pytest_args]
        print(f"kcts matrix: {spec}: {' '.join(cmd[3:])}", flush=True)
        # Each target's run dies with the matrix run (and takes its brokers with it: it has its own reaper).
        code = subprocess.call(cmd, env={**os.environ, "KCTS_NO_LATEST": "1"}, preexec_fn=session.die_with_parent)
        results = folder / "targets" / name / "results.json"
        if not results.exists():
            print(f"kcts matrix: {spec}: no results (exit {code}); its column shows nothing ran", flush=True)
            data: dict = {"target": spec, "environment": {"error": f"run exited {code} before any check"}, "checks": []}
        else:
            data = json.loads(results.read_text())
        runs.append((Target(spec, f"targets/{name}"), data))
    paths = write_all(build(runs), folder)
    latest = reports / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    latest.symlink_to(folder.name)
    for p in paths:
        print(f"kcts matrix: wrote {p}")
    return folder
