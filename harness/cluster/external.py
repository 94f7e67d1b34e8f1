"""The external backend: a cluster that is not ours. Its state can be read, its nodes not touched."""

from __future__ import annotations

from harness import confluent
from harness.cluster.backend import Backend
from harness.cluster.base import Cluster, FaultControlUnavailable, NodeState
from harness.cluster.kinds.external import KIND  # the kind of target this module serves
from harness.cluster.model import TargetSpec
from harness.errors import SetupError
from harness.protocol.auth import from_client_config
from harness.protocol.client import RawClient
from harness.protocol.exceptions import AuthenticationFailed, ProtocolError, TlsHandshakeFailed, Unreachable

ASK_TIMEOUT = 5.0  # each raw question to a target that does not behave


class ExternalCluster(Cluster):
    def __init__(self, target: TargetSpec) -> None:
        assert target.bootstrap  # the kind's validate made sure of it
        self.target = target
        self._bootstrap = target.bootstrap
        self.extra_config = target.security.client_config()
        self.version = target.version or KIND.name  # a profile may declare its Apache Kafka release
        self._brokers: dict[int, tuple[str, int]] = {}

    def start(self) -> ExternalCluster:
        """Reach the target with the client settings given; learn its brokers from its metadata.

        The raw client asks first: an answer that is not Kafka is named as what the target did, and
        never reaches librdkafka, which a malformed Metadata answer can crash (2.16.0 segfaults on a
        v0 body answering v12)."""
        host, port = _first(self._bootstrap)
        said = self._asked(host, port)
        # Unreachable and refused credentials or certificates are librdkafka's to report (it tries
        # every bootstrap address); a TLS handshake that fails is said by both.
        if said and not isinstance(said, Unreachable | AuthenticationFailed | TlsHandshakeFailed):
            raise SetupError(f"the broker at --bootstrap-servers {host}:{port} does not answer as a Kafka "
                             f"broker; asked directly, {said}; check the address and that it is a Kafka listener")
        try:
            quiet = {**self.client_config(), "log_level": 0, "socket.connection.setup.timeout.ms": 5000}
            with confluent.admin(quiet) as a:
                md = a.list_topics(timeout=6)
        except Exception as exc:  # noqa: BLE001 - librdkafka's transport/auth errors: all one message
            direct = f"; asked directly, {said}" if said else ""
            raise SetupError(
                f"no broker answers at --bootstrap-servers {self._bootstrap}: {exc}{direct}; "
                "check the address, the TLS and SASL settings and that the target is running"
            ) from None
        self._brokers = {b.id: (b.host, b.port) for b in md.brokers.values()}
        for broker, (host, port) in sorted(self._brokers.items()):
            if said := self._asked(host, port):
                raise SetupError(
                    f"the target's Metadata names broker {broker} at {host}:{port}, which does not answer as a "
                    f"Kafka broker; asked directly, {said}; every check would wait on it: fix the brokers' "
                    "advertised listeners"
                )
        return self

    def _asked(self, host: str, port: int) -> ProtocolError | None:
        """What the broker at host:port did wrong when asked ApiVersions and Metadata directly (None
        when it answered both), over the run's TLS and SASL, so that a failed start names the
        target's misbehaviour, not only librdkafka's word for it."""
        try:
            transport = from_client_config(self.client_config())
            with RawClient.connect(host, port, timeout=ASK_TIMEOUT, client_id="kcts-ask", transport=transport) as c:
                c.send("Metadata", min(c.max_version("Metadata"), 12), {"Topics": [], "AllowAutoTopicCreation": False})
        except ProtocolError as exc:
            return exc
        return None

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


def _first(bootstrap: str) -> tuple[str, int]:
    host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
    return host.strip("[]"), int(port)


# Nothing to fetch or build: the cluster is already running.
BACKEND = Backend(kind=KIND, make=lambda target, log_dir: ExternalCluster(target), prepare=None)
