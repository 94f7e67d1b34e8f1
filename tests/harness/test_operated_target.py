"""An operated target: a cluster kcts does not start, under the operator's own commands
(harness/cluster/operated.py, the profile's format in harness/cluster/operations.py).

Its capabilities come from the commands given; each command is rendered with no value ever reaching
a shell unquoted; one that fails, hangs or cannot run is the target refusing, with its output, within
its deadline; and every fault the commands make is in a ledger that the cluster's close undoes, and
the session's reaper when the runner is killed. The Kubernetes and systemd recipes of docs/recipes.md
cannot run here: their commands are rendered and checked below. The containers recipe runs: the
heavy test at the end (`python3 -m tox -e operated`)."""

from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness.cluster import operations
from harness.cluster.base import NodeState
from harness.cluster.kinds import operated as kind
from harness.cluster.model import HOOK, REASSIGNMENT, TargetSpec
from harness.cluster.operated import BACKEND, OperatedCluster
from harness.cluster.operations import Command, check_programs, load, run
from harness.cluster.target import from_profile
from harness.errors import ClusterError, FaultControlUnavailable, KctsError, SetupError, TargetRefused
from harness.network.links import LinkFault
from harness.reaper import undo_operations
from harness.waiting import wait_until
from tests.harness.holder import interruptible

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "docs" / "recipes"
ALL = {name: ["true"] for name in (*operations.FAULTS, *operations.PARTITIONS, *operations.CONTROLLER, "logs")}


def spec(operations_table: dict[str, Any], version: str | None = "4.4.0", **tables: Any) -> TargetSpec:
    return TargetSpec(kind=kind.KIND, version=version, bootstrap="127.0.0.1:9092", profile=Path("op.toml"),
                      tables={"operations": operations_table, **tables})


def write_profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "op.toml"
    path.write_text(text)
    return path


# -- the profile ---------------------------------------------------------------------------------
def test_the_kind_and_the_profile_reader_name_the_same_operations() -> None:
    assert (kind.FAULTS, kind.PARTITIONS, kind.CONTROLLER) == \
        (operations.FAULTS, operations.PARTITIONS, operations.CONTROLLER)


def test_the_capabilities_are_the_commands_given() -> None:
    every = spec(ALL).capabilities
    assert (every.fault_control, every.partitions, every.controller, every.node_logs, every.owned) == \
        (True, True, True, True, False)
    assert (every.leader_moves, every.replication, every.side_clusters, every.links) == \
        (REASSIGNMENT, True, True, False)
    faults = spec({k: ["true"] for k in operations.FAULTS}).capabilities
    assert (faults.fault_control, faults.partitions, faults.controller, faults.node_logs) == (True, False, False, False)
    logs_only = spec({"logs": ["true"]}, version=None).capabilities
    assert (logs_only.fault_control, logs_only.leader_moves, logs_only.replication, logs_only.side_clusters) == \
        (False, None, None, False)
    assert spec({"move_leader": ["true"]}).capabilities.leader_moves == HOOK  # the operator's own way wins


def test_a_profile_file_reads_into_an_operated_target(tmp_path: Path) -> None:
    path = write_profile(tmp_path, """
[target]
kind = "operated"
version = "4.4.0"
bootstrap = "127.0.0.1:29092"
[nodes.1]
port = 29092
container = "c1"
[operations]
stop = ["docker", "stop", "{container}"]
start = { command = ["docker", "start", "{container}"], timeout = 90 }
kill = "docker kill {container}"
pause = ["docker", "pause", "{container}"]
resume = ["docker", "unpause", "{container}"]
""")
    target = from_profile(path)
    profile = load(target)
    assert target.kind is kind.KIND and target.java_clients == "4.4.0" and target.capabilities.fault_control
    assert profile.nodes == {1: {"port": "29092", "container": "c1"}}
    assert profile.commands["start"].timeout == 90 and profile.commands["stop"].timeout == operations.DEFAULT_TIMEOUT
    assert profile.commands["kill"].argv(profile.node_values(1, "h", 1, "b")) == ["/bin/sh", "-c", "docker kill c1"]


@pytest.mark.parametrize(("table", "message"), [
    ({"stop": ["x"], "start": ["x"]}, "has stop, start but not kill, pause, resume: these go together"),
    ({**ALL, "heal": None}, "[operations] heal: give its command"),
    ({k: v for k, v in ALL.items() if k != "heal"}, "has isolate but not heal"),
    ({"timeout": 5}, "needs an [operations] table with the operator's commands"),
    ({"stpo": ["x"]}, "[operations] stpo is no operation; known: stop, start"),
    ({"stop": []}, "give its command as a list of arguments"),
    ({"logs": {"command": ["x"], "timeout": -1}}, "timeout = -1: give a number of seconds above 0"),
])
def test_a_wrong_operations_table_is_one_error_naming_it(table: dict[str, Any], message: str) -> None:
    with pytest.raises(SetupError) as raised:
        load(spec(table))
    assert message in str(raised.value)


def test_an_unknown_placeholder_names_the_known_ones_and_the_broker_lacking_it() -> None:
    nodes = {"1": {"container": "c1"}, "2": {"pod": "p2"}}
    with pytest.raises(SetupError) as raised:
        load(spec({"logs": ["docker", "logs", "{container}"]}, nodes=nodes))
    text = str(raised.value)
    assert "[operations] logs: unknown placeholder {container}" in text and "[nodes.2] lacks it" in text
    assert "known: {bootstrap}, {host}, {node}, {port}" in text
    with pytest.raises(SetupError, match=r"pause_controller: unknown placeholder \{container\}"):
        load(spec({"pause_controller": ["x", "{container}"], "resume_controller": ["x"]}, nodes=nodes))
    with pytest.raises(SetupError, match=r"\[nodes\.one\]: name each broker's table by its broker id"):
        load(spec({"logs": ["x"]}, nodes={"one": {}}))


# -- rendering: quoting safe -----------------------------------------------------------------------
HOSTILE = "a b'; rm -rf / $(touch /tmp/owned) `id` \"q\""


def test_a_value_fills_its_argv_element_as_it_is_and_no_shell_reads_it() -> None:
    command = Command("stop", ("docker", "stop", "{container}", "--label={container}"), 5)
    assert command.argv({"container": HOSTILE}) == ["docker", "stop", HOSTILE, f"--label={HOSTILE}"]


def test_a_shell_string_quotes_every_value_for_its_shell() -> None:
    command = Command("stop", "printf '%s\\n' {container} && printf '%s\\n' done", 5)
    argv = command.argv({"container": HOSTILE})
    assert argv[:2] == ["/bin/sh", "-c"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert out == f"{HOSTILE}\ndone\n" and not Path("/tmp/owned").exists()


def test_q_quotes_a_value_once_more_for_the_shell_a_command_hands_it_to() -> None:
    """ssh joins its arguments into one command line for the remote shell: `{unit:q}` is quoted for it."""
    remote = Command("stop", ("ssh", "--", "{ssh}", "sudo systemctl stop {unit:q}"), 5).argv(
        {"ssh": "vm", "unit": HOSTILE})[-1]
    assert shlex.split(remote) == ["sudo", "systemctl", "stop", HOSTILE]
    # In a shell string, twice: the local shell takes one quoting off, the remote one the other.
    local = Command("stop", "echo {unit:q}", 5).argv({"unit": HOSTILE})[-1]
    assert shlex.split(shlex.split(local)[1]) == [HOSTILE]


# -- the recipes that cannot run here: rendered and checked ----------------------------------------
def recipe(name: str) -> tuple[TargetSpec, operations.OperatedProfile]:
    target = from_profile(RECIPES / name / "kafka-4.4.0.toml")
    return target, load(target)


def rendered(profile: operations.OperatedProfile, operation: str, broker: int | None = 2) -> list[str]:
    values = profile.controller_values("b:1") if broker is None else profile.node_values(broker, "h", 1, "b:1")
    return profile.commands[operation].argv(values)


def rendered_link(profile: operations.OperatedProfile, operation: str, frm: int, to: int) -> list[str]:
    """A link's command as the operated cluster renders it: an end is a broker's values, or the
    controller's with its id as {node}."""
    def end(node: int) -> dict[str, str]:
        if node == profile.controller_id:
            return {**profile.controller, "node": str(node)}
        return profile.node_values(node, f"host-{node}", 9092, "b:1")
    return profile.commands[operation].argv(profile.link_values(end(frm), end(to), "b:1"))


def test_the_kubernetes_recipe_renders_kubectl_commands_for_each_pod() -> None:
    target, profile = recipe("kubernetes")
    caps = target.capabilities
    assert (caps.fault_control, caps.partitions, caps.controller, caps.node_logs) == (True, True, True, True)
    exec_ = ["kubectl", "--namespace", "kcts-recipe", "exec", "kafka-1", "--", "/opt/kcts/kcts-node"]
    for operation in operations.FAULTS:
        assert rendered(profile, operation) == [*exec_, operation]
    label = ["kubectl", "--namespace", "kcts-recipe", "label"]
    assert rendered(profile, "isolate") == [*label, "--overwrite", "pod", "kafka-1", "kcts-isolated=true"]
    assert rendered(profile, "heal") == [*label, "pod", "kafka-1", "kcts-isolated-"]
    assert rendered(profile, "pause_controller", None)[4] == "kafka-controller-0"
    assert rendered(profile, "logs", 3) == ["kubectl", "--namespace", "kcts-recipe", "logs", "kafka-2"]
    assert {b: v["port"] for b, v in profile.nodes.items()} == {1: "30091", 2: "30092", 3: "30093"}
    # A link is cut in the receiving pod's sidecar, naming the sending pod as its Service does.
    assert caps.links and profile.controller_id == 1000
    link = ["kubectl", "--namespace", "kcts-recipe", "exec", "kafka-1", "--container", "kcts-net", "--",
            "/bin/sh", "/opt/kcts-link/kcts-link"]
    assert rendered_link(profile, "cut", 1000, 2) == [*link, "cut", "kafka-controller-0.kafka-controller", "1000"]
    assert rendered_link(profile, "mend", 1000, 2) == [*link, "mend", "1000"]
    assert rendered_link(profile, "cut", 3, 1000)[4:5] + rendered_link(profile, "cut", 3, 1000)[-2:] == \
        ["kafka-controller-0", "kafka-2.kafka", "3"]


def test_the_systemd_recipe_renders_ssh_commands_quoted_for_the_remote_shell() -> None:
    target, profile = recipe("systemd")
    assert target.capabilities.fault_control and target.capabilities.partitions
    assert rendered(profile, "stop") == ["ssh", "-o", "BatchMode=yes", "--", "kcts@kafka-2.example.net",
                                         "sudo systemctl stop kafka"]
    assert rendered(profile, "kill")[-1] == "sudo systemctl kill --signal=SIGKILL kafka"
    assert rendered(profile, "pause_controller", None)[-2:] == [
        "kcts@kafka-controller.example.net", "sudo systemctl kill --signal=SIGSTOP kafka-controller"]
    assert "nft -f -" in rendered(profile, "isolate")[-1] and rendered(profile, "heal")[-1] == \
        "sudo nft delete table inet kcts"
    # A link: on the receiving VM, the sender's host (the controller's from its table) as one word.
    assert target.capabilities.links and profile.controller_id == 1000
    assert rendered_link(profile, "cut", 1000, 2)[-2:] == [
        "kcts@kafka-2.example.net", "sudo /usr/local/sbin/kcts-link cut kafka-controller.example.net 1000"]
    assert rendered_link(profile, "cut", 2, 1000)[-2:] == [
        "kcts@kafka-controller.example.net", "sudo /usr/local/sbin/kcts-link cut host-2 2"]
    assert rendered_link(profile, "mend", 3, 1)[-2:] == [
        "kcts@kafka-1.example.net", "sudo /usr/local/sbin/kcts-link mend 3"]
    # A unit name a shell would read is one word for the VM's shell.
    hostile = {**profile.node_values(1, "h", 1, "b"), "unit": HOSTILE}
    assert shlex.split(profile.commands["start"].argv(hostile)[-1]) == ["sudo", "systemctl", "start", HOSTILE]


# Inside a network namespace of its own: a listener on 127.0.0.1, reached from two source addresses.
_LINK_PROBE = """
import socket, subprocess, sys
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
server = socket.create_server(("127.0.0.1", 0), backlog=16)
port = server.getsockname()[1]
def reaches(source):
    with socket.socket() as s:
        s.bind((source, 0)); s.settimeout(1.0)
        try:
            s.connect(("127.0.0.1", port)); return True
        except OSError:
            return False
def link(*args):
    ran = subprocess.run(["/bin/sh", sys.argv[1], *args], capture_output=True, text=True)
    return f"{ran.returncode} {ran.stderr.strip()}"
seen = [reaches("127.0.0.2"), link("cut", "127.0.0.2", "7"), link("cut", "localhost", "8"),
        reaches("127.0.0.2"), reaches("127.0.0.1"), link("mend", "8"), reaches("127.0.0.1"),
        link("mend", "7"), reaches("127.0.0.2"), link("mend", "7"), link("cut", "127.0.0.3", "x; id")]
print(repr(seen))
"""


def test_the_recipes_link_script_drops_only_the_cut_peer_and_mend_lets_it_back(tmp_path: Path) -> None:
    """kcts-link, which every recipe's cut and mend run where the receiving broker is, run here in a
    network namespace of its own (gone with the process: nothing is left on this machine)."""
    if os.geteuid() != 0 or not shutil.which("nft") or not shutil.which("unshare"):
        pytest.skip("needs root, nft and unshare: kcts-link runs in a network namespace of its own")
    probe = subprocess.run(["unshare", "--net", sys.executable, "-c", _LINK_PROBE, str(RECIPES / "kcts-link.sh")],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    assert ast.literal_eval(probe.stdout) == [
        True, "0 ", "0 ",          # both cut: 127.0.0.2 by address, 127.0.0.1 by name
        False, False,              # neither gets through
        "0 ", True,                # 127.0.0.1 mended: it gets through again
        "0 ", True, "0 ",          # 127.0.0.2 mended too; a second mend is nothing to do
        "2 kcts-link: node id x; id is not a number"]


@pytest.mark.parametrize(("name", "tool", "operation"), [
    ("kubernetes", "kubectl", "stop"), ("systemd", "ssh", "stop"), ("containers", "docker", "stop")])
def test_a_missing_tool_is_named_with_its_operation_before_any_test(
    name: str, tool: str, operation: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    target, profile = recipe(name)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SetupError) as raised:
        BACKEND.prepare(target)
    assert f"[operations] {operation} runs {tool!r}, which is not on PATH" in str(raised.value)
    fake = tmp_path / tool
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    assert [p for p in check_programs(profile) if "/" not in p] == [tool]  # /bin/sh runs the recipe's scripts


# -- running: a command that fails, hangs or is missing is the target refusing -----------------------
def test_a_failing_command_is_refused_with_its_output(tmp_path: Path) -> None:
    log = tmp_path / "ops.log"
    ran = run(["/bin/sh", "-c", "echo no such container >&2; exit 3"], 10, log, "stop broker 2")
    assert not ran.ok and ran.returncode == 3
    text = str(operations.refusal("stop broker 2", ran, 10, log))
    assert text.startswith("the operator's command to stop broker 2 exited with code 3: /bin/sh -c")
    assert "no such container" in text and "no such container" in log.read_text()


def test_a_hanging_command_is_killed_at_its_deadline(tmp_path: Path) -> None:
    started = time.monotonic()
    # The shell's child holds its output open: the whole group goes at the deadline.
    ran = run(["/bin/sh", "-c", "echo waiting; sleep 60; echo never"], 1, tmp_path / "ops.log", "pause broker 1")
    assert time.monotonic() - started < 10 and ran.timed_out and not ran.ok
    text = str(operations.refusal("pause broker 1", ran, 1, tmp_path / "ops.log"))
    assert "did not finish within 1 s and was killed" in text and "waiting" in text


def test_a_missing_program_is_named(tmp_path: Path) -> None:
    ran = run(["/nonexistent/kubectl", "get"], 5, tmp_path / "ops.log", "start broker 1")
    assert ran.returncode is None and "/nonexistent/kubectl" in ran.missing
    assert "could not run: /nonexistent/kubectl: No such file or directory" in \
        str(operations.refusal("start broker 1", ran, 5, tmp_path / "ops.log"))
    inner = run(["/bin/sh", "-c", "kubectl-not-here get pods"], 5, tmp_path / "ops.log", "start broker 1")
    assert "exited with code 127 (a program it runs was not found)" in \
        str(operations.refusal("start broker 1", inner, 5, tmp_path / "ops.log"))


# -- the cluster: state, the ledger and its undo -----------------------------------------------------
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fake_cluster(tmp_path: Path, ops: dict[str, Any] | None = None) -> tuple[OperatedCluster, Path]:
    """An operated cluster of three brokers that answer nowhere, whose commands write what they did
    to a file (the record); start() is not called (it would ask a real Metadata)."""
    record = tmp_path / "record"
    table = {name: f"echo '{name} {{node}}' >> {record}" for name in ALL}
    table.update({name: f"echo '{name}' >> {record}" for name in operations.CONTROLLER})
    table.update(ops or {})
    target = spec(table, nodes={str(b): {"container": f"c{b}"} for b in (1, 2, 3)})
    cluster = OperatedCluster(target, tmp_path / "nodes")
    cluster._brokers = {b: ("127.0.0.1", closed_port()) for b in (1, 2, 3)}
    cluster._state = dict.fromkeys(cluster._brokers, NodeState.RUNNING)
    cluster.state.wait_registered = lambda *a, **k: None  # type: ignore[method-assign]
    return cluster, record


def records(record: Path) -> list[str]:
    return record.read_text().splitlines() if record.exists() else []


def ledger_of(cluster: OperatedCluster) -> list[dict[str, Any]]:
    path = cluster.ledger.path
    return json.loads(path.read_text())["entries"] if path.exists() else []


def test_each_fault_is_in_the_ledger_with_its_undo_until_undone(tmp_path: Path) -> None:
    cluster, record = fake_cluster(tmp_path)
    cluster.stop_node(2)
    assert cluster.node_state(2) is NodeState.STOPPED and cluster.state.running_brokers() == [1, 3]
    (entry,) = ledger_of(cluster)
    assert entry["argv"][-1].startswith("echo 'start 2'") and entry["in_flight_until"] == 0
    cluster.stop_node(2)  # idempotent: nothing runs
    cluster.start_node(2)
    assert ledger_of(cluster) == [] and not cluster.ledger.path.exists()
    cluster.pause_node(1)
    cluster.isolate_node(3)
    cluster.pause_controller()
    assert [e["what"] for e in ledger_of(cluster)] == [
        "undo 'cut broker 3 off the network'", "undo 'pause the controller'", "undo 'pause broker 1'"]
    cluster.kill_node(1)  # a paused broker is resumed, then killed
    assert records(record) == ["stop 2", "start 2", "pause 1", "isolate 3", "pause_controller", "resume 1", "kill 1"]
    cluster.close()
    # Undone in order: the network, the controller, then the brokers; then each broker's log kept.
    assert records(record)[7:] == ["heal 3", "resume_controller", "start 1", "logs 1", "logs 2", "logs 3"]
    assert (tmp_path / "nodes" / "broker-2.log").exists()
    assert not cluster.ledger.path.exists() and cluster.node_state(1) is NodeState.RUNNING
    assert "heal 3" in (tmp_path / "nodes" / "operations.log").read_text()


def test_a_failing_command_ends_the_check_target_refused_and_the_cluster_stays_whole(tmp_path: Path) -> None:
    cluster, record = fake_cluster(tmp_path, {"pause": "echo 'cannot pause: no such container' >&2; exit 1"})
    with pytest.raises(TargetRefused) as raised:
        cluster.pause_node(2)
    assert "the operator's command to pause broker 2 exited with code 1" in str(raised.value)
    assert "cannot pause: no such container" in str(raised.value)
    assert cluster.node_state(2) is NodeState.RUNNING  # kcts does not think it paused
    # The fault may or may not be in force: resumed at once and again at the close, blind (a failed
    # resume there is no error).
    assert records(record) == ["resume 2"] and cluster.ledger.entries["paused:2"].sure is False
    cluster.close()
    assert records(record)[:2] == ["resume 2", "resume 2"] and not cluster.ledger.path.exists()


def test_a_ctrl_c_while_a_command_runs_lets_it_end_before_it_propagates(tmp_path: Path) -> None:
    """What the command asked for goes on without it (the Docker daemon stops a container whether or not
    its CLI still runs): the undo must come after it, so the interrupt waits for the command."""
    go, done = tmp_path / "go", tmp_path / "done"

    def interrupt() -> None:
        # The command ends only after the interrupt, whatever the machine's load: it waits for `go`.
        os.kill(os.getpid(), signal.SIGINT)
        go.touch()

    # Ctrl-C as a terminal gives it, whatever handler an earlier test of this process left behind.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run(["/bin/sh", "-c", f"until [ -e {go} ]; do sleep 0.05; done; touch {done}"], 10,
                tmp_path / "ops.log", "stop broker 2")
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert done.exists()


@pytest.mark.parametrize("where", ["put", "settle"])
def test_a_ctrl_c_around_a_fault_s_command_leaves_the_fault_to_the_close(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Interrupted as the ledger is written (before the command, or after it): the close still starts
    the broker, whatever kcts's state of it says."""
    cluster, record = fake_cluster(tmp_path)
    real = getattr(cluster.ledger, where)

    def interrupted(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(cluster.ledger, where, interrupted)
    with pytest.raises(KeyboardInterrupt):
        cluster.stop_node(2)
    monkeypatch.undo()
    cluster.close()
    assert records(record)[-4:] == [*(["stop 2"] if where == "settle" else []), "start 2", "logs 1", "logs 2",
                                    "logs 3"][-4:]
    assert "start 2" in records(record) and not cluster.ledger.path.exists()


def test_an_undo_that_fails_at_the_close_is_an_error_naming_it(tmp_path: Path) -> None:
    cluster, _ = fake_cluster(tmp_path, {"start": "echo 'start refused' >&2; exit 2"})
    cluster.stop_node(3)
    with pytest.raises(ClusterError) as raised:
        cluster.close()
    assert "could not undo what kcts did" in str(raised.value) and "start broker 3 exited with code 2" in \
        str(raised.value)


def test_a_stopped_broker_that_still_answers_is_the_target_refusing(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, _ = fake_cluster(tmp_path)
    monkeypatch.setattr("harness.cluster.operated.GONE_TIMEOUT", 0.5)
    monkeypatch.setattr("harness.cluster.probe.metadata", lambda *a, **k: "answered")
    with pytest.raises(TargetRefused, match=r"broker 1 still answers at 127\.0\.0\.1:\d+ after the stop command"):
        cluster.stop_node(1)
    cluster.close()


def test_the_profile_s_brokers_are_held_against_the_metadata(tmp_path: Path) -> None:
    cluster, _ = fake_cluster(tmp_path)
    cluster._brokers = {1: ("127.0.0.1", 29092), 2: ("127.0.0.1", 29093), 4: ("127.0.0.1", 29095)}
    with pytest.raises(SetupError) as raised:
        cluster._check_nodes()
    text = str(raised.value)
    assert "[nodes.3] names broker 3, which the Metadata does not list" in text
    assert "the Metadata lists broker 4, which the profile has no [nodes.<id>] table for" in text
    cluster.profile.nodes[1]["port"] = "29999"
    cluster._brokers = {1: ("127.0.0.1", 29092), 2: ("127.0.0.1", 29093), 3: ("127.0.0.1", 29094)}
    with pytest.raises(SetupError, match=r"\[nodes\.1\] says broker 1 is at 127\.0\.0\.1:29999, but the target's "
                                         r"Metadata advertises it at 127\.0\.0\.1:29092"):
        cluster._check_nodes()


def test_an_unclean_command_replaces_elect_leaders_where_the_profile_has_one(tmp_path: Path) -> None:
    cluster, record = fake_cluster(tmp_path, {"unclean": "echo 'unclean {topic} {partition} {to} {container}' >> "
                                              f"{tmp_path / 'record'}"})
    assert cluster.elect_unclean_itself("t", 0, 2) is True and records(record) == ["unclean t 0 2 c2"]
    (tmp_path / "plain").mkdir()
    plain, _ = fake_cluster(tmp_path / "plain")
    assert plain.elect_unclean_itself("t", 0, 2) is False


# -- the reaper runs what is left ----------------------------------------------------------------------
def test_the_reaper_undoes_a_ledger_in_order_after_the_commands_in_flight(tmp_path: Path) -> None:
    """A fault's command that was running when the runner died runs on (what it asked for is done or
    not); the reaper waits for it, killing its group at its deadline, then runs the undo."""
    record, log = tmp_path / "record", tmp_path / "ops.log"
    flying = subprocess.Popen(["/bin/sh", "-c", f"sleep 1; echo stopped >> {record}"], start_new_session=True)
    hung = subprocess.Popen(["/bin/sh", "-c", "sleep 60"], start_new_session=True)
    entries = [
        {"what": "heal", "argv": ["/bin/sh", "-c", f"echo heal >> {record}"], "timeout": 5},
        {"what": "hangs", "argv": ["/bin/sh", "-c", "sleep 60"], "timeout": 0.5},
        {"what": "start", "argv": ["/bin/sh", "-c", f"echo start >> {record}"], "timeout": 5,
         "in_flight_pid": flying.pid, "in_flight_until": time.time() + 30},
        {"what": "resume", "argv": ["/bin/sh", "-c", f"echo resume >> {record}"], "timeout": 5,
         "in_flight_pid": hung.pid, "in_flight_until": time.time() + 1},
        {"what": "missing", "argv": ["/nonexistent/tool"], "timeout": 5},
    ]
    (tmp_path / "undo").mkdir()
    (tmp_path / "undo" / "op.json").write_text(json.dumps({"log": str(log), "entries": entries}))
    started = time.monotonic()
    lines = undo_operations(tmp_path)
    assert 1 < time.monotonic() - started < 15
    assert records(record) == ["heal", "stopped", "start", "resume"]
    assert hung.wait(5) == -signal.SIGKILL
    assert "killed after 0 s" in lines[1] and "had ended" in lines[2] and "was killed at its deadline" in lines[4]
    assert "could not run" in lines[-1] and log.read_text().count("reaper: ") == len(lines) == 7
    flying.wait()


HOLDER = """
import sys, time
from pathlib import Path
from tests.harness.test_operated_target import fake_cluster
cluster, record = fake_cluster(Path(sys.argv[1]))
cluster.stop_node(2)
cluster.pause_node(1)
print(cluster.ledger.path, flush=True)
time.sleep(600)
"""


def test_a_runner_killed_mid_fault_leaves_its_faults_to_the_reaper(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "KCTS_TMP": str(tmp_path)})
    try:
        ledger = Path(proc.stdout.readline().strip())  # type: ignore[union-attr]
        assert ledger.exists() and records(tmp_path / "record") == ["stop 2", "pause 1"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    wait_until(lambda: len(records(tmp_path / "record")) == 4, 30,
               lambda: f"the reaper ran {records(tmp_path / 'record')}")
    assert records(tmp_path / "record")[2:] == ["resume 1", "start 2"]
    wait_until(lambda: not ledger.parent.parent.exists(), 30, lambda: f"{ledger.parent.parent} still there")


MID_COMMAND = """
import sys
from pathlib import Path
from tests.harness.test_operated_target import fake_cluster
record = Path(sys.argv[1]) / "record"
cluster, _ = fake_cluster(Path(sys.argv[1]), {"stop": f"sleep 2; echo 'stop {{node}}' >> {record}"})
print(cluster.ledger.path, flush=True)
cluster.stop_node(2)
"""


def test_a_runner_killed_while_a_fault_s_command_runs_has_it_undone_after_it(tmp_path: Path) -> None:
    """The stop runs on after the runner's death, and the reaper starts the broker after the stop, not
    before it (then the broker would be left stopped)."""
    proc = subprocess.Popen([sys.executable, "-c", MID_COMMAND, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "KCTS_TMP": str(tmp_path)})
    try:
        ledger = Path(proc.stdout.readline().strip())  # type: ignore[union-attr]
        wait_until(lambda: ledger.exists() and json.loads(ledger.read_text())["entries"][0]["in_flight_pid"] > 0,
                   30, lambda: "the stop command never ran")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    wait_until(lambda: len(records(tmp_path / "record")) == 2, 30,
               lambda: f"the reaper ran {records(tmp_path / 'record')}")
    assert records(tmp_path / "record") == ["stop 2", "start 2"]


def test_the_interface_s_refusals_stay_verdicts(tmp_path: Path) -> None:
    """What the operator did not allow is the target's lack of it (a skip with its reason), not an error."""
    target = spec({k: ["true"] for k in operations.FAULTS})
    cluster = OperatedCluster(target, tmp_path)
    cluster._brokers = {1: ("127.0.0.1", closed_port())}
    cluster._state = {1: NodeState.RUNNING}
    with pytest.raises(KctsError, match="needs network partitions; the target is "):
        cluster.isolate_node(1)
    with pytest.raises(KctsError, match="needs fault control"):
        cluster.pause_controller()
    assert cluster.node_log(1) is None and cluster.node_log_size(1) == 0


# -- the containers recipe, run: nothing left stopped, paused or cut ---------------------------------
CONTAINERS = RECIPES / "containers"
NAMES = [f"kcts-recipe-broker-{b}" for b in (1, 2, 3)] + ["kcts-recipe-controller"]


def recipe_state() -> dict[str, str]:
    """Each container of the recipe: its status, whether paused, and its networks."""
    out = subprocess.run(
        ["docker", "inspect", "-f", "{{.Name}} {{.State.Status}} paused={{.State.Paused}} "
         "{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}", *NAMES],
        capture_output=True, text=True, timeout=60)
    return {line.split()[0].lstrip("/"): " ".join(line.split()[1:]) for line in out.stdout.splitlines()}


WHOLE = dict.fromkeys(NAMES, "running paused=false kcts-recipe")


@pytest.fixture(scope="module")
def containers_recipe() -> Any:
    """The recipe's cluster, started outside kcts (cluster.sh), removed at the end."""
    script = ["sh", str(CONTAINERS / "cluster.sh")]
    subprocess.run([*script, "down"], timeout=120)
    up = subprocess.run([*script, "up"], capture_output=True, text=True, timeout=300)
    assert up.returncode == 0, up.stdout + up.stderr
    yield
    subprocess.run([*script, "down"], timeout=120)


def kcts_run(tmp_path: Path, run_id: str, *args: str) -> subprocess.Popen[bytes]:
    (tmp_path / "sessions").mkdir(exist_ok=True)  # its session's root, which its reaper deletes last
    with open(tmp_path / f"{run_id}.log", "wb") as log:  # the child holds its own copy
        return subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "run", "--target-profile", str(CONTAINERS / "kafka-4.4.0.toml"),
             "--reports-dir", str(tmp_path), "--run-id", run_id, *args], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "KCTS_TMP": str(tmp_path / "sessions")}, preexec_fn=interruptible)


def cells(tmp_path: Path, run_id: str) -> dict[str, str]:
    checks = json.loads((tmp_path / run_id / "results.json").read_text())["checks"]
    return {c["nodeid"].split("::")[1]: c["cell"] for c in checks}


def mid_fault(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until a broker of the recipe is stopped by the run (its unclean election stops them)."""
    def stopped() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before any fault: {log.read_text()[-2000:]}")
        return any(s.startswith("exited") for s in recipe_state().values())

    wait_until(stopped, 300, lambda: f"no broker stopped yet: {recipe_state()}", interval=0.5)


@pytest.mark.docker
@pytest.mark.heavy
def test_the_containers_recipe_is_left_whole_after_a_pass_a_fail_a_ctrl_c_and_a_kill_9(
    containers_recipe: None, tmp_path: Path,
) -> None:
    smoke = str(REPO / "suites" / "smoke")
    passing = kcts_run(tmp_path, "pass", smoke)
    assert passing.wait(900) == 0, (tmp_path / "pass.log").read_text()[-3000:]
    assert set(cells(tmp_path, "pass").values()) == {"pass"} and recipe_state() == WHOLE

    # A check that FAILs (a proxy rule that skips the batch holding a mid-batch offset) in a run
    # whose other checks stop, kill and pause brokers.
    failing = kcts_run(tmp_path, "fail", "-p", "harness.proxy.replaying", "--proxy-rule",
                       "SkipBatchHoldingFetchOffset()", smoke)
    assert failing.wait(900) == 1, (tmp_path / "fail.log").read_text()[-3000:]
    assert "fail" in cells(tmp_path, "fail").values() and recipe_state() == WHOLE

    for how, sig in (("ctrl-c", signal.SIGINT), ("kill-9", signal.SIGKILL)):
        proc = kcts_run(tmp_path, how, smoke, "-k", "unclean")
        mid_fault(proc, tmp_path / f"{how}.log")
        proc.send_signal(sig)
        proc.wait(300)
        # The session's reaper has done its work (after kill -9: the ledger's undo) once its root is gone.
        wait_until(lambda: not list((tmp_path / "sessions").glob("kcts-*")), 300,
                   lambda how=how: f"after {how}: the reaper still runs: {list((tmp_path / 'sessions').iterdir())}")
        assert recipe_state() == WHOLE, f"after {how}: {recipe_state()}"


# -- single links ----------------------------------------------------------------------------------
LINK_OPS = {"cut": "echo 'cut {from}>{to} {from_container} {to_container}' >> {record}",
            "mend": "echo 'mend {from}>{to}' >> {record}"}


def linked_cluster(tmp_path: Path) -> tuple[OperatedCluster, Path]:
    record = tmp_path / "record"
    ops = {name: command.replace("{record}", str(record)) for name, command in LINK_OPS.items()}
    cluster, _ = fake_cluster(tmp_path, ops)
    return cluster, record


def test_cut_and_mend_give_link_faults_and_the_controller_is_an_end_where_its_id_is_given(tmp_path: Path) -> None:
    assert spec({**ALL, "cut": ["true"], "mend": ["true"]}).capabilities.links
    with pytest.raises(SetupError, match="has cut but not mend"):
        load(spec({"cut": ["true"]}))
    cluster, _ = linked_cluster(tmp_path)
    assert cluster.capabilities.links and cluster.controller_ids == []  # no [controller] id: brokers only
    profile = load(spec({"cut": "x {to_container}", "mend": ["true"]}, controller={"id": 1000, "container": "k"},
                        nodes={"1": {"container": "c1"}}))
    assert profile.controller_id == 1000
    with pytest.raises(SetupError, match=r"unknown placeholder \{to_host\}"):  # the controller has no host
        load(spec({"cut": "x {to_host}", "mend": ["true"]}, controller={"id": 1000, "container": "k"},
                  nodes={"1": {"container": "c1"}}))


def test_a_cut_link_is_in_the_ledger_until_mended_and_the_close_mends_it_first(tmp_path: Path) -> None:
    cluster, record = linked_cluster(tmp_path)
    cluster.cut_links([LinkFault(1, 3), LinkFault(3, 1)])
    cluster.cut_links([LinkFault(1, 3)])  # in force already: nothing runs
    assert records(record) == ["cut 1>3 c1 c3", "cut 3>1 c3 c1"]
    assert cluster.links_in_force() == "1->3, 3->1"
    assert [e["what"] for e in ledger_of(cluster)] == ["undo 'cut the link 1->3'", "undo 'cut the link 3->1'"]
    cluster.heal_links()
    assert records(record)[2:] == ["mend 1>3", "mend 3>1"] and ledger_of(cluster) == []
    cluster.cut_links([LinkFault(2, 1)])
    cluster.stop_node(1)
    cluster.close()
    assert records(record)[-6:] == ["stop 1", "mend 2>1", "start 1", "logs 1", "logs 2", "logs 3"]


def test_a_degraded_link_is_not_an_operated_targets_to_make(tmp_path: Path) -> None:
    cluster, record = linked_cluster(tmp_path)
    with pytest.raises(FaultControlUnavailable, match="a degraded link"):
        cluster.cut_links([LinkFault(1, 2, loss=30)])
    assert records(record) == []
