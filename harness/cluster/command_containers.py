"""A command target's nodes as containers: the same profile, each node run from an image.

A `[node]` table with `image` (harness.cluster.command) runs every node as a container of that
image instead of a process of ours:

    [node]
    image = { dockerfile = "tansu", binary = "{root}/bin/tansu" }   # docker/tansu/Dockerfile, with
                                 # the binary kcts built (harness.containers.images.ensure_binary); or
    image = "vendor/broker:1.2"  # a user's image, as it is (the local engine's, or pulled)
    container_port = 9092        # where the node listens inside its container (default 9092)
    command = ["broker", "--listener-url", "tcp://{listen_host}:{container_port}/",
               "--advertised-listener-url", "tcp://{host}:{port}/", "--storage-engine", "{postgres_url}"]

`command` is the container's arguments after the image's entry point (Docker's CMD), and `env`
its whole environment beside the image's own (nothing of this machine's environment goes in).
`{host}:{port}` stays the node's address for clients, 127.0.0.1 and a port this machine publishes
to the container's `{container_port}`; what the node must advertise. `{listen_host}` is 0.0.0.0
(inside the container: its own network namespace). `{postgres_url}`, `{postgres_host}` name the
PostgreSQL service at the run's Docker-network gateway, where it also listens for that network
alone (harness.cluster.services); the other services listen on 127.0.0.1, which a container does
not reach, so their values are refused in a container node's templates. `{data_dir}` is refused
too: a container keeps its own file system across restarts, and that is the node's data.

Every container and the network carry the session's label and the cluster's; `close` removes
them (harness.docker_engine.remove_labelled), the session reaper whatever outlives the run. Node
control goes through the Docker API (harness.containers.container): stop is `docker stop` (SIGTERM,
SIGKILL past `stop_timeout`), kill is SIGKILL, pause the cgroup freezer, and a node can be cut
off the network and reconnected (`isolate`, `heal`). Each node's output is followed into
`<log dir>/node-<id>.log`, as a process node's is.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from harness.containers.container import ContainerNode
from harness.errors import ClusterError
from harness.process.service import LogFile, ProcessState

if TYPE_CHECKING:
    from testcontainers.core.network import Network

LISTEN_HOST = "0.0.0.0"  # inside the container: its own namespace, reached only through the published port
DEFAULT_CONTAINER_PORT = 9092


class ContainerCommandNode(LogFile):
    """One node of a command target in a container; `node_id` is the harness's number for it.

    The container is created at the first `spawn`, with the arguments and environment `configure`
    set, and started again (same file system, same published port) by the next ones."""

    def __init__(self, node_id: int, port: int, container_port: int, log_path: Path) -> None:
        self.node_id = node_id
        self.name = f"node-{node_id}"
        self.port = port
        self.container_port = container_port
        self.log_path = log_path
        self.reported_id: int | None = None
        self.argv: list[str] = []
        self.env: dict[str, str] = {}
        self.image = ""
        self.box: ContainerNode | None = None
        self._where: tuple[str, Network, dict[str, str]] | None = None

    def configure(self, image: str, network: Network, container_name: str, labels: dict[str, str],
                  argv: list[str], env: dict[str, str]) -> None:
        self.image, self.argv, self.env = image, argv, env
        self._where = (container_name, network, labels)

    @property
    def command_line(self) -> str:
        return " ".join([f"docker run {self.image}", *self.argv])

    @property
    def isolated(self) -> bool:
        return self.box is not None and self.box.isolated

    # -- lifecycle -----------------------------------------------------------------------------
    def spawn(self) -> None:
        """Create or start the container and return at once; readiness is the caller's to judge."""
        if self.state is not ProcessState.STOPPED:
            return
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"\n===== start {self.name} at {time.strftime('%H:%M:%S')}: {self.command_line} "
                      "=====\n".encode())
        if self.box is None:
            if self._where is None:
                raise ClusterError(f"{self.name}: not configured before its start")
            container_name, network, labels = self._where
            self.box = ContainerNode(
                container_name, self.image, network=network, alias=self.name, labels=labels,
                log_path=self.log_path, env=self.env, published={self.container_port: self.port},
                command=self.argv,
            )
        self.box.start()

    @property
    def state(self) -> ProcessState:
        return ProcessState.STOPPED if self.box is None else self.box.state

    def check_alive(self) -> None:
        """NodeExited (with its last log lines) if its container has ended."""
        if self.box is not None:
            self.box.check_alive()

    def stop(self, timeout: float = 20.0) -> None:
        if self.box is not None:
            self.box.stop(timeout)

    def kill(self) -> None:
        if self.box is not None:
            self.box.kill()

    def pause(self) -> None:
        if self.box is not None:
            self.box.pause()

    def resume(self) -> None:
        if self.box is not None:
            self.box.resume()

    def isolate(self) -> None:
        if self.box is None:
            raise ClusterError(f"{self.name} was never started")
        self.box.isolate()

    def heal(self) -> None:
        if self.box is not None:
            self.box.heal()

    def remove(self) -> None:
        if self.box is not None:
            self.box.remove()



def network_addresses(network: Network) -> tuple[str, str]:
    """The gateway address (this machine's, on the network's bridge) and the subnet of a created network."""
    net = network._unwrap_network
    net.reload()
    for config in (net.attrs.get("IPAM") or {}).get("Config") or []:
        if config.get("Gateway") and config.get("Subnet") and ":" not in config["Subnet"]:
            return str(config["Gateway"]), str(config["Subnet"])
    raise ClusterError(f"the Docker network {network.name} has no IPv4 gateway and subnet "
                       f"(IPAM: {net.attrs.get('IPAM')}); its containers could not reach the services")


__all__ = ["DEFAULT_CONTAINER_PORT", "LISTEN_HOST", "ContainerCommandNode", "network_addresses"]
