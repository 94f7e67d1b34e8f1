"""The Docker side of one cluster: its name, its labels, the user-defined network its containers
share, and the removal of everything that carries its label."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from harness import docker_engine, session
from harness.errors import SetupError

if TYPE_CHECKING:
    from testcontainers.core.network import Network


class ClusterNetwork:
    """Names `kcts-<session>-<random>`; labels with the session (for the reaper) and the cluster."""

    def __init__(self) -> None:
        self.name = f"kcts-{session.current().id}-{uuid.uuid4().hex[:6]}"
        self.labels = docker_engine.labels(session.current().id, cluster=self.name)
        self.network: Network | None = None

    def create(self) -> Network:
        from testcontainers.core.network import Network

        network = Network(docker_network_kw={"labels": self.labels, "driver": "bridge"})
        network.name = self.name
        network.create()
        self.network = network
        return network

    def remove_all(self) -> list[str]:
        """Remove every container, network and volume of this cluster; what is still there, as errors."""
        label = f"{docker_engine.CLUSTER_LABEL}={self.name}"
        try:
            client = docker_engine.client()
            docker_engine.remove_labelled(client, label)
            left = docker_engine.leftovers(client, label)
        except SetupError as exc:
            return [f"the engine went away before clean-up: {exc}"]
        return [f"still there after removal: {left}"] if left else []
