"""The operator's commands of an operated target (harness/cluster/operated.py serves it): the
profile's tables read and checked, one command rendered per operation, run under a deadline, and the
ledger of what the commands left to undo.

    [target]                                  # read by harness.cluster.target
    kind = "operated"
    name = "kafka-4.4.0-containers"
    version = "4.4.0"                         # optional: its Apache Kafka release
    bootstrap = "127.0.0.1:29092"

    [nodes.1]                                 # optional: one table per broker id, as Metadata names it
    host = "127.0.0.1"                        # optional: checked against Metadata before any test
    port = 29092                              # optional: likewise
    container = "kafka-1"                     # any other value: a placeholder of broker 1's commands

    [controller]                              # optional: the values of the controller's commands
    container = "kafka-controller"

    [operations]
    timeout = 60                              # each command's deadline in seconds, unless its own says
    start_timeout = 120                       # how long a started or healed broker has to register
    stop = ["docker", "stop", "-t", "20", "{container}"]          # an argv list: no shell
    start = { command = ["docker", "start", "{container}"], timeout = 90 }
    kill = "docker kill {container}"          # a string: /bin/sh -c, every value quoted for it
    pause = ...; resume = ...                 # the five above: stop, kill and pause brokers
    isolate = ...; heal = ...                 # optional: cut a broker off the network, and back
    pause_controller = ...; resume_controller = ...   # optional: freeze the controller quorum
    logs = ["docker", "logs", "{container}"]  # optional: a broker's log (what it prints), for evidence
    move_leader = ...                         # optional: make broker {to} lead {topic}-{partition}
    unclean = ...                             # optional: elect broker {to} uncleanly (else ElectLeaders UNCLEAN)

Placeholders: a broker's commands have {node} (its id), {host} and {port} (where Metadata says it
listens), {bootstrap} and the values of its [nodes.<id>] table; the controller's, {bootstrap} and
the [controller] values; move_leader and unclean also {topic}, {partition}, {to}, {to_host},
{to_port} and the values of [nodes.<to>]. In an argv list a value fills its element as it is and no
shell ever reads it; in a shell string every value is quoted (shlex.quote). `{name:q}` quotes a
value for a shell the command itself hands it to (ssh's remote shell, `sh -c` inside a container):
once in an argv list, twice in a shell string.

A command that exits non-zero, outlives its deadline (it is killed) or cannot run (its program is
not there) is the target refusing: `harness.errors.TargetRefused` with its output. The ledger
(`Ledger`) holds, in the session's root, the undo command of every fault in force; the cluster
undoes them at its close, and the session's reaper (harness/reaper.py) runs what is left when the
runner dies, kill -9 included.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.cluster.model import TargetSpec
from harness.cluster.services import child_env
from harness.errors import SetupError, TargetRefused
from harness.process.spawn import spawn
from harness.reaper import UNDO_DIR

TABLES = ("nodes", "controller", "operations")
# The operations that make up each capability; harness.cluster.kinds.operated, which decides the
# capabilities from them and imports only the model, names the same (tests/harness/test_operated_target.py).
FAULTS = ("stop", "start", "kill", "pause", "resume")
PARTITIONS = ("isolate", "heal")
CONTROLLER = ("pause_controller", "resume_controller")
# One directed link: `{to}` stops hearing `{from}` (its packets dropped where `to` receives them),
# while clients reach both; `mend` lets it through again. Their values are each end's, prefixed.
LINKS = ("cut", "mend")
SETTINGS = ("timeout", "start_timeout")
NODE_OPERATIONS = (*FAULTS, *PARTITIONS, "logs")
PARTITION_OPERATIONS = ("move_leader", "unclean")
OPERATIONS = (*NODE_OPERATIONS, *CONTROLLER, *PARTITION_OPERATIONS, *LINKS)
# What undoes each fault, and in which order a ledger is undone: the network first (a broker started
# while cut off could not register), then the controller (brokers register with it), then brokers.
UNDO = {"isolate": "heal", "cut": "mend", "pause_controller": "resume_controller", "pause": "resume",
        "stop": "start", "kill": "start"}
UNDO_ORDER = ("mend", "heal", "resume_controller", "resume", "start")
# Every command has {bootstrap} and {profile_dir} (the folder of the profile: a recipe's own scripts).
COMMON_VALUES = ("bootstrap", "profile_dir")
NODE_VALUES = ("node", "host", "port", *COMMON_VALUES)
MOVE_VALUES = ("topic", "partition", "to", "to_host", "to_port", *COMMON_VALUES)
DEFAULT_TIMEOUT = 60.0
DEFAULT_START_TIMEOUT = 120.0
SHELL = "/bin/sh"
_PLACEHOLDER = re.compile(r"\{(\w+)(:q)?\}")
_VALUE_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Command:
    """One operation's command: an argv list (run as it is) or a shell string (`/bin/sh -c`)."""

    operation: str
    template: tuple[str, ...] | str
    timeout: float

    @property
    def shell(self) -> bool:
        return isinstance(self.template, str)

    def placeholders(self) -> set[str]:
        parts = [self.template] if isinstance(self.template, str) else list(self.template)
        return {m[1] for part in parts for m in _PLACEHOLDER.finditer(part)}

    def argv(self, values: Mapping[str, str]) -> list[str]:
        """The command to run, its placeholders filled: no value ever reaches a shell unquoted."""
        if isinstance(self.template, str):
            return [SHELL, "-c", _fill(self.template, values, shlex.quote, self.operation)]
        return [_fill(part, values, str, self.operation) for part in self.template]

    def program(self) -> str | None:
        """The program an argv list runs (None where it has a placeholder there); the shell for a string."""
        if isinstance(self.template, str):
            return SHELL
        first = self.template[0]
        return None if _PLACEHOLDER.search(first) else first


def _fill(template: str, values: Mapping[str, str], plain: Any, operation: str) -> str:
    """`{name}` -> plain(value), `{name:q}` -> that quoted once more for a shell the command hands it to."""
    def one(m: re.Match[str]) -> str:
        try:
            value = values[m[1]]
        except KeyError:
            raise SetupError(f"[operations] {operation}: unknown placeholder {{{m[1]}}} in {template!r}; known: "
                             + ", ".join(f"{{{k}}}" for k in sorted(values))) from None
        text = plain(value)
        return shlex.quote(text) if m[2] else text

    return _PLACEHOLDER.sub(one, template)


@dataclass(frozen=True)
class OperatedProfile:
    """An operated target's tables, checked: a typo or an unknown placeholder fails before any test."""

    path: Path | None
    nodes: dict[int, dict[str, str]]  # [nodes.<id>]: broker id -> its values
    controller: dict[str, str]
    commands: dict[str, Command]
    start_timeout: float

    def has(self, operation: str) -> bool:
        return operation in self.commands

    def where(self) -> str:
        return f"target profile {self.path}" if self.path else "the operated target's profile"

    def node_values(self, broker: int, host: str, port: int, bootstrap: str) -> dict[str, str]:
        return {**self.nodes.get(broker, {}), "node": str(broker), "host": host, "port": str(port),
                **self.common(bootstrap)}

    def controller_values(self, bootstrap: str) -> dict[str, str]:
        return {**self.controller, **self.common(bootstrap)}

    def common(self, bootstrap: str) -> dict[str, str]:
        return {"bootstrap": bootstrap, "profile_dir": str(self.path.resolve().parent) if self.path else "."}

    @property
    def controller_id(self) -> int | None:
        """The controller's node id ([controller] id), for link faults to and from it."""
        text = self.controller.get("id")
        return int(text) if text is not None and text.isdigit() else None

    def link_values(self, frm: dict[str, str], to: dict[str, str], bootstrap: str) -> dict[str, str]:
        """A link's values: each end's (a node's values, or the controller's with its id as {node}),
        prefixed from_ and to_; {from} and {to} are the two ids."""
        return {**{f"from_{k}": v for k, v in frm.items()}, **{f"to_{k}": v for k, v in to.items()},
                "from": frm["node"], "to": to["node"], **self.common(bootstrap)}

    def programs(self) -> dict[str, str]:
        """Each program the argv commands run (and the shell, for strings), by the first operation naming it."""
        found: dict[str, str] = {}
        for name, command in self.commands.items():
            program = command.program()
            if program:
                found.setdefault(program, name)
        return found


def load(target: TargetSpec) -> OperatedProfile:
    """The profile of an operated target, from the tables the target parser kept."""
    path = target.profile
    where = f"target profile {path}" if path else "the operated target's profile"
    tables = {k: v for k, v in target.tables.items() if k != "replication_why"}
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise SetupError(f"{where}: unknown table{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(f'[{t}]' for t in unknown)}; an operated target has [target], "
                         f"{', '.join(f'[{t}]' for t in TABLES)}")
    nodes = _nodes(tables.get("nodes", {}), where)
    controller = _values(tables.get("controller", {}), "[controller]", where)
    ops = tables.get("operations")
    if not isinstance(ops, Mapping) or not set(ops) - set(SETTINGS):
        raise SetupError(f"{where}: an operated target needs an [operations] table with the operator's commands "
                         f"(of {', '.join(OPERATIONS)}); a cluster without any is an external target "
                         "(kind = \"external\")")
    default = _seconds(ops.get("timeout", DEFAULT_TIMEOUT), "[operations] timeout", where)
    start_timeout = _seconds(ops.get("start_timeout", DEFAULT_START_TIMEOUT), "[operations] start_timeout", where)
    commands: dict[str, Command] = {}
    for name, value in ops.items():
        if name in SETTINGS:
            continue
        if name not in OPERATIONS:
            raise SetupError(f"{where}: [operations] {name} is no operation; known: {', '.join(OPERATIONS)} "
                             f"(and the settings {', '.join(SETTINGS)})")
        commands[name] = _command(name, value, default, where)
    for group, why in ((FAULTS, "a fault kcts could not undo is not one it may make"),
                       (PARTITIONS, "a broker kcts cut off must be reconnected"),
                       (CONTROLLER, "a controller kcts paused must be resumed"),
                       (LINKS, "a link kcts cut must be let through again")):
        given = [g for g in group if g in commands]
        if given and len(given) < len(group):
            missing = [g for g in group if g not in commands]
            raise SetupError(f"{where}: [operations] has {', '.join(given)} but not {', '.join(missing)}: these go "
                             f"together ({why}); give {', '.join(missing)} too, or leave out {', '.join(given)}")
    profile = OperatedProfile(path, nodes, controller, commands, start_timeout)
    _check_placeholders(profile, where)
    return profile


def _nodes(table: Any, where: str) -> dict[int, dict[str, str]]:
    if not isinstance(table, Mapping):
        raise SetupError(f"{where}: write each broker as a [nodes.<broker id>] table")
    nodes: dict[int, dict[str, str]] = {}
    for key, values in table.items():
        if not re.fullmatch(r"\d+", str(key)):
            raise SetupError(f"{where}: [nodes.{key}]: name each broker's table by its broker id, as Metadata "
                             "gives it ([nodes.1])")
        node = _values(values, f"[nodes.{key}]", where)
        if "port" in node and not (node["port"].isdigit() and 0 < int(node["port"]) < 65536):
            raise SetupError(f"{where}: [nodes.{key}] port {node['port']!r} is not a port")
        if "node" in node:
            raise SetupError(f"{where}: [nodes.{key}] node: {{node}} is the broker id, the table's own name")
        nodes[int(key)] = node
    return nodes


def _values(table: Any, name: str, where: str) -> dict[str, str]:
    if not isinstance(table, Mapping):
        raise SetupError(f"{where}: {name} must be a table of values")
    values = {}
    for key, value in table.items():
        if not _VALUE_NAME.fullmatch(key) or key in COMMON_VALUES:
            raise SetupError(f"{where}: {name} {key!r}: a value's name is letters, digits and _ (and not "
                             "bootstrap or profile_dir, which every command has)")
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise SetupError(f"{where}: {name} {key} = {value!r}: give a string or a whole number")
        values[key] = str(value)
    return values


def _seconds(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise SetupError(f"{where}: {name} = {value!r}: give a number of seconds above 0")
    return float(value)


def _command(name: str, value: Any, default: float, where: str) -> Command:
    timeout = default
    if isinstance(value, Mapping):
        extra = set(value) - {"command", "timeout"}
        if extra:
            raise SetupError(f"{where}: [operations] {name}: unknown keys {sorted(extra)}; known: command, timeout")
        timeout = _seconds(value.get("timeout", default), f"[operations] {name} timeout", where)
        value = value.get("command")
    if isinstance(value, str) and value.strip():
        return Command(name, value, timeout)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value) and value[0]:
        return Command(name, tuple(value), timeout)
    raise SetupError(f"{where}: [operations] {name}: give its command as a list of arguments "
                     f"([\"docker\", \"stop\", \"{{container}}\"], no shell), a shell string, or "
                     f"{{ command = ..., timeout = 60 }}; not {value!r}")


def _check_placeholders(profile: OperatedProfile, where: str) -> None:
    """Every placeholder of a broker's command is defined for every broker the profile lists."""
    node_keys = [set(v) for v in profile.nodes.values()] or [set()]
    common = set.intersection(*node_keys)
    for name, command in profile.commands.items():
        if name in CONTROLLER:
            known = {*COMMON_VALUES, *profile.controller}
        elif name in LINKS:
            # A link's ends may be the controller: only values the controller and every broker have.
            ends = {*NODE_VALUES[:1], *(common & set(profile.controller))} if profile.controller_id is not None \
                else {*NODE_VALUES[:3], *common}
            known = {"from", "to", *COMMON_VALUES, *(f"{side}_{v}" for side in ("from", "to") for v in ends)}
        elif name in PARTITION_OPERATIONS:
            known = {*MOVE_VALUES, *NODE_VALUES, *common}
        else:
            known = {*NODE_VALUES, *common}
        unknown = command.placeholders() - known
        if not unknown:
            continue
        lacking = [f"[nodes.{b}]" for b, v in profile.nodes.items() if unknown & set(v) != unknown]
        also = f"; {', '.join(lacking)} lack{'s' if len(lacking) == 1 else ''} it" if lacking and any(
            unknown & set(v) for v in profile.nodes.values()) else ""
        raise SetupError(f"{where}: [operations] {name}: unknown placeholder "
                         f"{', '.join(f'{{{u}}}' for u in sorted(unknown))} in {command.template!r}{also}; known: "
                         + ", ".join(f"{{{k}}}" for k in sorted(known)))


def check_programs(profile: OperatedProfile) -> list[str]:
    """Before any test: every program the commands run is there, or a SetupError names it and the
    operation; the programs, found."""
    found = []
    for program, operation in profile.programs().items():
        path = program if "/" in program else shutil.which(program)
        if path is None or not (os.access(path, os.X_OK) and Path(path).is_file()):
            where = "does not exist or is not executable" if "/" in program else \
                f"is not on PATH ({os.environ.get('PATH', '')})"
            raise SetupError(f"{profile.where()}: [operations] {operation} runs {program!r}, which {where}: "
                             "install it, or fix the command")
        found.append(program)
    return found


# -- running -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ran:
    """One command's end."""

    argv: list[str]
    returncode: int | None  # None: it never ran (its program is missing)
    output: str
    seconds: float
    timed_out: bool = False
    missing: str = ""  # why it could not run

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def how(self, timeout: float) -> str:
        if self.missing:
            return f"could not run: {self.missing}"
        if self.timed_out:
            return f"did not finish within {timeout:.0f} s and was killed"
        if self.returncode == 127:
            return "exited with code 127 (a program it runs was not found)"
        return f"exited with code {self.returncode}"


def run(argv: list[str], timeout: float, log_path: Path, what: str,
        started: Callable[[int], None] | None = None) -> Ran:
    """Run one operator command to its end (killed at its deadline), its output appended to `log_path`.

    With `started` (a command that makes a fault, whose pid it is told), the command does not die with
    the runner: killed with it, the command would leave what it asked for half done (the Docker daemon
    stops a container whether or not its CLI still runs), and the session's reaper, told its pid by
    the ledger, waits for it to end (killing its group at its deadline) before it runs the undo.

    It runs in a thread of its own (harness.process.spawn ties the child to its thread), and a Ctrl-C
    meanwhile lets it end before it propagates: what the command asked for goes on without it (the
    Docker daemon stops a container whether or not its CLI still runs), and its undo must come after."""
    start = time.monotonic()
    box: dict[str, Any] = {}
    # Waited on through an event, not Thread.join: a join that a Ctrl-C interrupted may return at once
    # when asked again, with the thread still running (CPython 3.11).
    ended = threading.Event()

    def work() -> None:
        try:
            box["done"] = _run_group(argv, log_path, what, timeout, started)
        except OSError as exc:  # the program is not there, or not executable
            box["missing"] = f"{argv[0]}: {exc.strerror or exc}"
            with open(log_path, "a") as log:
                log.write(f"$ {' '.join(argv)}  # {what}: could not run: {box['missing']}\n")
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc
        finally:
            ended.set()

    threading.Thread(target=work, name=f"operation: {what}", daemon=True).start()
    try:
        ended.wait()
    except KeyboardInterrupt:
        print(f"kcts: letting {what} end (at most {timeout:.0f} s) before undoing it", file=sys.stderr, flush=True)
        ended.wait(timeout + 20)  # _run_group kills it at its deadline, then waits 10 s at most for its output
        raise
    if "error" in box:
        raise box["error"]
    seconds = time.monotonic() - start
    if "missing" in box:
        return Ran(argv, None, "", seconds, missing=box["missing"])
    returncode, output, killed = box["done"]
    return Ran(argv, returncode, output, seconds, timed_out=killed)


def _run_group(argv: list[str], log_path: Path, what: str, timeout: float,
               started: Callable[[int], None] | None) -> tuple[int, str, bool]:
    """harness.cluster.services.run_once, in a process group of the command's own that goes whole at
    the deadline: a shell string's children (`sh -c "...; sleep 60"`) would otherwise outlive the
    shell and hold its output open. The group also keeps a Ctrl-C on the terminal from the command,
    which `run` lets end."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    how = dict(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
               env=child_env({}), start_new_session=True)
    proc = subprocess.Popen(argv, **how) if started else spawn(argv, **how)  # type: ignore[call-overload]
    if started:
        started(proc.pid)
    killed = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        killed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a child that left the group holds the pipe: its output is lost
            proc.kill()
            out = ""
        out = f"{out}\n<killed after {timeout:.0f} s>"
    with open(log_path, "a") as log:
        log.write(f"$ {shlex.join(argv)}  # {what}: {'killed' if killed else f'exit {proc.returncode}'}\n{out}\n")
    return proc.returncode, out, killed


def refusal(what: str, ran: Ran, timeout: float, log_path: Path) -> TargetRefused:
    """The target refusing, in one line and the command's output."""
    tail = "\n".join(ran.output.strip().splitlines()[-15:]) or "<no output>"
    return TargetRefused(f"the operator's command to {what} {ran.how(timeout)}: {shlex.join(ran.argv)}\n"
                         f"its output (also in {log_path}):\n{tail}")


# -- the ledger --------------------------------------------------------------------------------
@dataclass
class Entry:
    """A fault in force, and its undo command as rendered when the fault was made."""

    key: str  # "stopped:2", "paused:2", "isolated:2", "controller-paused"
    what: str  # "start broker 2"
    undo: str  # the operation that undoes it
    argv: list[str]
    timeout: float
    in_flight_until: float = 0.0  # while the command that made the fault runs: its deadline
    in_flight_pid: int = 0  # and its process (group), once it runs
    sure: bool = True  # False: the command that made it failed, so it may not be in force


@dataclass
class Ledger:
    """Every fault the operator's commands put in force and not yet undone, kept in a file of the
    session's root that the session's reaper undoes if the runner dies (harness.reaper)."""

    path: Path
    log: Path
    entries: dict[str, Entry] = field(default_factory=dict)
    # A scene may make faults from threads of its own (a nemesis beside a workload): one writer at a time.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def put(self, entry: Entry) -> None:
        with self._lock:
            self.entries[entry.key] = entry
            self._write()

    def settle(self, key: str, sure: bool = True) -> None:
        with self._lock:
            entry = self.entries.get(key)
            if entry is not None:
                entry.in_flight_until, entry.in_flight_pid, entry.sure = 0.0, 0, entry.sure and sure
                self._write()

    def flying(self, key: str, pid: int) -> None:
        """The command that makes the fault `key` runs as `pid`."""
        with self._lock:
            entry = self.entries.get(key)
            if entry is not None:
                entry.in_flight_pid = pid
                self._write()

    def drop(self, key: str) -> None:
        with self._lock:
            if self.entries.pop(key, None) is not None:
                self._write()

    def ordered(self) -> list[Entry]:
        return sorted(list(self.entries.values()), key=lambda e: UNDO_ORDER.index(e.undo))

    def _write(self) -> None:
        if not self.entries:
            self.path.unlink(missing_ok=True)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {"log": str(self.log), "entries": [
            {k: v for k, v in asdict(e).items() if k in ("what", "argv", "timeout", "in_flight_until", "in_flight_pid")}
            for e in self.ordered()]}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(body))
        os.replace(tmp, self.path)  # the reaper reads a whole ledger, never half of one


def ledger_path(root: Path, name: str) -> Path:
    return root / UNDO_DIR / f"{name}.json"
