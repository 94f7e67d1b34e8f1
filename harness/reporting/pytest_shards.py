"""`python -m harness.reporting.pytest_shards N PYTEST_ARGS...`: one pytest run in N processes side by
side, joined into the one run folder (results.json, junit.xml, allure-results/) a single process would
have written; what `tox -e tests` runs, with N from KCTS_TEST_SHARDS (the gate's is in .ci/gate.env).

Each process collects the whole selection and runs the part `--shard I/N` deals it (harness/plugin/
shard.py), weighted by the module times of the newest earlier run of the harness's tests under the
reports folder (or the times kcts ships). With N=1 it is pytest itself, in this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.errors import KctsError
from harness.process.spawn import die_with_parent
from harness.reporting.run_names import new_run_id, point_latest
from harness.reporting.shards import Shard, durations, join, split_args, wait_all

UNDER = "tests/"  # the harness's own tests: the suites have `kcts run --shards N`


def main(argv: list[str]) -> int:
    if not argv or not argv[0].isdigit() or int(argv[0]) < 1:
        print("usage: python -m harness.reporting.pytest_shards N PYTEST_ARGS... (N: 1 or more)", file=sys.stderr)
        return 2
    n, args = int(argv[0]), argv[1:]
    if n == 1:
        import pytest

        return int(pytest.main(args))
    _, run_id, reports_dir, rest = split_args(args)
    reports = Path(reports_dir or os.environ.get("KCTS_REPORTS", "reports"))
    run_dir = reports / (run_id or new_run_id())
    folder = run_dir / "shards"
    folder.mkdir(parents=True, exist_ok=True)
    weights = folder / "weights.json"
    weights.write_text(json.dumps(durations(reports, None, UNDER), indent=1))
    env = {**os.environ, "KCTS_NO_LATEST": "1"}
    procs: list[tuple[Shard, subprocess.Popen[bytes]]] = []
    for i in range(n):
        cmd = [sys.executable, "-m", "pytest", *rest, "--shard", f"{i}/{n}", "--shard-weights", str(weights),
               "--reports-dir", str(folder), "--run-id", f"shard-{i}"]
        with open(folder / f"shard-{i}.log", "wb") as log:
            procs.append((Shard(i, (), 0.0), subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                              preexec_fn=die_with_parent)))
    print(f"pytest in {n} shards side by side; their output in {folder}/shard-<i>.log, printed when all have ended",
          flush=True)
    try:
        codes = wait_all(procs, folder)  # on Ctrl-C it gives each shard its own teardown first
    except KeyboardInterrupt:
        print(f"interrupted; the shards' output is in {folder}", file=sys.stderr)
        return 130
    for shard, _ in procs:
        print((folder / f"shard-{shard.index}.log").read_text(errors="replace"), flush=True)
    try:
        join(run_dir, [folder / f"shard-{s.index}" for s, _ in procs])
    except KctsError as exc:
        print(f"kcts: {exc}", file=sys.stderr)
        return max(codes) or 1
    if not os.environ.get("KCTS_NO_LATEST"):
        point_latest(reports, run_dir.name)
    ran = [c for c in codes if c != 5]
    return 5 if not ran else max(ran)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
