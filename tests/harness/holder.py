"""A pytest process that holds a cluster for a leak test: started on one test node of a profile, it
writes what it holds to a file and waits to be killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.errors import Unrecoverable
from harness.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
HOLD = "KCTS_HOLD_FILE"


def report_held(info: dict[str, Any]) -> None:
    """The holder's report, written whole to $HOLD: into a file beside it, then renamed, so that a
    reader that sees the file never reads it half written (it waits on the file's existence)."""
    path = Path(os.environ[HOLD])
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(info))
    os.replace(part, path)


def interruptible() -> None:
    """preexec_fn: SIGINT back to its default in a child a test will interrupt. A shell without job
    control starts background commands with SIGINT ignored (CI runners do), the ignore is inherited,
    and Python then installs no KeyboardInterrupt handler: Ctrl-C would never reach the child, so a
    test must not depend on how its own runner was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def hold(tmp_path: Path, profile: str, node: str, timeout: float) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """Start pytest on `node` (a test that holds a `profile` cluster and reports it to $HOLD), wait up to
    `timeout` for its report; the process and what it reported. The holder is killed if it never reports."""
    held = tmp_path / "hold.json"
    with open(tmp_path / "holder.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--target-profile", profile,
             "--reports-dir", str(tmp_path / "reports"), node],
            cwd=REPO, env={**os.environ, HOLD: str(held)}, stdout=log, stderr=subprocess.STDOUT,
        )

    def reported() -> bool:
        if proc.poll() is not None and not held.exists():
            raise Unrecoverable(f"the holder pytest exited with {proc.returncode} before it held a cluster; "
                                f"output:\n{(tmp_path / 'holder.log').read_text(errors='replace')[-3000:]}")
        return held.exists()

    try:
        wait_until(reported, timeout, lambda: f"holder (pid {proc.pid}) has not reported")
    except BaseException:
        proc.kill()
        raise
    return proc, json.loads(held.read_text())
