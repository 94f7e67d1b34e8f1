"""The command backend's mechanics, without any real broker: bad input ends fast with one clear error
and leaves nothing running; node control, logs, builds and the PostgreSQL service work.

The nodes here are Python one-liners that only open a port (`ready = "port"`): they decide nothing
but that the backend starts, stops, pauses and tags processes as it says. No verdict comes from them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness import session
from harness.cluster.base import NodeState
from harness.cluster.command import CommandCluster, prepare
from harness.cluster.services import PostgresService, port_open
from harness.cluster.target import from_profile
from harness.errors import ClusterError, SetupError, TargetRefused
from harness.waiting import wait_until

pytestmark = pytest.mark.timeout(60)

# A "node" that only listens on its port, and names a token by which the test finds it in /proc.
LISTENER = ("import socket,sys,time; s=socket.create_server(('127.0.0.1', int(sys.argv[1]))); "
            "print('listening on', sys.argv[1], flush=True); time.sleep(3600)")
HAS_POSTGRES = shutil.which("postgres") is not None or any(Path("/usr/lib/postgresql").glob("*/bin/initdb"))

needs_postgres = pytest.mark.skipif(
    not HAS_POSTGRES, reason="PostgreSQL server binaries are not installed (apt-get install postgresql)")


def toml_value(value: object) -> str:
    """A TOML value from a Python one (JSON's strings and arrays are TOML's)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def write_profile(tmp_path: Path, brokers: int = 1, **tables: dict[str, object] | list[dict[str, object]]) -> Path:
    """A profile file: a [target] of kind command, and the given tables."""
    lines = ["[target]", 'kind = "command"', 'name = "fake"', 'version = "1"', f"brokers = {brokers}",
             "replication = false", ""]
    for name, table in tables.items():
        for t in table if isinstance(table, list) else [table]:
            lines.append(f"[[{name}]]" if isinstance(table, list) else f"[{name}]")
            lines += [f"{k} = {toml_value(v)}" for k, v in t.items()]
            lines.append("")
    path = tmp_path / "profile.toml"
    path.write_text("\n".join(lines))
    return path


def listener_node(token: str, **extra: object) -> dict[str, object]:
    return {"command": [sys.executable, "-c", LISTENER, "{port}", token], "ready": "port", "start_timeout": 20,
            **extra}


def processes_with(token: str) -> list[int]:
    """Pids (not zombies) whose command line carries `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if token.encode() in (entry / "cmdline").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def assert_nothing_left(token: str) -> None:
    wait_until(lambda: not processes_with(token), 10, lambda: f"processes still running: {processes_with(token)}")


def start_failure(path: Path) -> tuple[str, float]:
    """Start the profile's cluster, which must fail: its error text and how long it took."""
    started = time.monotonic()
    cluster = CommandCluster(from_profile(path))
    with pytest.raises((ClusterError, SetupError)) as failure:
        cluster.start()
    cluster.close()  # safe after the failed start closed it
    return str(failure.value), time.monotonic() - started


# -- bad input -------------------------------------------------------------------------------------
def test_a_typo_in_the_node_table_names_the_key_the_file_and_the_known_keys(tmp_path: Path) -> None:
    path = write_profile(tmp_path, node={"comand": ["x"], "ready": "port"})
    with pytest.raises(SetupError) as failure:
        prepare(from_profile(path))
    message = str(failure.value)
    assert "'comand'" in message and str(path) in message and "[node]" in message, message
    assert "command" in message and "start_timeout" in message, message


def test_an_unknown_table_and_an_unknown_placeholder_are_named(tmp_path: Path) -> None:
    path = write_profile(tmp_path, node=listener_node("x"), nodes={"command": ["x"]})
    with pytest.raises(SetupError, match=r"unknown table \[nodes\]"):
        CommandCluster(from_profile(path))
    path = write_profile(tmp_path, node={"command": ["{root}/bin/x", "--port", "{prot}"]})
    with pytest.raises(SetupError) as failure:
        prepare(from_profile(path))
    assert "{prot}" in str(failure.value) and "{port}" in str(failure.value), failure.value


def test_a_missing_binary_is_a_setup_error_before_any_start(tmp_path: Path) -> None:
    path = write_profile(tmp_path, node={"command": ["/nonexistent/broker", "{port}"]})
    with pytest.raises(SetupError, match="/nonexistent/broker does not exist"):
        prepare(from_profile(path))


def test_a_node_that_exits_at_once_fails_the_start_at_once_with_its_command_and_output(tmp_path: Path) -> None:
    token = f"kcts-test-{uuid.uuid4().hex}"
    script = "import sys; print('broker: cannot open storage', flush=True); sys.exit(3)"
    path = write_profile(tmp_path, node={"command": [sys.executable, "-c", script, token], "start_timeout": 50})
    message, took = start_failure(path)
    assert took < 15, f"took {took:.1f}s: the exit should end the wait at once"
    assert "exited with code 3" in message and "cannot open storage" in message and token in message, message
    assert_nothing_left(token)


def test_a_node_that_never_opens_its_port_times_out_with_its_command_and_log(tmp_path: Path) -> None:
    token = f"kcts-test-{uuid.uuid4().hex}"
    script = "import time; print('starting forever', flush=True); time.sleep(600)"
    path = write_profile(tmp_path, node={"command": [sys.executable, "-c", script, token], "start_timeout": 3})
    message, took = start_failure(path)
    assert took < 20, took
    assert "not ready within 3s" in message and "starting forever" in message and token in message, message
    assert_nothing_left(token)


def test_a_failing_leader_move_hook_is_the_target_refusing_the_move(tmp_path: Path) -> None:
    token = f"kcts-test-{uuid.uuid4().hex}"
    hook = ["sh", "-c", "echo cannot move {topic}-{partition} to {to} at {to_host}:{to_port} >&2; exit 4"]
    path = write_profile(tmp_path, node=listener_node(token), leader_move={"command": hook, "timeout": 10})
    spec = from_profile(path)
    assert spec.kind.name == "command" and spec.capabilities.leader_moves == "hook"
    with CommandCluster(spec) as cluster:
        with pytest.raises(TargetRefused) as refused:
            cluster.move_leader_to("t1", 0, 1)
        message = str(refused.value)
        assert "exited with code 4" in message and f"cannot move t1-0 to 1 at 127.0.0.1:{cluster.nodes[1].port}" \
            in message, message
        assert cluster.hook_log in cluster.log_paths()
    assert_nothing_left(token)


def test_a_leader_move_hook_past_its_deadline_is_refused_and_killed(tmp_path: Path) -> None:
    token = f"kcts-test-{uuid.uuid4().hex}"
    hook = [sys.executable, "-c", "import time; time.sleep(600)", f"hook-{token}"]
    path = write_profile(tmp_path, node=listener_node(token), leader_move={"command": hook, "timeout": 1})
    with CommandCluster(from_profile(path)) as cluster:
        with pytest.raises(TargetRefused, match="did not finish within 1s"):
            cluster.move_leader_to("t1", 0, 1)
        assert not processes_with(f"hook-{token}")
    assert_nothing_left(token)


def test_without_a_hook_leaders_move_by_reassignment(tmp_path: Path) -> None:
    path = write_profile(tmp_path, node=listener_node("x"))
    spec = from_profile(path)
    assert spec.capabilities.leader_moves is None
    with pytest.raises(NotImplementedError):
        CommandCluster(spec).move_leader_to("t", 0, 1)


@needs_postgres
def test_a_postgresql_that_will_not_start_fails_at_once_with_its_own_words(tmp_path: Path) -> None:
    token = f"kcts_test_{uuid.uuid4().hex}"
    service = {"kind": "postgres", "options": {"application_name": token, "no_such_setting": "1"}}
    path = write_profile(tmp_path, service=[service], node=listener_node(token))
    message, took = start_failure(path)
    assert took < 45, took
    assert "PostgreSQL did not start" in message and "no_such_setting" in message, message
    assert_nothing_left(token)


def test_a_failed_build_names_its_log_and_shows_its_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path / "cache"))
    build = {"command": ["sh", "-c", "echo compiling; echo 'error[E0425]: no such thing' >&2; exit 101"],
             "creates": "{root}/bin/broker"}
    path = write_profile(tmp_path, build=build, node={"command": ["{root}/bin/broker"]})
    with pytest.raises(SetupError) as failure:
        prepare(from_profile(path))
    message = str(failure.value)
    log = tmp_path / "cache" / "fake" / "1.build.log"
    assert "failed (exit 101)" in message and str(log) in message and "error[E0425]" in message, message


def test_a_missing_build_tool_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path / "cache"))
    build = {"command": ["kcts-no-such-tool", "build"], "creates": "{root}/bin/broker",
             "needs": ["kcts-no-such-tool"], "hint": "apt-get install kcts-no-such-tool"}
    path = write_profile(tmp_path, build=build, node={"command": ["{root}/bin/broker"]})
    with pytest.raises(SetupError, match=r"kcts-no-such-tool not found on PATH.*apt-get install kcts-no-such-tool"):
        prepare(from_profile(path))


# -- mechanics -------------------------------------------------------------------------------------
def test_a_build_runs_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path / "cache"))
    counter = tmp_path / "builds"
    build = {"command": ["sh", "-c", f"echo x >> {counter}; mkdir -p {{root}}/bin; ln -s {sys.executable} "
                         "{root}/bin/broker"], "creates": "{root}/bin/broker"}
    token = f"kcts-test-{uuid.uuid4().hex}"
    node = {"command": ["{root}/bin/broker", "-c", LISTENER, "{port}", token], "ready": "port"}
    spec = from_profile(write_profile(tmp_path, build=build, node=node))
    assert "built" in prepare(spec)
    assert "built before" in prepare(spec)
    assert counter.read_text().count("x") == 1
    with CommandCluster(spec) as cluster:
        assert cluster.node_state(1) is NodeState.RUNNING
    assert_nothing_left(token)


def test_nodes_stop_kill_pause_resume_and_restart_on_their_port_and_data_dir(tmp_path: Path) -> None:
    token = f"kcts-test-{uuid.uuid4().hex}"
    path = write_profile(tmp_path, brokers=2, node=listener_node(token, stop_timeout=5))
    cluster = CommandCluster(from_profile(path), tmp_path / "logs")
    with cluster:
        assert cluster.broker_ids == [1, 2]
        assert cluster.bootstrap_servers == ",".join(f"127.0.0.1:{n.port}" for n in cluster.nodes.values())
        node = cluster.nodes[1]
        pid = node.proc.pid if node.proc else 0
        # The session tag is on the command line (argv[0]), where the reaper looks.
        assert session.current().marker.removeprefix("-D").encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        assert Path(f"/proc/{pid}/cwd").resolve() == node.data_dir.resolve()
        mark = cluster.node_log_size(1)

        cluster.pause_node(1)
        cluster.pause_node(1)
        assert cluster.node_state(1) is NodeState.PAUSED
        assert Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
        cluster.resume_node(1)
        assert cluster.node_state(1) is NodeState.RUNNING

        cluster.stop_node(1)
        cluster.stop_node(1)
        assert cluster.node_state(1) is NodeState.STOPPED and not port_open("127.0.0.1", node.port)
        assert node.proc and node.proc.returncode == -signal.SIGTERM
        cluster.start_node(1)
        cluster.start_node(1)
        assert cluster.node_state(1) is NodeState.RUNNING and port_open("127.0.0.1", node.port)

        cluster.kill_node(2)
        assert cluster.node_state(2) is NodeState.STOPPED
        assert cluster.nodes[2].proc and cluster.nodes[2].proc.returncode == -signal.SIGKILL
        cluster.restart_node(2)
        assert cluster.state.running_brokers() == [1, 2]

        log = cluster.node_log(1, mark) or ""
        assert log.count(f"\nlistening on {node.port}") == 1 and "===== start node-1" in log, log
        assert {p.name for p in cluster.log_paths()} == {"node-1.log", "node-2.log"}
        with pytest.raises(ClusterError, match=r"no broker 7; brokers are \[1, 2\]"):
            cluster.stop_node(7)
    cluster.close()
    assert_nothing_left(token)
    assert not cluster.workdir.exists()


def test_a_stop_that_the_node_ignores_ends_in_sigkill(tmp_path: Path) -> None:
    token = f"kcts-test-{uuid.uuid4().hex}"
    script = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " + LISTENER
    node = {"command": [sys.executable, "-c", script, "{port}", token], "ready": "port", "stop_timeout": 1}
    with CommandCluster(from_profile(write_profile(tmp_path, node=node))) as cluster:
        started = time.monotonic()
        cluster.stop_node(1)
        assert time.monotonic() - started < 10
        assert cluster.nodes[1].proc and cluster.nodes[1].proc.returncode == -signal.SIGKILL
    assert_nothing_left(token)


@needs_postgres
def test_a_postgresql_service_serves_the_nodes_and_goes_with_them(tmp_path: Path) -> None:
    token = f"kcts_test_{uuid.uuid4().hex}"
    sql = tmp_path / "schema.sql"
    sql.write_text("create table seen (token text);\ninsert into seen values ('created');\n")
    service = {"kind": "postgres", "database": "fake", "init_sql": ["schema.sql"],
               "options": {"application_name": token}}
    # The node is handed the URL, and checks it can reach its database with psql before it listens.
    check = ("import subprocess,sys; out = subprocess.run([sys.argv[3], '-X', '-At', '-d', sys.argv[2], '-c', "
             "'select token from seen'], capture_output=True, text=True); print('db says', out.stdout, out.stderr, "
             "flush=True); assert out.stdout.strip() == 'created'; " + LISTENER)
    psql = str(PostgresService({"kind": "postgres"}, None, tmp_path, 0).bin_dir() / "psql")
    node = {"command": [sys.executable, "-c", check, "{port}", "{postgres_url}", psql, token], "ready": "port"}
    path = write_profile(tmp_path, service=[service], node=node)
    with CommandCluster(from_profile(path), tmp_path / "logs") as cluster:
        server = cluster.services[0]
        assert "db says created" in (cluster.node_log(1) or "")
        assert (tmp_path / "logs" / "postgres.log") in cluster.log_paths()
        pids = processes_with(token)
        assert pids, "the postgres server is not running"
        # Run as an unprivileged user when kcts runs as root, with the tag for the reaper.
        status = Path(f"/proc/{pids[0]}/status").read_text()
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        assert uid != 0 or os.geteuid() != 0
        assert session.current().marker.removeprefix("-D").encode() in Path(f"/proc/{pids[0]}/cmdline").read_bytes()
        assert server.name == "postgres"
    assert_nothing_left(token)
