"""The external backend: a cluster that is not ours. Its state can be read, its nodes not touched."""

from __future__ import annotations

from harness.clients import kafka
from harness.cluster.base import Cluster, FaultControlUnavailable, NodeState
from harness.cluster.target import EXTERNAL, TargetSpec
from harness.errors import SetupError


class ExternalCluster(Cluster):
    def __init__(self, target: TargetSpec) -> None:
        assert target.kind == EXTERNAL and target.bootstrap
        self.target = target
        self._bootstrap = target.bootstrap
        self.extra_config = target.security.client_config()
        self.version = target.version or "external"  # a profile may declare its Apache Kafka release
        self._brokers: dict[int, tuple[str, int]] = {}

    def start(self) -> ExternalCluster:
        """Reach the target with the client settings given; learn its brokers from its metadata."""
        try:
            with kafka.admin({**self.client_config(), "log_level": 0, "socket.connection.setup.timeout.ms": 5000}) as a:
                md = a.list_topics(timeout=6)
        except Exception as exc:  # noqa: BLE001 - librdkafka's transport/auth errors: all one message
            raise SetupError(
                f"no broker answers at --bootstrap-servers {self._bootstrap}: {exc}; "
                "check the address, the SASL settings and that the target is running"
            ) from None
        self._brokers = {b.id: (b.host, b.port) for b in md.brokers.values()}
        return self

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

    def client_config(self, user: str | None = None) -> dict[str, str]:
        return {**super().client_config(user), **self.extra_config}

    def node_state(self, broker_id: int) -> NodeState:
        return NodeState.RUNNING

    def _no_control(self, broker_id: int) -> None:
        raise FaultControlUnavailable(self.target.label)

    start_node = stop_node = kill_node = pause_node = resume_node = _no_control
