"""The command backend: any broker binary under kcts's control, from a small TOML target profile.

A profile (`kcts run --target-profile FILE`, or a shipped one by name: harness/profiles/) says how
to install the binary once, which services its nodes need, how to start one node, and optionally
how to move a partition's leader. Every node is a process of ours: stop is SIGTERM (SIGKILL past
`stop_timeout`), kill is SIGKILL, pause SIGSTOP, resume SIGCONT; a node restarts on the same port
and data directory. Each node's stdout and stderr go to `<log dir>/node-<id>.log`.

    [target]                     # read by harness.cluster.target
    kind = "command"
    name = "tansu"               # names the column, and the build cache: ~/.cache/kcts/<name>/<version>
    version = "0.6.0"
    brokers = 3
    replication = false          # the brokers keep no replica logs of their own (shared storage)

    [build]                      # optional: install once (harness.cluster.builds)
    command = ["cargo", "install", "--locked", "tansu", "--version", "0.6.0", "--root", "{root}"]
    creates = "{root}/bin/tansu"
    needs = ["cargo"]
    timeout = 3600
    name = "tansu"               # optional: the cache's name when it is not the target's

    [[service]]                  # optional, any number: started before the nodes, stopped after
    kind = "postgres"            # (harness.cluster.services: postgres, or any command)
    database = "tansu"
    init_sql = ["tansu-0.6.0-postgres.sql"]

    [node]
    command = ["{root}/bin/tansu", "broker", "--listener-url", "tcp://{host}:{port}/", ...]
    env = { RUST_LOG = "info" }
    ready = "metadata"           # a Metadata request to the node answers; or "port" (it accepts)
    start_timeout = 60
    stop_timeout = 20
    tag_argv0 = true             # the session tag goes in argv[0] unless a template uses {session_tag}
    image = { dockerfile = "tansu", binary = "{root}/bin/tansu" }  # optional: each node a container
    container_port = 9092        # (harness.cluster.command_containers), `command` its arguments

    [leader_move]                # optional: how to make broker {to} lead {topic}-{partition}
    command = ["my-tool", "elect", "--bootstrap", "{bootstrap}", "{topic}", "{partition}", "{to}"]
    timeout = 60                 # a non-zero exit (or the deadline) is the target refusing the move

Node placeholders: {node_id} (1..brokers), {port}, {host} (127.0.0.1), {data_dir} (the node's own,
kept across restarts), {bootstrap} (every node's host:port), {root} (the build root),
{cluster_id} (fresh per cluster), {session_tag}, {name}, {version}, and what services expose
({postgres_url}, {postgres_host}, {postgres_port}; {NAME_host}, {NAME_port}). {host}:{port} is
where clients reach the node, and what it advertises; {listen_host}:{container_port} where it
listens: the same for a process, 0.0.0.0 and the port inside its container for a container node
(whose placeholders differ a little more: harness.cluster.command_containers). The leader-move
hook has {topic}, {partition}, {to} (a broker id as Metadata names it), {to_host}, {to_port},
{bootstrap}, {root}, {cluster_id} and the services' values.

Broker ids: with `ready = "metadata"`, each node's id is what its own Metadata answer says it is
(a node listing one broker is that broker; one listing several is the one with its {node_id}). When
those are distinct, they are the cluster's broker ids. When several nodes call themselves the same
broker (Tansu: every broker is node 111), the ids are the node numbers; the shared id still has an
address (a running node that shares it: each answers for it) and a state (running while one of them
runs), but stopping, killing or pausing it is the target refusing the premise: it names no single
process for that broker.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness import session
from harness.cluster import probe
from harness.cluster.backend import Backend
from harness.cluster.base import Cluster, NodeState
from harness.cluster.builds import BuildSpec, build_root, ensure_built
from harness.cluster.command_containers import (
    DEFAULT_CONTAINER_PORT,
    LISTEN_HOST,
    ContainerCommandNode,
    network_addresses,
)
from harness.cluster.kinds.command import KIND  # the kind of target this module serves
from harness.cluster.model import TargetSpec
from harness.cluster.node import random_kafka_uuid
from harness.cluster.services import (
    HOST,
    ManagedProcess,
    PostgresService,
    Service,
    check_keys,
    child_env,
    make_service,
    placeholders,
    port_open,
    render,
    resolve_executable,
    run_once,
    service_values,
    session_tag,
    string_list,
    string_table,
    typed,
)
from harness.containers.network import ClusterNetwork
from harness.errors import ClusterError, NodeExited, SetupError, TargetRefused
from harness.process.ports import free_port
from harness.waiting import WaitTimeout, wait_until

if TYPE_CHECKING:
    from testcontainers.core.network import Network

    import docker
    from harness.containers.images import Built

TABLES = ("build", "service", "node", "leader_move")
IGNORED = ("target", "replication_why")  # harness.cluster.target's
NODE_KEYS = ("command", "env", "ready", "start_timeout", "stop_timeout", "tag_argv0", "image", "container_port")
IMAGE_KEYS = ("dockerfile", "binary")
HOOK_KEYS = ("command", "env", "timeout")
READY = ("metadata", "port")
NODE_VALUES = ("node_id", "port", "host", "listen_host", "container_port", "data_dir", "bootstrap", "root",
               "cluster_id", "session_tag", "name", "version")
IMAGE_VALUES = ("root", "name", "version")  # in [node] image's binary
HOOK_VALUES = ("topic", "partition", "to", "to_host", "to_port", "bootstrap", "root", "cluster_id", "session_tag",
               "name", "version")


@dataclass(frozen=True)
class ImageSpec:
    """[node] image: a user's image reference, or docker/<dockerfile>/Dockerfile with a binary kcts built."""

    reference: str | None = None
    dockerfile: str | None = None
    binary: str | None = None  # a template: {root}, {name}, {version}

    @property
    def label(self) -> str:
        return self.reference or f"docker/{self.dockerfile}/Dockerfile with {self.binary}"


@dataclass(frozen=True)
class NodeSpec:
    command: list[str]
    env: dict[str, str]
    ready: str
    start_timeout: float
    stop_timeout: float
    tag_argv0: bool
    image: ImageSpec | None = None  # each node a container of it (harness.cluster.command_containers)
    container_port: int = DEFAULT_CONTAINER_PORT


@dataclass(frozen=True)
class HookSpec:
    command: list[str]
    env: dict[str, str]
    timeout: float


@dataclass(frozen=True)
class Profile:
    """A command target's profile tables, checked: typos and unknown placeholders fail here."""

    path: Path | None
    name: str
    version: str | None
    brokers: int
    build: BuildSpec | None
    services: list[dict[str, Any]]
    node: NodeSpec
    leader_move: HookSpec | None

    @property
    def root(self) -> Path:
        return build_root(self.build.name if self.build and self.build.name else self.name, self.version)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name

    @property
    def base_values(self) -> dict[str, str]:
        """The placeholders known before anything runs: {root}, {name}, {version}."""
        return {"root": str(self.root), "name": self.name, "version": str(self.version)}


def parse_image(node_table: Mapping[str, Any], path: Path | None) -> tuple[ImageSpec | None, int]:
    """[node] image and container_port (see harness.cluster.command_containers)."""
    value = node_table.get("image")
    image: ImageSpec | None = None
    if isinstance(value, str) and value.strip():
        image = ImageSpec(reference=value.strip())
    elif isinstance(value, dict):
        check_keys(value, IMAGE_KEYS, "[node] image", path)
        dockerfile = typed(value, "dockerfile", str, "[node] image", path)
        binary = typed(value, "binary", str, "[node] image", path)
        if not dockerfile or not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", dockerfile) or not binary:
            raise SetupError(f"target profile {path}: [node] image needs dockerfile = \"NAME\" (docker/NAME/"
                             "Dockerfile, lower case) and binary = \"{root}/bin/...\" (the binary it copies in)")
        unknown = placeholders(binary) - set(IMAGE_VALUES)
        if unknown:
            raise SetupError(f"target profile {path}: [node] image binary {binary!r}: unknown placeholder "
                             f"{', '.join(f'{{{u}}}' for u in sorted(unknown))}; known: "
                             "{root}, {name}, {version}")
        image = ImageSpec(dockerfile=dockerfile, binary=binary)
    elif value is not None:
        raise SetupError(f"target profile {path}: [node] image must be an image reference (\"vendor/broker:1.0\") "
                         f"or a table {{ dockerfile = \"NAME\", binary = \"{{root}}/bin/...\" }}, not {value!r}")
    port = typed(node_table, "container_port", int, "[node]", path, DEFAULT_CONTAINER_PORT)
    if image is None and "container_port" in node_table:
        raise SetupError(f"target profile {path}: [node] container_port is where a container node listens; "
                         "this [node] has no image (its nodes are processes, listening on {port})")
    if not 0 < port < 65536:
        raise SetupError(f"target profile {path}: [node] container_port {port} is not a port")
    return image, port


def load_profile(target: TargetSpec) -> Profile:
    """The profile of a command target: its tables (the target parser's, or read from its file)."""
    path: Path | None = getattr(target, "profile", None)
    tables: Mapping[str, Any] = getattr(target, "tables", None) or {}
    if not tables and path is not None:
        try:
            tables = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SetupError(f"cannot read target profile {path}: {exc}") from None
    tables = {k: v for k, v in tables.items() if k not in IGNORED}
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise SetupError(f"target profile {path}: unknown table{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(f'[{t}]' for t in unknown)}; a command target has [target], "
                         f"{', '.join(f'[{t}]' for t in TABLES if t != 'service')} and [[service]]")
    name = target.name or (Path(path).stem if path else KIND.name)
    build = BuildSpec.from_table(tables["build"], path) if "build" in tables else None
    services = tables.get("service", [])
    if not isinstance(services, list):
        raise SetupError(f"target profile {path}: write services as [[service]] tables (an array), not [service]")
    node_table = tables.get("node")
    if not isinstance(node_table, dict):
        raise SetupError(f"target profile {path}: a command target needs a [node] table with its command")
    check_keys(node_table, NODE_KEYS, "[node]", path)
    ready = typed(node_table, "ready", str, "[node]", path, "metadata")
    if ready not in READY:
        raise SetupError(f"target profile {path}: [node] ready = {ready!r}; use one of {', '.join(READY)}")
    image, container_port = parse_image(node_table, path)
    node = NodeSpec(
        command=string_list(node_table, "command", "[node]", path, required=True),
        env=string_table(node_table, "env", "[node]", path),
        ready=ready,
        start_timeout=typed(node_table, "start_timeout", float, "[node]", path, 60.0),
        stop_timeout=typed(node_table, "stop_timeout", float, "[node]", path, 20.0),
        tag_argv0=typed(node_table, "tag_argv0", bool, "[node]", path, True),
        image=image,
        container_port=container_port,
    )
    hook = None
    if "leader_move" in tables:
        table = tables["leader_move"]
        if not isinstance(table, dict):
            raise SetupError(f"target profile {path}: [leader_move] must be a table")
        check_keys(table, HOOK_KEYS, "[leader_move]", path)
        hook = HookSpec(
            command=string_list(table, "command", "[leader_move]", path, required=True),
            env=string_table(table, "env", "[leader_move]", path),
            timeout=typed(table, "timeout", float, "[leader_move]", path, 60.0),
        )
    profile = Profile(path, name, target.version, target.brokers, build, services, node, hook)
    _check_placeholders(profile)
    return profile


def _check_placeholders(profile: Profile) -> None:
    """Unknown placeholders in [node] and [leader_move] fail before anything starts."""
    exposed: list[str] = []
    reachable: list[str] = []  # what a container node reaches: a PostgreSQL service
    for i, table in enumerate(profile.services):
        if not isinstance(table, dict):
            raise SetupError(f"target profile {profile.path}: [[service]] #{i + 1} must be a table")
        exposed += service_values(table)
        if table.get("kind") == "postgres":
            reachable += service_values(table)
    node_known = [*NODE_VALUES, *exposed]
    if profile.node.image is not None:
        node_known = [v for v in NODE_VALUES if v != "data_dir"] + reachable
        for template in [*profile.node.command, *profile.node.env.values()]:
            refused = placeholders(template) & ({"data_dir"} | set(exposed) - set(reachable))
            if refused:
                raise SetupError(
                    f"target profile {profile.path}: [node] {', '.join(f'{{{r}}}' for r in sorted(refused))} in "
                    f"{template!r}: a container node has no host data directory (its container keeps its own "
                    "file system across restarts), and reaches only a PostgreSQL service (the others listen "
                    "on 127.0.0.1)")
    for where, templates, known in (
        ("[node]", [*profile.node.command, *profile.node.env.values()], node_known),
        ("[leader_move]", [*profile.leader_move.command, *profile.leader_move.env.values()]
         if profile.leader_move else [], [*HOOK_VALUES, *exposed]),
    ):
        for template in templates:
            unknown = placeholders(template) - set(known)
            if unknown:
                raise SetupError(
                    f"target profile {profile.path}: {where} unknown placeholder "
                    f"{', '.join(f'{{{u}}}' for u in sorted(unknown))} in {template!r}; known: "
                    + ", ".join(f"{{{k}}}" for k in sorted(known))
                )


def ensure_installed(profile: Profile) -> str:
    """Build what the profile's [build] says (once), and check the node's program runs (or, for
    container nodes built here, that the binary their image copies in is there)."""
    line = ensure_built(profile.build, profile.root, profile.label) if profile.build else ""
    image = profile.node.image
    if image is not None:
        if image.reference:
            return line or f"{profile.label}: the image {image.reference}"
        binary = image_binary(profile)
        if not binary.is_file():
            raise SetupError(f"the {profile.label} image's binary {binary} does not exist: build it first"
                             + ("" if profile.build else " (this profile has no [build] table to build it)"))
        return line or f"{profile.label}: {binary}"
    program = render(profile.node.command[0], profile.base_values, f"[node] of {profile.label}")
    resolve_executable(program, f"the {profile.label} node command")
    return line or f"{profile.label}: {program}"


def image_binary(profile: Profile) -> Path:
    image = profile.node.image
    assert image is not None and image.binary is not None
    return Path(render(image.binary, profile.base_values, f"target profile {profile.path}: [node] image"))


def ensure_image(profile: Profile, client: docker.DockerClient) -> Built:
    """The container nodes' image: a user's, as it is; or built (once per content) with the binary."""
    from harness.containers import images

    image = profile.node.image
    assert image is not None
    if image.reference:
        return images.require(client, image.reference)
    assert image.dockerfile is not None
    return images.ensure_binary(client, image.dockerfile, str(profile.version or "unversioned"), image_binary(profile))


def prepare(target: TargetSpec) -> str:
    """Before any test: the profile parses, the binary is built (once) and runs, the services can start;
    for container nodes, a Docker daemon answers and their image is built (once) or found."""
    profile = load_profile(target)
    parts = [ensure_installed(profile)]
    if profile.node.image is not None:
        from harness import docker_engine

        built = ensure_image(profile, docker_engine.client())
        how = f"built in {built.seconds:.0f} s" if built.seconds else "reused"
        parts.append(f"nodes in containers of {built.tag} ({how})")
    for i, table in enumerate(profile.services):
        # Only checked here, not started: the log directory is never written.
        service = make_service(table, profile.path, Path("."), i)
        if isinstance(service, PostgresService):
            parts.append(service.check())
    nodes = f"{profile.brokers} node{'s' if profile.brokers > 1 else ''}"
    return f"{'; '.join(parts)} ({nodes})"


class CommandTargetNode(Protocol):
    """What the cluster uses of a node: a process of ours (CommandNode) or a container (ContainerCommandNode)."""

    node_id: int
    name: str
    port: int
    reported_id: int | None
    log_path: Path

    @property
    def state(self) -> NodeState: ...
    @property
    def command_line(self) -> str: ...
    def spawn(self) -> None: ...
    def stop(self, timeout: float = 20.0) -> None: ...
    def kill(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def check_alive(self) -> None: ...
    def log_size(self) -> int: ...
    def log_text(self, since: int = 0) -> str: ...
    def log_tail(self, lines: int = 30) -> str: ...


class CommandNode(ManagedProcess):
    """One broker process of a command target; `node_id` is the harness's number for it."""

    def __init__(self, node_id: int, port: int, data_dir: Path, log_path: Path, tag_argv0: bool) -> None:
        super().__init__(f"node-{node_id}", [], log_path, tag_argv0=tag_argv0)
        self.node_id = node_id
        self.port = port
        self.data_dir = data_dir
        self.reported_id: int | None = None


class CommandCluster(Cluster):
    def __init__(self, target: TargetSpec, log_dir: Path | None = None) -> None:
        self.target = target
        self.profile = load_profile(target)
        self.version = self.profile.label
        self.workdir = session.current().scratch(f"command-{self.profile.name}")
        self.log_dir = log_dir or (self.workdir / "node-logs")
        self.cluster_id = random_kafka_uuid()
        self.services: list[Service] = [
            make_service(t, self.profile.path, self.log_dir, i) for i, t in enumerate(self.profile.services)
        ]
        node = self.profile.node
        self.nodes: dict[int, CommandTargetNode] = {
            i: (ContainerCommandNode(i, free_port(), node.container_port, self.log_dir / f"node-{i}.log")
                if node.image else
                CommandNode(i, free_port(), self.workdir / f"node-{i}", self.log_dir / f"node-{i}.log", node.tag_argv0))
            for i in range(1, self.profile.brokers + 1)
        }
        self.values: dict[str, str] = {}
        self.hook_log = self.log_dir / "leader-move.log"
        # Broker id (as Metadata names it) -> node; ids several nodes share -> those nodes.
        self._by_id: dict[int, CommandTargetNode] = dict(self.nodes)
        self._shared: dict[int, list[int]] = {}
        self._started_services: list[Service] = []
        self._closed = False
        # Container nodes: their image, and the run's own network (named, and labelled, as the cluster).
        self.docker: ClusterNetwork | None = None
        self.image: str | None = None
        self.network: Network | None = None

    @property
    def containers(self) -> bool:
        return self.profile.node.image is not None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> CommandCluster:
        try:
            ensure_installed(self.profile)
            self.values = {
                "host": HOST, "listen_host": HOST, "root": str(self.profile.root), "cluster_id": self.cluster_id,
                "session_tag": session_tag(), "name": self.profile.name, "version": str(self.profile.version),
                "bootstrap": self.bootstrap_servers,
            }
            if self.containers:
                self._create_network()
            for service in self.services:
                self._started_services.append(service)
                self.values.update(service.start(self.values))
            for node in self.nodes.values():
                self._configure(node)
                node.spawn()
            self._wait_ready(list(self.nodes.values()), self.profile.node.start_timeout)
            self._learn_ids()
        except BaseException:
            self.close()
            raise
        return self

    def _create_network(self) -> None:
        """The container nodes' image and network; the services also serve that network's containers."""
        from harness import docker_engine

        client = docker_engine.client()
        self.image = ensure_image(self.profile, client).tag
        self.docker = ClusterNetwork()
        self.network = self.docker.create()
        gateway, subnet = network_addresses(self.network)
        for service in self.services:
            service.serve_containers(gateway, subnet)

    def _configure(self, node: CommandTargetNode) -> None:
        values = {**self.values, "node_id": str(node.node_id), "port": str(node.port),
                  "container_port": str(node.port)}
        where = f"target profile {self.profile.path}: [node]"
        if isinstance(node, ContainerCommandNode):
            assert self.image is not None and self.network is not None and self.docker is not None
            for service in self._started_services:
                values.update(service.container_values())
            values.update(listen_host=LISTEN_HOST, container_port=str(node.container_port))
            env = {"KCTS_SESSION": session.current().id,
                   **{k: render(v, values, where) for k, v in self.profile.node.env.items()}}
            node.configure(self.image, self.network, f"{self.docker.name}-{node.name}", self.docker.labels,
                           [render(a, values, where) for a in self.profile.node.command], env)
            return
        assert isinstance(node, CommandNode)
        node.data_dir.mkdir(parents=True, exist_ok=True)
        values["data_dir"] = str(node.data_dir)
        node.argv = [render(a, values, where) for a in self.profile.node.command]
        node.env = child_env({k: render(v, values, where) for k, v in self.profile.node.env.items()})
        # The node runs in its data directory: whatever it reads or writes relative to its working
        # directory (Tansu reads a .env file there) is its own.
        node.cwd = node.data_dir

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        errors = []
        for node in self.nodes.values():
            try:
                if isinstance(node, ContainerCommandNode):
                    node.heal()
                node.resume()
            except Exception as exc:  # noqa: BLE001 - stopping and removal below are what matter
                errors.append(f"{node.name}: {exc!r}")
        for node in self.nodes.values():
            try:
                node.stop(self.profile.node.stop_timeout)
            except Exception as exc:  # noqa: BLE001 - keep stopping the rest, report at the end
                errors.append(f"{node.name}: {exc!r}")
                try:
                    node.kill()
                except Exception as again:  # noqa: BLE001
                    errors.append(f"{node.name}: {again!r}")
        if self.docker is not None:  # the engine was reached: whatever it holds of this cluster goes
            errors += self._remove_containers(self.docker)
        for service in reversed(self._started_services):
            try:
                service.stop()
            except Exception as exc:  # noqa: BLE001
                errors.append(f"{service.name}: {exc!r}")
        session.remove_tree(self.workdir)
        if errors:
            raise ClusterError("errors while stopping the command target: " + "; ".join(errors))

    def _remove_containers(self, docker: ClusterNetwork) -> list[str]:
        """Every container and the network of this cluster (by its label); what is left, as errors."""
        errors = docker.remove_all()
        for node in self.nodes.values():
            if isinstance(node, ContainerCommandNode):
                node.remove()
        return errors

    def _ready(self, node: CommandTargetNode) -> bool:
        if self.profile.node.ready == "port":
            return port_open(HOST, node.port)
        probe.metadata(HOST, node.port, topics=[], timeout=2)
        return True

    def _wait_ready(self, nodes: list[CommandTargetNode], timeout: float) -> None:
        """Every node answers (see `ready`); a node or service that exits ends the wait at once."""
        seen: dict[int, str] = {}

        def ready() -> bool:
            for service in self._started_services:
                service.check_alive()
            ok = True
            for node in nodes:
                node.check_alive()
                try:
                    if self._ready(node):
                        seen[node.node_id] = "ready"
                        continue
                    seen[node.node_id] = "port closed"
                except OSError as exc:
                    seen[node.node_id] = f"not answering ({exc.__class__.__name__})"
                ok = False
            return ok

        try:
            wait_until(ready, timeout, lambda: f"{self.profile.node.ready} readiness per node: {seen}", interval=0.1)
        except NodeExited as exc:
            raise ClusterError(f"{self.profile.label} did not start: {exc}") from None
        except WaitTimeout as exc:
            tails = "\n".join(
                f"--- {n.name} on {HOST}:{n.port}: {n.command_line}\n{n.log_tail(15)}"
                for n in nodes if seen.get(n.node_id) != "ready"
            )
            raise ClusterError(f"{self.profile.label} not ready within {timeout:.0f}s: {exc}\n{tails}") from None

    def _learn_ids(self) -> None:
        """Which broker each node says it is (see the module docstring)."""
        if self.profile.node.ready != "metadata":
            return
        for node in self.nodes.values():
            try:
                ids = probe.metadata(HOST, node.port, topics=[], timeout=5).broker_ids
            except OSError:  # it answered a moment ago; without its word, it keeps its node number
                ids = ()
            node.reported_id = ids[0] if len(ids) == 1 else node.node_id if node.node_id in ids else None
        reported = [n.reported_id for n in self.nodes.values()]
        if None not in reported and len(set(reported)) == len(reported):
            self._by_id = {n.reported_id: n for n in self.nodes.values() if n.reported_id is not None}
            self._shared = {}
            return
        self._by_id = dict(self.nodes)
        by_reported: dict[int, list[int]] = {}
        for n in self.nodes.values():
            if n.reported_id is not None:
                by_reported.setdefault(n.reported_id, []).append(n.node_id)
        self._shared = {r: ns for r, ns in by_reported.items() if len(ns) > 1 and r not in self.nodes}

    # -- addresses ---------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{HOST}:{n.port}" for n in self.nodes.values())

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._by_id)

    def node(self, broker_id: int) -> CommandTargetNode:
        try:
            return self._by_id[broker_id]
        except KeyError:
            pass
        shared = self._shared.get(broker_id)
        if shared:
            raise TargetRefused(
                f"broker {broker_id} is what every one of nodes {shared} calls itself in Metadata: the "
                f"{self.profile.label} target names no single process for broker {broker_id}, so the harness "
                "cannot act on it alone"
            )
        raise ClusterError(f"no broker {broker_id}; brokers are {self.broker_ids}")

    def _sharing(self, broker_id: int) -> list[CommandTargetNode]:
        """The nodes that all call themselves `broker_id`, if several do."""
        return [self.nodes[n] for n in self._shared.get(broker_id, [])]

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        """A node's address; for an id several nodes share, a running one of them: each answers for it."""
        sharing = self._sharing(broker_id)
        if sharing:
            running = [n for n in sharing if n.state is NodeState.RUNNING and not isolated(n)]
            return HOST, (running or sharing)[0].port
        return HOST, self.node(broker_id).port

    def environment(self) -> dict[str, str]:
        env = {**super().environment(), "command_profile": str(self.profile.path)}
        if self.image:
            env.update(image=self.image, backend="docker")
        ids = {n.node_id: n.reported_id for n in self.nodes.values()}
        if any(n != r for n, r in ids.items()):
            env["reported_broker_ids"] = ", ".join(f"node {n}: {r}" for n, r in ids.items())
        return env

    # -- evidence ----------------------------------------------------------------------------
    def log_paths(self) -> list[Path]:
        paths = [n.log_path for n in self.nodes.values()] + [s.log_path for s in self.services]
        return [*paths, self.hook_log] if self.hook_log.exists() else paths

    def node_log_size(self, broker_id: int) -> int:
        return 0 if self._sharing(broker_id) else self.node(broker_id).log_size()

    def node_log(self, broker_id: int, since: int = 0) -> str | None:
        """One node's log; None for an id several nodes share (no one log is that broker's)."""
        return None if self._sharing(broker_id) else self.node(broker_id).log_text(since)

    # -- node control ------------------------------------------------------------------------
    def node_state(self, broker_id: int) -> NodeState:
        """A node's state; for an id several nodes share, running while any of them runs."""
        sharing = self._sharing(broker_id)
        if sharing:
            states = {n.state for n in sharing}
            return next(s for s in (NodeState.RUNNING, NodeState.PAUSED, NodeState.STOPPED) if s in states)
        return self.node(broker_id).state

    def start_node(self, broker_id: int) -> None:
        node = self.node(broker_id)
        if node.state is NodeState.PAUSED:
            node.resume()
        if node.state is NodeState.RUNNING:
            return
        node.spawn()
        self._wait_ready([node], self.profile.node.start_timeout)

    def stop_node(self, broker_id: int) -> None:
        self.node(broker_id).stop(self.profile.node.stop_timeout)

    def kill_node(self, broker_id: int) -> None:
        self.node(broker_id).kill()

    def pause_node(self, broker_id: int) -> None:
        self.node(broker_id).pause()

    def resume_node(self, broker_id: int) -> None:
        self.node(broker_id).resume()

    def isolate_node(self, broker_id: int) -> None:
        """Container nodes: out of the run's network (no node, service or client reaches it, nor it them)."""
        node = self.node(broker_id)
        if not isinstance(node, ContainerCommandNode):
            super().isolate_node(broker_id)
            return
        node.isolate()

    def heal_node(self, broker_id: int) -> None:
        """Back on the run's network; returns once it answers again (see `ready`)."""
        node = self.node(broker_id)
        if not isinstance(node, ContainerCommandNode):
            super().heal_node(broker_id)
            return
        node.heal()
        if node.state is NodeState.RUNNING:
            self._wait_ready([node], self.profile.node.start_timeout)

    # -- leader moves ------------------------------------------------------------------------
    def move_leader_to(self, topic: str, partition: int, to: int) -> None:
        """Run the profile's [leader_move] hook; its failure is the target refusing the move."""
        hook = self.profile.leader_move
        if hook is None:
            super().move_leader_to(topic, partition, to)
            return
        host, port = self.broker_address(to)
        values = {**self.values, "topic": topic, "partition": str(partition), "to": str(to), "to_host": host,
                  "to_port": str(port)}
        where = f"target profile {self.profile.path}: [leader_move]"
        argv = [render(a, values, where) for a in hook.command]
        env = child_env({k: render(v, values, where) for k, v in hook.env.items()})
        try:
            result = run_once(argv, self.hook_log, f"move {topic}-{partition} to {to}", hook.timeout, env=env,
                              cwd=self.workdir)
        except OSError as exc:
            raise SetupError(f"{where}: cannot run {argv[0]}: {exc}") from exc
        if result.returncode != 0:
            how = (f"did not finish within {hook.timeout:.0f}s" if result.returncode == -9
                   else f"exited with code {result.returncode}")
            raise TargetRefused(
                f"the {self.profile.label} leader-move hook {how} asked to make broker {to} lead "
                f"{topic}-{partition}; its output (also in {self.hook_log}):\n{tail_text(result.stdout)}"
            )


def isolated(node: CommandTargetNode) -> bool:
    return isinstance(node, ContainerCommandNode) and node.isolated


def tail_text(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:]) or "<no output>"


__all__ = ["CommandCluster", "Profile", "load_profile", "prepare"]


BACKEND = Backend(kind=KIND, make=CommandCluster, prepare=prepare)
