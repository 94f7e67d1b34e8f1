"""`kcts cluster up` holds a real cluster that other shells reach: `kcts run --backend external`
judges it, `kcts cluster OP` controls its nodes, and it goes without a trace on Ctrl-C or kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.network.links import leftovers, unavailable_reason
from harness.reaper import tagged_pids
from harness.waiting import wait_until
from tests.harness.holder import interruptible

REPO = Path(__file__).resolve().parents[2]
# Two held clusters, each ended by a signal: tox -e reliability runs them with the other kills, not the gate.
pytestmark = [pytest.mark.live, pytest.mark.heavy]



class Held:
    """A `kcts cluster up` process of the test's own, in a scratch root of the test's own."""

    def __init__(self, tmp_path: Path, *options: str) -> None:
        self.tmp = tmp_path
        self.env = {**os.environ, "KCTS_TMP": str(tmp_path)}
        self.log = tmp_path / "holder.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "cluster", "up", *options],
                                         cwd=REPO, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                         preexec_fn=interruptible)
        try:
            wait_until(lambda: self.bootstrap is not None, 120,
                       lambda: f"no bootstrap line yet (exit {self.proc.poll()}):\n{self.output}")
        except BaseException:
            self.proc.kill()
            raise
        (sock,) = tmp_path.glob("kcts-*/held/*.sock")
        self.root = sock.parent.parent
        self.session = self.root.name.removeprefix("kcts-")

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")

    @property
    def bootstrap(self) -> str | None:
        return next((ln.split()[1] for ln in self.output.splitlines() if ln.startswith("bootstrap: ")), None)

    def kcts(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=REPO, env=self.env,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def gone(self) -> bool:
        return not tagged_pids(self.session) and not self.root.exists() and not leftovers(self.session)

    def left(self) -> str:
        return (f"tagged processes {tagged_pids(self.session)}, scratch root exists {self.root.exists()}, "
                f"link rules and cgroups {leftovers(self.session)}")


def test_a_held_cluster_is_judged_controlled_and_gone_after_ctrl_c(tmp_path: Path) -> None:
    held = Held(tmp_path, "--brokers", "3")
    try:
        assert "kcts cluster kill 3" in held.output and "kcts run --backend external" in held.output
        run = held.kcts("run", "--backend", "external", "--bootstrap-servers", held.bootstrap or "", "-m", "smoke",
                        "--reports-dir", str(tmp_path / "reports"), "--run-id", "held")
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
        counts = json.loads((tmp_path / "reports" / "held" / "results.json").read_text())["summary"]["counts"]
        assert counts["pass"] >= 1 and counts["fail"] == 0 and counts["error"] == 0, counts

        paused = held.kcts("cluster", "pause", "3")
        assert paused.returncode == 0 and "broker 3: pause done; now paused" in paused.stdout, paused
        assert "3 paused" in held.kcts("cluster", "status").stdout
        assert held.kcts("cluster", "resume", "3").returncode == 0
        if unavailable_reason() is None:
            cut = held.kcts("cluster", "cut-off", "3")
            assert cut.returncode == 0 and "links cut: 3->1, 1->3" in cut.stdout, cut
            assert held.kcts("cluster", "heal-links").stdout.strip().endswith("every link up")
            wrong = held.kcts("cluster", "cut", "3")
            assert wrong.returncode == 2 and "usage: kcts cluster cut FROM TO" in wrong.stderr, wrong
        assert "3 running" in held.kcts("cluster", "status").stdout
        wrong = held.kcts("cluster", "kill", "9")
        assert wrong.returncode == 2 and "no broker 9" in wrong.stderr, wrong
    finally:
        held.proc.send_signal(signal.SIGINT)
        code = held.proc.wait(60)
    assert code == 0, held.output
    assert "nothing of it is left" in held.output
    wait_until(held.gone, 15, held.left)
    none = held.kcts("cluster", "status")
    assert none.returncode == 2 and "no cluster named 'default' is held here" in none.stderr, none


def test_sigkill_of_the_holder_leaves_nothing(tmp_path: Path) -> None:
    held = Held(tmp_path, "--brokers", "1", "--name", "doomed")
    assert tagged_pids(held.session), "the held cluster's JVMs were not running"
    os.kill(held.proc.pid, signal.SIGKILL)
    held.proc.wait(10)
    wait_until(held.gone, 15, held.left)
    assert held.kcts("cluster", "--name", "doomed", "status").returncode == 2
