"""Link faults between local nodes: one-way cuts cut one way, clients are never cut, and nothing of a
run's rules or cgroups outlives it, on a clean close or after kill -9 of the runner."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.network.links import LinkControl, LinkControlUnavailable, LinkFault, leftovers, unavailable_reason
from harness.process.ports import free_port
from harness.process.spawn import spawn
from harness.reaper import tagged_pids
from harness.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))

ECHO = """
import socket, sys
listener = socket.create_server(("127.0.0.1", int(sys.argv[1])))
print("listening", flush=True)
while True:
    c, _ = listener.accept()
    c.sendall(b"pong:" + c.recv(64))
    c.close()
"""
ASK = """
import socket, sys
try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1.5) as c:
        c.sendall(b"ping")
        print(c.recv(64).decode())
except OSError as exc:
    print(f"no answer: {exc}")
"""


@contextmanager
def _echo_nodes(session_id: str) -> Iterator[tuple[LinkControl, dict[int, int]]]:
    """Nodes 1 and 2, each an echo server in its own cgroup, and the link control over them; all of
    it gone on exit."""
    ports = {1: free_port(), 2: free_port()}
    links = LinkControl(session_id, "echo", {n: [p] for n, p in ports.items()}).setup()
    servers = []
    try:
        for n, p in ports.items():
            servers.append(spawn([sys.executable, "-c", ECHO, str(p)], cgroup=links.cgroup(n),
                                 stdout=subprocess.PIPE, text=True))
        for s in servers:
            assert s.stdout is not None and s.stdout.readline().strip() == "listening"
        yield links, ports
    finally:
        for s in servers:
            s.kill()
            s.wait()
        links.close()


def test_a_one_way_cut_silences_one_direction_and_never_a_client() -> None:
    """Nodes 1 and 2 each listen; after `cut(1 -> 2)` node 2 hears nothing node 1 sends (so 1's
    connections to 2 go unanswered, and 2's to 1 get no reply through), node 1 still answers
    the test process, and the heal restores every link."""
    with _echo_nodes(f"test-{os.getpid()}") as (links, ports):

        def ask(frm: int, to: int) -> str:
            out = subprocess.run([sys.executable, "-c", ASK, str(ports[to])], capture_output=True, text=True,
                                 timeout=30, preexec_fn=lambda: _join(links.cgroup(frm)))
            return out.stdout.strip()

        assert ask(1, 2) == "pong:ping" and ask(2, 1) == "pong:ping"
        links.apply([LinkFault(1, 2)])
        assert ask(1, 2).startswith("no answer"), "node 2 heard node 1 through the cut"
        assert ask(2, 1).startswith("no answer"), "node 2 heard node 1's reply through the cut"
        with socket.create_connection(("127.0.0.1", ports[1]), timeout=5) as c:
            c.sendall(b"client")
            assert c.recv(64) == b"pong:client", "a client was cut off"
        links.heal()
        assert ask(1, 2) == "pong:ping" and ask(2, 1) == "pong:ping"
    assert leftovers(f"test-{os.getpid()}") == []


def test_a_delayed_link_is_late_one_way_and_the_band_goes_with_the_heal() -> None:
    """`delay_ms` on 1 -> 2: node 1's question to node 2 is answered at least that late, node 2's to
    node 1 (whose answer travels 1 -> 2) too, a client's question to node 1 is not; after the heal lo
    has no delay qdisc of ours left."""
    sid = f"test-delay-{os.getpid()}"
    with _echo_nodes(sid) as (links, ports):

        def timed(frm: int | None, to: int) -> float:
            code = f"import time; t = time.monotonic(); exec({ASK!r}); print(time.monotonic() - t)"
            join = (lambda: _join(links.cgroup(frm))) if frm is not None else None
            out = subprocess.run([sys.executable, "-c", code, str(ports[to])], capture_output=True, text=True,
                                 timeout=30, preexec_fn=join)
            answer, seconds = out.stdout.split()
            assert answer == "pong:ping", out.stdout
            return float(seconds)

        try:
            links.apply([LinkFault(1, 2, loss=0, delay_ms=400)])
        except LinkControlUnavailable as exc:
            pytest.skip(str(exc))
        assert "prio 4b5c:" in subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True,
                                               text=True).stdout
        assert timed(1, 2) >= 0.4, "node 1's packets reached node 2 in less than the delay"
        assert timed(2, 1) >= 0.4, "node 1's answers reached node 2 in less than the delay"
        assert timed(None, 1) < 0.4, "a client's exchange with node 1 was delayed"
        links.heal()
        assert timed(1, 2) < 0.4
    assert leftovers(sid) == []
    assert "4b5c:" not in subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True).stdout


def _join(cgroup: Path) -> None:
    (cgroup / "cgroup.procs").write_text("0")


@pytest.mark.live
def test_a_closed_cluster_leaves_no_rule_and_no_cgroup() -> None:
    """A clean close of a local cluster with links cut removes its table and cgroups; the nodes sent
    nothing off loopback while it ran."""
    out = subprocess.run([sys.executable, str(REPO / "tests" / "sessions" / "cut_links.py"), "close"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    assert len(lines) == 2, f"exit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    held, closed = lines
    assert held["in_force"] == "1->2, 2->1000" and len(held["present"]) == 2, held
    assert held["off_loopback"] == 0, f"the nodes sent {held['off_loopback']} packets off loopback"
    assert closed["left"] == [], f"left after close: {closed['left']}"
    assert leftovers(held["session"]) == []


@pytest.mark.live
def test_kill_9_of_the_runner_leaves_no_rule_cgroup_or_process() -> None:
    """The runner dies by SIGKILL while a link is cut: the reaper kills the nodes and removes the
    session's table and cgroups within 30 s."""
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "sessions" / "cut_links.py"), "hold"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        held = json.loads(line) if line.startswith("{") else pytest.fail(f"the runner said {line!r}")
        assert len(held["present"]) == 2, held
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    sid = held["session"]
    wait_until(lambda: not leftovers(sid) and not tagged_pids(sid), 30,
               lambda: f"left of session {sid}: {leftovers(sid)}, processes {tagged_pids(sid)}")


@pytest.mark.live
def test_a_machine_that_refuses_the_rules_loses_link_faults_not_the_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the cgroups or the table cannot be made, the cluster starts without link control and says
    why; checks that cut links then skip with that reason."""
    from harness.cluster.local import LocalCluster, LocalClusterSpec
    from harness.errors import SetupError

    def refuse(self: LinkControl) -> LinkControl:
        raise SetupError("nft refused the run's link rules: Operation not permitted")

    monkeypatch.setattr(LinkControl, "setup", refuse)
    with LocalCluster(LocalClusterSpec(brokers=1)) as cluster:
        caps = cluster.capabilities
        assert not caps.links and "Operation not permitted" in caps.no_links, caps
        assert cluster.broker_ids == [1] and cluster.state.running_brokers() == [1]
