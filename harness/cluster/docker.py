"""The docker backend: Apache Kafka in containers, one dedicated controller and N brokers.

The cluster looks to checks as a local one does; what differs is where the nodes run:
- every node is a container on one user-defined network that the cluster creates and removes;
  brokers replicate and reach the controller there, by their network aliases;
- clients reach brokers only through a port each publishes on 127.0.0.1 (its `CLIENT` listener
  advertises that address), so no traffic leaves this machine;
- node control goes through the Docker API (harness.containers.container): stop, kill, pause with the
  cgroup freezer, and `isolate_node`, which disconnects a broker from the network;
- the image is the Apache Kafka release kcts builds offline (harness.containers.images), or the
  user's own (`--image`), configured through the apache/kafka image's environment convention.

Every container and the network carry the session's label; the session reaper removes them if
this process dies before `close`.
"""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from harness import docker_engine, session
from harness.cluster.backend import Backend
from harness.cluster.base import NodeCluster, NodeState
from harness.cluster.kinds.docker import KIND  # the kind of target this module serves
from harness.cluster.local import CONTROLLER_ID, CONTROLLER_TUNING, broker_tuning
from harness.cluster.model import TargetSpec
from harness.cluster.node import COMMON_PROPS, random_kafka_uuid
from harness.containers import images
from harness.containers.container import ContainerNode
from harness.containers.network import ClusterNetwork
from harness.errors import ClusterError, NodeExited, SetupError
from harness.kafka.dist import check_java, resolve
from harness.process.jvm_launch import OPTIONS, Role
from harness.process.ports import LOOPBACK, free_port
from harness.waiting import WaitTimeout

if TYPE_CHECKING:
    from testcontainers.core.network import Network

CLIENT_PORT, INTERNAL_PORT, CONTROLLER_PORT = 9092, 9093, 9094
DATA_DIR = "/var/lib/kafka/data"
READY_LOG = r"Kafka Server started"


# A cluster start's deadline, and a restarted broker's: it does the same work (a loaded machine once
# outran a shorter one for a restart).
START_TIMEOUT = 120.0


def to_env(props: dict[str, object]) -> dict[str, str]:
    """Server properties in the apache/kafka image's environment convention (KAFKA_NODE_ID=...):
    '.' is '_', '-' is '__' and '_' is '___' (docker/kafka/kcts-entrypoint reads it back)."""
    env = {}
    for key, value in props.items():
        name = key.replace("_", "\x01").replace("-", "__").replace(".", "_").replace("\x01", "___").upper()
        env[f"KAFKA_{name}"] = str(value)
    return env


def jvm_env() -> dict[str, str]:
    """The JVM options a local node runs with (harness.process.jvm_launch), split as the image reads them."""
    opts = OPTIONS[Role.BROKER]
    heap = [o for o in opts if o.startswith(("-Xms", "-Xmx"))]
    rest = [o for o in opts if o not in heap and not o.startswith("-D")]
    # A restarted container may come back with another address; names must not be cached for long.
    return {"KAFKA_HEAP_OPTS": " ".join(heap), "KAFKA_JVM_PERFORMANCE_OPTS": " ".join(rest),
            "KAFKA_OPTS": "-Dsun.net.inetaddr.ttl=1 -Dsun.net.inetaddr.negative.ttl=0"}


def check_ports_free(ports: dict[int, int]) -> None:
    """Each broker's port on 127.0.0.1 is free now, or a `SetupError` names the one taken."""
    for b, port in ports.items():
        with socket.socket() as s:
            try:
                s.bind((LOOPBACK, port))
            except OSError as exc:
                raise SetupError(
                    f"broker {b} is to be published on {LOOPBACK}:{port}, which is already taken ({exc.strerror}): "
                    "stop what holds it, or choose other ports with --publish-from (or leave it out)") from None


class DockerCluster(NodeCluster):
    def __init__(self, target: TargetSpec, log_dir: Path | None = None) -> None:
        self.target = target
        self.version = target.version or target.image or "unknown"
        self.brokers_n = target.brokers
        self.cluster_id = random_kafka_uuid()
        self.docker = ClusterNetwork()
        self.name = self.docker.name
        self.log_dir = log_dir or session.current().scratch("docker") / "node-logs"
        # Published ports are fixed before the containers exist: each broker advertises its own.
        first = target.publish_from
        self.ports = {i: (first + i - 1 if first else free_port()) for i in range(1, self.brokers_n + 1)}
        self.image: str | None = None
        self.network: Network | None = None
        self.controller: ContainerNode | None = None
        self.nodes: dict[int, ContainerNode] = {}
        self._closed = False

    # -- configuration -----------------------------------------------------------------------
    def _common_props(self) -> dict[str, object]:
        return {
            **COMMON_PROPS,
            "controller.quorum.voters": f"{CONTROLLER_ID}@controller:{CONTROLLER_PORT}",
            "controller.listener.names": "CONTROLLER",
            "log.dirs": DATA_DIR,
        }

    def controller_props(self) -> dict[str, object]:
        return {
            **self._common_props(),
            "process.roles": "controller",
            "node.id": CONTROLLER_ID,
            "listeners": f"CONTROLLER://0.0.0.0:{CONTROLLER_PORT}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            **CONTROLLER_TUNING,
        }

    def broker_props(self, node_id: int) -> dict[str, object]:
        return {
            **self._common_props(),
            "process.roles": "broker",
            "node.id": node_id,
            "listeners": f"CLIENT://0.0.0.0:{CLIENT_PORT},INTERNAL://0.0.0.0:{INTERNAL_PORT}",
            "advertised.listeners": f"CLIENT://{LOOPBACK}:{self.ports[node_id]},INTERNAL://broker-{node_id}:{INTERNAL_PORT}",
            "listener.security.protocol.map": "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            **broker_tuning(self.brokers_n),
        }

    def _node(self, alias: str, props: dict[str, object], published: dict[int, int] | None,
              ready_log: str | None) -> ContainerNode:
        assert self.image is not None and self.network is not None
        return ContainerNode(
            f"{self.name}-{alias}", self.image, network=self.network, alias=alias, labels=self.docker.labels,
            log_path=self.log_dir / f"{alias}.log", env={**to_env(props), **jvm_env(), "CLUSTER_ID": self.cluster_id},
            published=published, ready_log=ready_log,
        )

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> DockerCluster:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        client = docker_engine.client()
        self._check_ports()
        self.image = self.resolve_image(client)
        self.network = self.docker.create()
        self.controller = self._node("controller", self.controller_props(), None, READY_LOG)
        self.nodes = {i: self._node(f"broker-{i}", self.broker_props(i), {CLIENT_PORT: self.ports[i]}, None)
                      for i in self.ports}
        # Every container at once (the engine sets each up in a fraction of a second, one after the
        # other); brokers wait for the controller on their own, and testcontainers' log wait covers it.
        with ThreadPoolExecutor(len(self.nodes) + 1, thread_name_prefix="docker-start") as pool:
            starts = [pool.submit(self.controller.start, 120), *(pool.submit(n.start) for n in self.nodes.values())]
        failed = [f.exception() for f in starts if f.exception() is not None]
        if failed:
            first = failed[0]
            if isinstance(first, (NodeExited, WaitTimeout)):
                raise ClusterError(f"Kafka {self.version} in containers did not start: {first}") from None
            raise first  # type: ignore[misc]
        self._wait_ready(list(self.nodes), START_TIMEOUT)

    def _check_ports(self) -> None:
        check_ports_free(self.ports)

    def resolve_image(self, client: object) -> str:
        if self.target.image:
            return images.require(client, self.target.image).tag  # type: ignore[arg-type]
        assert self.target.version is not None
        return images.ensure_kafka(client, resolve(self.target.version)).tag  # type: ignore[arg-type]

    def _wait_ready(self, broker_ids: list[int], timeout: float) -> None:
        assert self.controller is not None

        def alive() -> None:
            self.controller.check_alive()  # type: ignore[union-attr]
            for b in broker_ids:
                self.nodes[b].check_alive()

        try:
            self.state.wait_registered(broker_ids, timeout, alive)
        except NodeExited as exc:
            raise ClusterError(f"Kafka {self.version} in containers did not start: {exc}") from None
        except WaitTimeout as exc:
            tails = "\n".join(f"--- {n.name} ---\n{n.docker_logs(tail_lines=15)}" for n in self._all())
            raise ClusterError(f"Kafka {self.version} in containers not ready: {exc}\n{tails}") from None

    def _all(self) -> list[ContainerNode]:
        return [*self.nodes.values(), *([self.controller] if self.controller else [])]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        errors = []
        # Brokers first, controller last: a broker's controlled shutdown needs the controller.
        for node in self._all():
            try:
                node.heal()
                node.resume()
            except Exception as exc:  # noqa: BLE001 - removal below is what matters
                errors.append(f"{node.name}: {exc!r}")
        for node in self._all():
            try:
                node.stop(timeout=10)
            except Exception as exc:  # noqa: BLE001 - keep stopping the rest, report at the end
                errors.append(f"{node.name}: {exc!r}")
        errors += self.docker.remove_all()
        for node in self._all():
            node.remove()
        if errors:
            raise ClusterError("errors while removing the docker cluster: " + "; ".join(errors))

    # -- addresses ---------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{LOOPBACK}:{p}" for p in self.ports.values())

    @property
    def broker_ids(self) -> list[int]:
        return list(self.ports)

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        self.node(broker_id)
        return LOOPBACK, self.ports[broker_id]

    def node(self, broker_id: int) -> ContainerNode:
        try:
            return self.nodes[broker_id]
        except KeyError:
            raise ClusterError(f"no broker {broker_id}; brokers are {self.broker_ids}") from None

    def environment(self) -> dict[str, str]:
        return {**super().environment(), "image": self.image or "", "backend": KIND.name}

    def log_paths(self) -> list[Path]:
        return [n.log_path for n in self._all()]

    # -- node control ------------------------------------------------------------------------
    def start_node(self, broker_id: int) -> None:
        node = self.node(broker_id)
        if node.state is NodeState.RUNNING:
            return
        node.start()
        self._wait_ready([b for b in self.broker_ids if self.node_state(b) is NodeState.RUNNING
                          and not self.nodes[b].isolated], START_TIMEOUT)

    def pause_controller(self) -> None:
        assert self.controller is not None
        self.controller.pause()

    def resume_controller(self) -> None:
        if self.controller is not None:
            self.controller.resume()

    def isolate_node(self, broker_id: int) -> None:
        self.node(broker_id).isolate()

    def heal_node(self, broker_id: int) -> None:
        self.node(broker_id).heal()


def _prepare(target: TargetSpec) -> str:
    check_java()  # the Java clients, and any side cluster, run here
    if target.publish_from:
        check_ports_free({b: target.publish_from + b - 1 for b in range(1, target.brokers + 1)})
    client = docker_engine.client()
    if target.image:
        built = images.require(client, target.image)
    else:
        assert target.version is not None
        built = images.ensure_kafka(client, resolve(target.version))
    how = f"built in {built.seconds:.0f} s" if built.seconds else "reused"
    return f"Apache Kafka {target.version or ''} in containers from {built.tag} ({how})"


BACKEND = Backend(kind=KIND, make=DockerCluster, prepare=_prepare)
