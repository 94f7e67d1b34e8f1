"""Processes a command target's nodes need (a PostgreSQL, any server a profile names), and the one
managed-process helper that the command backend's nodes use too.

A profile's `[[service]]` tables name them; each is started before the nodes and stopped after
them, and exposes values to the node templates:

    [[service]]
    kind = "postgres"            # built in: initdb into scratch, then the `postgres` server itself
    database = "tansu"           # created after start; default "kcts"
    init_sql = ["schema.sql"]    # run in that database, paths relative to the profile file
    options = { max_connections = "200" }   # `-c key=value` server settings
    user = "postgres"            # who runs it when kcts runs as root (PostgreSQL refuses root)
    bin_dir = "/usr/lib/postgresql/15/bin"  # default: where `postgres` on PATH lives
    start_timeout = 60
    # exposes {postgres_url} (postgres://kcts@127.0.0.1:PORT/DATABASE), {postgres_host}, {postgres_port}
    # to container nodes (harness.cluster.command_containers), the same on the address they reach:
    # the gateway of the run's own Docker network, where it also listens, for that subnet only

    [[service]]
    kind = "command"             # any server: a command template, ready when its port accepts
    name = "minio"               # exposes {minio_host} and {minio_port}
    command = ["minio", "server", "{data_dir}", "--address", "{host}:{port}"]
    env = {}
    ready = "port"               # or "none"
    start_timeout = 60

Every process goes through `harness.process.spawn` (PR_SET_PDEATHSIG) and carries the session's
tag on its command line so that the reaper finds what PDEATHSIG did not reach: PostgreSQL as its
`cluster_name` (which each of its backends also shows in its process title), other programs in
their argv[0] unless their command places `{session_tag}` itself.
"""

from __future__ import annotations

import ipaddress
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import session
from harness.cluster.base import NodeState
from harness.errors import ClusterError, NodeExited, SetupError
from harness.process.ports import LOOPBACK, free_port
from harness.process.service import SignalledProcess, tail
from harness.process.spawn import spawn
from harness.waiting import WaitTimeout, wait_until

HOST = LOOPBACK
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


# -- profile helpers ---------------------------------------------------------------------------
def check_keys(table: Mapping[str, Any], known: Sequence[str], where: str, path: Path | None) -> None:
    """An unknown key is a typo until shown otherwise: name it, the file, and the keys that exist."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise SetupError(
            f"target profile {path}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"in {where}; known keys: {', '.join(sorted(known))}"
        )


def typed(table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str, path: Path | None,
          default: Any = None) -> Any:
    """table[key] if it has the right type (default if absent); a wrong type names the file and key."""
    if key not in table:
        return default
    value = table[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SetupError(f"target profile {path}: {where} {key} must be a {names}, not {value!r}")
    return value


def string_list(table: Mapping[str, Any], key: str, where: str, path: Path | None,
                required: bool = False) -> list[str]:
    value = table.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise SetupError(f"target profile {path}: {where} {key} must be a non-empty list of strings, not {value!r}")
    return list(value)


def string_table(table: Mapping[str, Any], key: str, where: str, path: Path | None) -> dict[str, str]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise SetupError(f"target profile {path}: {where} {key} must be a table, not {value!r}")
    return {str(k): str(v) for k, v in value.items()}


def placeholders(template: str) -> set[str]:
    return set(_PLACEHOLDER.findall(template))


def render(template: str, values: Mapping[str, str], where: str) -> str:
    """`{name}` -> values[name]; an unknown name is an error naming it and the names there are."""

    def one(m: re.Match[str]) -> str:
        try:
            return values[m.group(1)]
        except KeyError:
            raise SetupError(
                f"{where}: unknown placeholder {{{m.group(1)}}} in {template!r}; known: "
                + ", ".join(f"{{{k}}}" for k in sorted(values))
            ) from None

    return _PLACEHOLDER.sub(one, template)


def session_tag() -> str:
    """What the reaper looks for on a command line (`kcts.session=<id>`)."""
    return session.current().marker.removeprefix("-D")


def child_env(extra: Mapping[str, str]) -> dict[str, str]:
    """Our environment, the session id (inherited by every descendant, wrapper scripts' children
    included), and what the profile adds."""
    return {**os.environ, "KCTS_SESSION": session.current().id, **extra}


def port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


# -- processes ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunAs:
    """Credentials a child switches to before it runs (Popen's user/group: the switch happens in
    the child before harness.process.spawn's preexec sets PR_SET_PDEATHSIG, which a credential
    change would clear)."""

    name: str
    uid: int
    gid: int

    def popen_kwargs(self) -> dict[str, Any]:
        if os.geteuid() == self.uid:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def own(self, path: Path) -> None:
        if os.geteuid() != self.uid:
            os.chown(path, self.uid, self.gid)


class ManagedProcess(SignalledProcess):
    """One long-running child: its stdout and stderr go to `log_path`; start, stop, kill, pause, resume."""

    def __init__(self, name: str, argv: list[str], log_path: Path, *, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None, run_as: RunAs | None = None, tag_argv0: bool = True,
                 stop_signal: int = signal.SIGTERM) -> None:
        super().__init__()
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.env = dict(env or child_env({}))
        self.cwd = cwd
        self.run_as = run_as
        self.tag_argv0 = tag_argv0
        self.stop_signal = stop_signal

    @property
    def command_line(self) -> str:
        return " ".join(self.argv)

    def spawn(self) -> None:
        """Launch and return at once; readiness is the caller's to judge."""
        if self.state is not NodeState.STOPPED:
            return
        executable = resolve_executable(self.argv[0], self.name)
        argv = list(self.argv)
        tag = session_tag()
        if self.tag_argv0 and not any(tag in a for a in argv):
            # The program sees an argv[0] of its own name and the tag; exec uses `executable`.
            argv[0] = f"{argv[0]} ({tag})"
        try:
            self._launch(argv, f": {self.command_line}", executable=executable, cwd=self.cwd, env=self.env,
                         **(self.run_as.popen_kwargs() if self.run_as else {}))
        except OSError as exc:
            raise ClusterError(f"{self.name}: cannot run {self.command_line}: {exc}") from exc

    def check_alive(self) -> None:
        """NodeExited (which ends any wait at once) with the command and the log's tail."""
        if self.proc is not None and self.proc.poll() is not None:
            raise NodeExited(
                f"{self.name} exited with code {self.proc.returncode} during start-up\n"
                f"command: {self.command_line}\nlast lines of {self.log_path}:\n{self.log_tail()}"
            )



def resolve_executable(program: str, what: str) -> str:
    """A program's path: as given if it has a slash, else from PATH; a SetupError if neither runs."""
    if "/" in program:
        if os.access(program, os.X_OK) and Path(program).is_file():
            return program
        raise SetupError(f"{what}: {program} does not exist or is not executable")
    found = shutil.which(program)
    if found is None:
        raise SetupError(f"{what}: {program!r} is not on PATH ({os.environ.get('PATH', '')})")
    return found


def run_once(argv: list[str], log_path: Path, what: str, timeout: float, *, env: Mapping[str, str] | None = None,
             cwd: Path | None = None, run_as: RunAs | None = None) -> subprocess.CompletedProcess[str]:
    """A short command to its end (its output appended to `log_path` and returned); killed at the deadline."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    proc = spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                 cwd=cwd, env=dict(env or child_env({})), **(run_as.popen_kwargs() if run_as else {}))
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate(timeout=30)
        out = f"{out}\n<killed after {timeout:.0f}s>"
        proc.returncode = -signal.SIGKILL
    with open(log_path, "a") as log:
        log.write(f"$ {' '.join(argv)}  # {what}: exit {proc.returncode}\n{out}\n")
    return subprocess.CompletedProcess(argv, proc.returncode, out, "")


# -- services ----------------------------------------------------------------------------------
class Service:
    """A process the nodes need; `start` returns the values it exposes to node templates."""

    name: str
    log_path: Path

    def start(self, values: Mapping[str, str]) -> dict[str, str]:
        raise NotImplementedError

    def check_alive(self) -> None:
        """Raise NodeExited if the service's process ended."""

    def stop(self) -> None:
        raise NotImplementedError

    def serve_containers(self, gateway: str, subnet: str) -> None:
        """Before `start`: also serve the containers of a Docker network (`subnet`), which reach this
        machine at `gateway`. Only a PostgreSQL service can; a profile check refuses the others'
        values in a container node's templates (harness.cluster.command)."""

    def container_values(self) -> dict[str, str]:
        """After `start`: the values that `start` returned, as a container node reaches the service."""
        return {}


POSTGRES_KEYS = ("kind", "name", "database", "init_sql", "options", "user", "bin_dir", "start_timeout")
COMMAND_KEYS = ("kind", "name", "command", "env", "ready", "start_timeout", "stop_timeout")
SERVICE_KINDS = ("postgres", "command")
SUPERUSER = "kcts"


class PostgresService(Service):
    """A throwaway PostgreSQL: initdb in scratch, `postgres` in the foreground on loopback, trust auth.

    For container nodes (`serve_containers`) it also listens on the gateway address of the run's
    Docker network, an address of this machine that only that network's containers reach, and
    trusts connections from that network's subnet alone; never on every address.

    The server runs as itself under harness.process.spawn, not through pg_ctl, which would
    daemonize it out of reach of PDEATHSIG. Shutdown is SIGINT (PostgreSQL's fast shutdown: it
    ends client sessions rather than wait for them).
    """

    def __init__(self, table: Mapping[str, Any], profile: Path | None, log_dir: Path, index: int) -> None:
        where = f"[[service]] #{index + 1} (postgres)"
        check_keys(table, POSTGRES_KEYS, where, profile)
        self.name = typed(table, "name", str, where, profile, "postgres")
        self.database = typed(table, "database", str, where, profile, "kcts")
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", self.database):
            raise SetupError(f"target profile {profile}: {where} database {self.database!r}: use lower case, "
                             "digits and _ (it is created without quoting)")
        base = profile.parent if profile else Path.cwd()
        self.init_sql = [base / p for p in string_list(table, "init_sql", where, profile)]
        self.options = string_table(table, "options", where, profile)
        self.user = typed(table, "user", str, where, profile, None)
        self.bin_dir_option = typed(table, "bin_dir", str, where, profile, None)
        self.start_timeout = typed(table, "start_timeout", float, where, profile, 60.0)
        self.log_path = log_dir / f"{self.name}.log"
        self.where = where
        self.profile = profile
        self.server: ManagedProcess | None = None
        self.workdir: Path | None = None
        self.port: int | None = None
        self.containers: tuple[str, str] | None = None  # (gateway address, subnet) of container nodes

    # -- before any test: is everything there? -------------------------------------------------
    def check(self) -> str:
        """What `prepare` checks before any test: the binaries, the user, the init files."""
        bin_dir = self.bin_dir()
        self.run_as()
        for sql in self.init_sql:
            if not sql.is_file():
                raise SetupError(f"target profile {self.profile}: {self.where} init_sql file {sql} does not exist")
        return f"PostgreSQL from {bin_dir}"

    def bin_dir(self) -> Path:
        candidates: list[Path] = []
        if self.bin_dir_option:
            candidates.append(Path(self.bin_dir_option))
        else:
            on_path = shutil.which("postgres")
            if on_path:
                candidates.append(Path(on_path).resolve().parent)
            candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_key, reverse=True)
        for d in candidates:
            if all(os.access(d / b, os.X_OK) for b in ("postgres", "initdb", "psql")):
                return d
        looked = ", ".join(map(str, candidates)) or "PATH and /usr/lib/postgresql/*/bin"
        raise SetupError(
            f"PostgreSQL server binaries (postgres, initdb, psql) not found in {looked}: install them "
            "(apt-get install postgresql), or name their directory with bin_dir in the profile's [[service]]"
        )

    def run_as(self) -> RunAs | None:
        """PostgreSQL refuses to run as root: then it runs as `user` (default: Debian's postgres)."""
        if os.geteuid() != 0 and self.user is None:
            return None
        name = self.user or "postgres"
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise SetupError(
                f"PostgreSQL refuses to run as root, and there is no user {name!r} to run it as: create one "
                f"(useradd --system --no-create-home {name}), or name another with user = \"...\" in the "
                "profile's [[service]] (scripts/bootstrap creates the postgres user)"
            ) from None
        if entry.pw_uid == 0:
            raise SetupError(f"{self.where}: user {name!r} is root; PostgreSQL refuses to run as root")
        return RunAs(name, entry.pw_uid, entry.pw_gid)

    # -- lifecycle -----------------------------------------------------------------------------
    def serve_containers(self, gateway: str, subnet: str) -> None:
        try:
            address, network = ipaddress.ip_address(gateway), ipaddress.ip_network(subnet, strict=False)
        except ValueError as exc:
            raise ClusterError(f"{self.name}: the Docker network's gateway {gateway!r} or subnet {subnet!r} "
                               f"is not an address: {exc}") from None
        if address.is_unspecified or address not in network or network.prefixlen < 8:
            raise ClusterError(f"{self.name}: will not listen on {gateway} for {subnet}: PostgreSQL serves only "
                               "the run's own Docker network, at its gateway address")
        self.containers = (str(address), str(network))

    def start(self, values: Mapping[str, str]) -> dict[str, str]:
        bin_dir = self.bin_dir()
        run_as = self.run_as()
        self.workdir = session.current().scratch(self.name)
        data, sockets = self.workdir / "data", self.workdir / "sockets"
        sockets.mkdir()
        if run_as:
            run_as.own(self.workdir)
            run_as.own(sockets)
        env = child_env({"LC_ALL": "C", "TZ": "UTC"})
        initdb = run_once(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust", "--no-sync", "-E", "UTF8",
             "--locale=C", "--no-instructions"],
            self.log_path, "initdb", 120, env=env, cwd=self.workdir, run_as=run_as,
        )
        if initdb.returncode != 0:
            raise ClusterError(
                f"PostgreSQL initdb failed (exit {initdb.returncode}) in {data}"
                + (f" as user {run_as.name}" if run_as else "") + f":\n{_last(initdb.stdout)}"
            )
        listen = HOST
        if self.containers:
            gateway, subnet = self.containers
            listen = f"{HOST},{gateway}"
            with open(data / "pg_hba.conf", "a") as hba:
                hba.write(f"# the run's Docker network (kcts): its containers only\nhost all all {subnet} trust\n")
        port = self.port = free_port()
        settings = {
            # The tag on the command line, and in every backend's process title, for the reaper.
            "cluster_name": session_tag(),
            # Throwaway data: no durability work, so that a test cluster's storage is fast.
            "fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
            **self.options,
        }
        argv = [str(bin_dir / "postgres"), "-D", str(data), "-h", listen, "-p", str(port), "-k", str(sockets)]
        for k, v in settings.items():
            argv += ["-c", f"{k}={v}"]
        # argv[0] stays the program's path: PostgreSQL finds its installation from it.
        self.server = ManagedProcess(self.name, argv, self.log_path, env=env, cwd=self.workdir, run_as=run_as,
                                     tag_argv0=False, stop_signal=signal.SIGINT)
        self.server.spawn()
        psql = [str(bin_dir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", HOST, "-p", str(port),
                "-U", SUPERUSER]
        psql_env = child_env({"PGCONNECT_TIMEOUT": "2", "LC_ALL": "C"})
        seen = ["nothing yet"]

        def accepts() -> bool:
            assert self.server is not None
            self.server.check_alive()
            r = run_once([*psql, "-d", "postgres", "-c", "select 1"], self.workdir / "probe.log", "probe", 10,
                         env=psql_env)
            seen[0] = _last(r.stdout, 3)
            return r.returncode == 0

        try:
            wait_until(accepts, self.start_timeout, lambda: f"psql select 1: {seen[0]}", interval=0.2)
        except NodeExited as exc:
            raise ClusterError(f"PostgreSQL did not start: {exc}") from None
        except WaitTimeout as exc:
            raise ClusterError(
                f"PostgreSQL on {HOST}:{port} not accepting connections: {exc}\n"
                f"last lines of {self.log_path}:\n{tail(self.log_path)}"
            ) from None
        steps = [(["-d", "postgres", "-c", f"create database {self.database}"], f"create database {self.database}")]
        steps += [(["-d", self.database, "-f", str(sql)], f"init_sql {sql.name}") for sql in self.init_sql]
        for args, what in steps:
            r = run_once([*psql, *args], self.log_path, what, 300, env=psql_env)
            if r.returncode != 0:
                raise ClusterError(f"PostgreSQL {what} failed (exit {r.returncode}):\n{_last(r.stdout)}")
        return self._values(HOST)

    def _values(self, host: str) -> dict[str, str]:
        url = f"postgres://{SUPERUSER}@{host}:{self.port}/{self.database}"
        return {f"{self.name}_url": url, f"{self.name}_host": host, f"{self.name}_port": str(self.port)}

    def container_values(self) -> dict[str, str]:
        return self._values(self.containers[0]) if self.containers and self.port else {}

    def check_alive(self) -> None:
        if self.server is not None:
            self.server.check_alive()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(timeout=30)
        if self.workdir is not None:
            session.remove_tree(self.workdir)


class CommandService(Service):
    """Any server a profile names: a command template; ready when its port accepts (or at once)."""

    def __init__(self, table: Mapping[str, Any], profile: Path | None, log_dir: Path, index: int) -> None:
        where = f"[[service]] #{index + 1} (command)"
        check_keys(table, COMMAND_KEYS, where, profile)
        name = typed(table, "name", str, where, profile, None)
        if not name or not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            raise SetupError(f"target profile {profile}: {where} needs name = \"...\" (lower case, digits, _): "
                             "its values are {NAME_host} and {NAME_port}")
        self.name = name
        self.command = string_list(table, "command", where, profile, required=True)
        self.env = string_table(table, "env", where, profile)
        self.ready = typed(table, "ready", str, where, profile, "port")
        if self.ready not in ("port", "none"):
            raise SetupError(f"target profile {profile}: {where} ready must be \"port\" or \"none\", "
                             f"not {self.ready!r}")
        self.start_timeout = typed(table, "start_timeout", float, where, profile, 60.0)
        self.stop_timeout = typed(table, "stop_timeout", float, where, profile, 20.0)
        self.log_path = log_dir / f"{self.name}.log"
        self.where = f"target profile {profile}: {where}"
        self.process: ManagedProcess | None = None
        self.workdir: Path | None = None

    def start(self, values: Mapping[str, str]) -> dict[str, str]:
        self.workdir = session.current().scratch(self.name)
        port = free_port()
        mine = {**values, "host": HOST, "port": str(port), "data_dir": str(self.workdir)}
        argv = [render(a, mine, self.where) for a in self.command]
        env = child_env({k: render(v, mine, self.where) for k, v in self.env.items()})
        self.process = ManagedProcess(self.name, argv, self.log_path, env=env, cwd=self.workdir)
        self.process.spawn()
        if self.ready == "port":
            def up() -> bool:
                assert self.process is not None
                self.process.check_alive()
                return port_open(HOST, port)

            try:
                wait_until(up, self.start_timeout, lambda: f"{self.name} on {HOST}:{port}", interval=0.1)
            except NodeExited as exc:
                raise ClusterError(f"service {self.name} did not start: {exc}") from None
            except WaitTimeout as exc:
                raise ClusterError(f"service {self.name} never opened {HOST}:{port}: {exc}\n"
                                   f"last lines of {self.log_path}:\n{tail(self.log_path)}") from None
        return {f"{self.name}_host": HOST, f"{self.name}_port": str(port)}

    def check_alive(self) -> None:
        if self.process is not None:
            self.process.check_alive()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(self.stop_timeout)
        if self.workdir is not None:
            session.remove_tree(self.workdir)


def make_service(table: Mapping[str, Any], profile: Path | None, log_dir: Path, index: int) -> Service:
    if not isinstance(table, dict):
        raise SetupError(f"target profile {profile}: [[service]] #{index + 1} must be a table")
    kind = table.get("kind")
    if kind == "postgres":
        return PostgresService(table, profile, log_dir, index)
    if kind == "command":
        return CommandService(table, profile, log_dir, index)
    raise SetupError(f"target profile {profile}: [[service]] #{index + 1} kind = {kind!r}; "
                     f"known kinds: {', '.join(SERVICE_KINDS)}")


def service_values(table: Mapping[str, Any]) -> list[str]:
    """The placeholders a service table will expose, known before it runs (for template checks)."""
    kind = table.get("kind")
    name = table.get("name") or kind
    if kind == "postgres":
        return [f"{name}_url", f"{name}_host", f"{name}_port"]
    return [f"{name}_host", f"{name}_port"]


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", path.parent.name)) or (0,)


def _last(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
