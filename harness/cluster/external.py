"""The external backend: a cluster that is not ours. Its state can be read, its nodes not touched."""

from __future__ import annotations

from harness.cluster import probe
from harness.cluster.base import Cluster, FaultControlUnavailable, NodeState
from harness.errors import SetupError


class ExternalCluster(Cluster):
    backend = "external"

    def __init__(self, bootstrap_servers: str, extra_config: dict[str, str] | None = None) -> None:
        self._bootstrap = bootstrap_servers
        self.extra_config = extra_config or {}
        self.version = "external"
        self._brokers: dict[int, tuple[str, int]] = {}

    def start(self) -> ExternalCluster:
        errors = []
        for hostport in self._bootstrap.split(","):
            host, _, port = hostport.strip().rpartition(":")
            try:
                md = probe.metadata(host, int(port), topics=[])
            except (OSError, ValueError) as exc:
                errors.append(f"{hostport}: {exc!r}")
                continue
            self._brokers = {b: (host, int(port)) for b in md.broker_ids}
            self._discover(host, int(port))
            return self
        raise SetupError(
            f"no broker answers at --bootstrap-servers {self._bootstrap}: {'; '.join(errors)}; "
            "check the address and that the target is running"
        )

    def _discover(self, host: str, port: int) -> None:
        from confluent_kafka.admin import AdminClient

        md = AdminClient(self.client_config()).list_topics(timeout=10)
        self._brokers = {b.id: (b.host, b.port) for b in md.brokers.values()}

    def close(self) -> None:
        pass

    @property
    def bootstrap_servers(self) -> str:
        return self._bootstrap

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._brokers)

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        return self._brokers[broker_id]

    def client_config(self) -> dict[str, str]:
        return {**super().client_config(), **self.extra_config}

    def node_state(self, broker_id: int) -> NodeState:
        return NodeState.RUNNING

    def _no_control(self, broker_id: int) -> None:
        raise FaultControlUnavailable("external")

    start_node = stop_node = kill_node = pause_node = resume_node = _no_control
