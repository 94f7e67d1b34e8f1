"""`python -m harness.reporting.pytest_shards N PYTEST_ARGS...`: one pytest run in N processes side by
side, joined into the one run folder (results.json, junit.xml, allure-results/) a single process would
have written; what `tox -e tests` runs, with N from KCTS_TEST_SHARDS (the gate's is in .ci/gate.env).

Each process collects the whole selection and takes its modules from a pool the N share (`--shard I/N
--shard-pool`, harness/plugin/shard.py), the longest first by the module times of the newest earlier
run of the harness's tests under the reports folder (or the times kcts ships), whenever it is ready for
the next: the processes end together however the cores are shared among them. With N=1 it is pytest
itself, in this process.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness.errors import KctsError
from harness.reporting.run_names import new_run_id, point_latest
from harness.reporting.shards import durations, exit_code, join, pool_args, split_args, start, wait_all

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
    pooled = pool_args(folder, durations(reports, None, UNDER), n)
    procs = start([[sys.executable, "-m", "pytest", *rest, *args, "--reports-dir", str(folder), "--run-id",
                    f"shard-{i}"] for i, args in enumerate(pooled)], folder)
    print(f"pytest in {n} shards side by side; their output in {folder}/shard-<i>.log, printed when all have ended",
          flush=True)
    try:
        codes = wait_all(procs, folder, pooled=True)  # on Ctrl-C it gives each shard its own teardown first
    except KeyboardInterrupt:
        print(f"interrupted; the shards' output is in {folder}", file=sys.stderr)
        return 130
    for i in range(n):
        print((folder / f"shard-{i}.log").read_text(errors="replace"), flush=True)
    try:
        join(run_dir, [folder / f"shard-{i}" for i in range(n)])
    except KctsError as exc:
        print(f"kcts: {exc}", file=sys.stderr)
        return max(codes) or 1
    if not os.environ.get("KCTS_NO_LATEST"):
        point_latest(reports, run_dir.name)
    return exit_code(codes)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
