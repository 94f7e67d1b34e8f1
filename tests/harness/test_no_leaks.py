"""Nothing outlives a session: not on SIGKILL of pytest itself, not on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.reaper import tagged_pids
from harness.waiting import wait_until
from tests.harness.holder import interruptible

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.live



def start_holder(tmp_path: Path, *options: str) -> tuple[subprocess.Popen[bytes], dict]:
    hold = tmp_path / "hold.json"
    with open(tmp_path / "holder.log", "wb") as log:  # the child keeps writing to it; evidence on failure
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--brokers", "1", *options,
             "--reports-dir", str(tmp_path / "reports"), str(REPO / "tests" / "sessions" / "hold_cluster.py")],
            cwd=REPO, env={**os.environ, "KCTS_HOLD_FILE": str(hold)}, stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=interruptible,
        )
    try:
        wait_until(hold.exists, 120, lambda: f"holder pytest (pid {proc.pid}, exit {proc.poll()}) has not reported")
    except BaseException:
        proc.kill()
        raise
    return proc, json.loads(hold.read_text())


def holder_evidence(tmp_path: Path, info: dict) -> str:
    """The holder's own output and the tail of each node log it wrote: what it was doing when it hung."""
    parts = [f"--- holder output ---\n{(tmp_path / 'holder.log').read_text(errors='replace')[-4000:]}"]
    for node_log in sorted(p for p in (tmp_path / "reports").glob("*/nodes/*.log") if "latest" not in p.parts):
        parts.append(f"--- {node_log.name} ---\n{node_log.read_text(errors='replace')[-3000:]}")
    parts.append(f"--- JVMs still alive: {alive(info['pids'])} ---")
    return "\n".join(parts)


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(pid)
    return out


def test_sigkill_of_pytest_leaves_no_broker_jvm_after_15_seconds(tmp_path: Path) -> None:
    """SIGKILL the pytest process that holds a cluster: within 15 s no JVM of its session runs, and
    its scratch directory is gone (PR_SET_PDEATHSIG, then the reaper)."""
    proc, info = start_holder(tmp_path)
    assert alive(info["pids"]), f"the holder's JVMs were not running: {info}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    wait_until(
        lambda: not alive(info["pids"]) and not tagged_pids(info["session"]) and not Path(info["root"]).exists(),
        15,
        lambda: f"alive JVMs {alive(info['pids'])}, tagged {tagged_pids(info['session'])}, "
        f"root exists {Path(info['root']).exists()}",
    )


def test_ctrl_c_stops_the_cluster_and_exits(tmp_path: Path) -> None:
    """SIGINT (Ctrl-C) to pytest: it tears the cluster down through its fixtures and exits non-zero."""
    proc, info = start_holder(tmp_path)
    os.kill(proc.pid, signal.SIGINT)
    try:
        code = proc.wait(60)
    except subprocess.TimeoutExpired:
        evidence = holder_evidence(tmp_path, info)
        proc.kill()
        raise AssertionError(f"pytest was still running 60 s after SIGINT\n{evidence}") from None
    assert code != 0, holder_evidence(tmp_path, info)
    wait_until(lambda: not alive(info["pids"]) and not Path(info["root"]).exists(), 15,
               lambda: f"alive JVMs {alive(info['pids'])}, root exists {Path(info['root']).exists()}")


def test_a_reaper_sent_sigterm_reaps_before_it_goes(tmp_path: Path) -> None:
    """`kill` of a whole process tree reaches the reaper too: it reaps (kills the session's tagged
    processes, removes its root) instead of dying with its work undone, which left a docker run's
    containers behind when a gate was killed by hand."""
    import subprocess
    import sys
    import uuid

    session = f"test-{uuid.uuid4().hex[:8]}"
    root = tmp_path / "root"
    root.mkdir()
    tagged = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", f"-Dkcts.session={session}"])
    read_fd, write_fd = os.pipe()
    reaper = subprocess.Popen([sys.executable, "-m", "harness.reaper", session, str(root), str(read_fd)],
                              pass_fds=(read_fd,))
    os.close(read_fd)
    try:
        wait_until(lambda: tagged_pids(session) == [tagged.pid], 10, lambda: f"tagged {tagged_pids(session)}")
        wait_until(lambda: _catches(reaper.pid, signal.SIGTERM), 10, lambda: "the reaper never caught SIGTERM")
        reaper.send_signal(signal.SIGTERM)
        assert reaper.wait(30) == 0
        assert tagged.wait(10) == -signal.SIGKILL
        assert not root.exists()
    finally:
        os.close(write_fd)
        for p in (tagged, reaper):
            if p.poll() is None:
                p.kill()


def _catches(pid: int, sig: signal.Signals) -> bool:
    """Whether process `pid` has a handler for `sig` (its SigCgt mask in /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (sig - 1)))
    return False
