"""The local backend: one dedicated controller and N broker JVMs on loopback."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness import confluent, session
from harness.cluster.backend import Backend
from harness.cluster.base import NodeCluster, NodeState
from harness.cluster.combined import ensure_cds_archive
from harness.cluster.kinds.apache import KIND  # the kind of target this module serves
from harness.cluster.model import Capabilities, TargetSpec
from harness.cluster.node import KafkaNode, random_kafka_uuid
from harness.cluster.tls import Certificates, Keystore, pkcs12_keystore
from harness.errors import ClusterError, FaultControlUnavailable, KctsError, NodeExited
from harness.kafka import releases
from harness.kafka.dist import DEFAULT_VERSION, KafkaDistribution, cache_root, check_java, resolve
from harness.network.links import LinkControl, LinkControlUnavailable, LinkFault
from harness.process.cds import cds_archive_path
from harness.process.ports import free_port
from harness.protocol.client import RawClient
from harness.waiting import WaitTimeout, wait_until

CONTROLLER_ID = 1000
HOST = "127.0.0.1"


# What every cluster the harness starts shares, local or in containers.
CONTROLLER_TUNING: dict[str, object] = {
    # A crashed broker is fenced, and its partitions re-elected, within seconds.
    "broker.session.timeout.ms": 3000,
    # Leaders move only when a check moves them: the periodic preferred-leader election
    # would otherwise move one in the middle of a scenario.
    "auto.leader.rebalance.enable": "false",
}


def broker_tuning(brokers: int) -> dict[str, object]:
    """A broker's settings besides its identity and listeners, in a cluster of `brokers`."""
    return {
        "broker.heartbeat.interval.ms": 250,
        "replica.lag.time.max.ms": 10000,
        "auto.create.topics.enable": "false",
        "auto.leader.rebalance.enable": "false",
        "group.initial.rebalance.delay.ms": 0,
        "offsets.topic.num.partitions": 3,
        "offsets.topic.replication.factor": min(3, brokers),
        "transaction.state.log.num.partitions": 3,
        "transaction.state.log.replication.factor": min(3, brokers),
        "transaction.state.log.min.isr": min(2, brokers),
        # Fewer threads start faster on 2 cores and carry test traffic easily.
        "num.network.threads": 1,
        "num.io.threads": 2,
        "background.threads": 2,
        "num.replica.fetchers": 1,
        "num.recovery.threads.per.data.dir": 1,
        "log.segment.bytes": 16 * 1024 * 1024,
    }


@dataclass
class SaslConfig:
    """SASL on the client listener with the StandardAuthorizer; `admin` is a super user. Every
    mechanism the release has is enabled (harness.kafka.releases: no SCRAM before 3.5); `mechanism`
    is the one the cluster's own clients use. PLAIN users live
    in the listener's JAAS entry, SCRAM users are created through the Admin API once the brokers
    are up (so that no password is on a command line, in a cached format or in a broker log)."""

    users: dict[str, str] = field(default_factory=lambda: {"admin": "admin-secret", "alice": "alice-secret"})
    super_user: str = "admin"
    mechanism: str = "PLAIN"

    def jaas(self) -> str:
        users = " ".join(f'user_{u}="{p}"' for u, p in sorted(self.users.items()))
        return (
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{self.super_user}" password="{self.users[self.super_user]}" {users};'
        )

    def client_config(self, user: str | None = None) -> dict[str, str]:
        user = user or self.super_user
        return {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": self.mechanism,
            "sasl.username": user,
            "sasl.password": self.users[user],
        }


@dataclass
class TlsConfig:
    """TLS on the client listener with `certificates` (harness.cluster.tls); `client_auth`: the
    brokers require a client certificate (mTLS), which the cluster's own clients then present."""

    certificates: Certificates
    client_auth: bool = False

    def broker_props(self, keystore: Keystore) -> dict[str, object]:
        certs = self.certificates
        prefix = "listener.name.client."
        return {
            f"{prefix}ssl.keystore.type": "PKCS12",
            f"{prefix}ssl.keystore.location": keystore.path,
            f"{prefix}ssl.keystore.password": keystore.password,
            f"{prefix}ssl.key.password": keystore.password,
            f"{prefix}ssl.truststore.type": "PEM",
            f"{prefix}ssl.truststore.location": certs.ca,
            f"{prefix}ssl.client.auth": "required" if self.client_auth else "none",
        }

    def client_config(self) -> dict[str, str]:
        certs = self.certificates
        config = {"ssl.ca.location": str(certs.ca)}
        if self.client_auth:
            config.update({
                "ssl.certificate.location": str(certs.client.cert),
                "ssl.key.location": str(certs.client.key),
                "ssl.key.password": certs.client.key_password,
            })
        return config


@dataclass
class LocalClusterSpec:
    """What to build; every field has a test-friendly default."""

    version: str = DEFAULT_VERSION
    brokers: int = 3
    features: dict[str, int] = field(default_factory=dict)
    broker_overrides: dict[str, object] = field(default_factory=dict)
    per_node_overrides: dict[int, dict[str, object]] = field(default_factory=dict)
    controller_overrides: dict[str, object] = field(default_factory=dict)
    sasl: SaslConfig | None = None
    tls: TlsConfig | None = None
    log_dir: Path | None = None
    start_timeout: float = 120.0


class LocalCluster(NodeCluster):
    def __init__(
        self, spec: LocalClusterSpec | None = None, dist: KafkaDistribution | None = None,
        target: TargetSpec | None = None,
    ) -> None:
        self.spec = spec or LocalClusterSpec()
        self.dist = dist or resolve(self.spec.version)
        self.version = self.dist.version
        self.target = target or TargetSpec(
            kind=KIND, version=self.version, brokers=self.spec.brokers, java_clients=self.version
        )
        self.cluster_id = _cluster_id()
        self.workdir = session.current().scratch(f"cluster-{self.version}")
        self.log_dir = self.spec.log_dir or (self.workdir / "node-logs")
        self.controller_port = free_port()
        self.ports = {i: free_port() for i in range(1, self.spec.brokers + 1)}
        # With SASL or TLS on the client listener, the harness reads state (and brokers replicate) on
        # a PLAINTEXT listener of its own, so that its probes need no credentials and the client
        # listener stays as configured.
        self.secured = bool(self.spec.sasl or self.spec.tls)
        self._broker_keystore: Keystore | None = None
        self.probe_ports = {i: free_port() for i in self.ports} if self.secured else dict(self.ports)
        archive = cds_archive_path(cache_root(), self.dist.version, self.dist.jars)
        self.controller = KafkaNode(
            CONTROLLER_ID, "controller", self._controller_props(), self.dist,
            self.workdir / "controller", self.log_dir / "controller-1000.log", archive,
        )
        self.brokers = {
            i: KafkaNode(
                i, "broker", self._broker_props(i), self.dist,
                self.workdir / f"broker-{i}", self.log_dir / f"broker-{i}.log", archive,
            )
            for i in self.ports
        }
        self.links, self.no_links = self._link_control()
        self._closed = False

    def _link_control(self) -> tuple[LinkControl | None, str]:
        """Each node in a cgroup of its own and the run's link rules, where this machine allows;
        otherwise why not (checks that cut links skip with it)."""
        if os.environ.get("KCTS_LINKS", "1") == "0":
            return None, "link faults are off (KCTS_LINKS=0)"
        ports = {CONTROLLER_ID: [self.controller_port]}
        ports.update({i: [self.ports[i], self.probe_ports[i]] for i in self.ports})
        try:
            links = LinkControl(session.current().id, self.workdir.name, ports)
        except LinkControlUnavailable as exc:
            return None, str(exc)
        for node_id, node in [(CONTROLLER_ID, self.controller), *self.brokers.items()]:
            node.cgroup = links.cgroup(node_id)
        return links, ""

    @property
    def capabilities(self) -> Capabilities:
        return replace(self.target.capabilities, links=self.links is not None, no_links=self.no_links)

    # -- configuration -----------------------------------------------------------------------
    def _common_props(self) -> dict[str, object]:
        return {
            "controller.quorum.voters": f"{CONTROLLER_ID}@{HOST}:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
        }

    def _controller_props(self) -> dict[str, object]:
        props: dict[str, object] = {
            **self._common_props(),
            "process.roles": "controller",
            "node.id": CONTROLLER_ID,
            "listeners": f"CONTROLLER://{HOST}:{self.controller_port}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "log.dirs": self.workdir / "controller" / "data",
            **CONTROLLER_TUNING,
        }
        if self.spec.sasl:
            props["authorizer.class.name"] = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
            props["super.users"] = f"User:{self.spec.sasl.super_user};User:ANONYMOUS"
        props.update(self.spec.controller_overrides)
        return props

    @property
    def client_protocol(self) -> str:
        return {(False, False): "PLAINTEXT", (True, False): "SASL_PLAINTEXT", (False, True): "SSL",
                (True, True): "SASL_SSL"}[(self.spec.sasl is not None, self.spec.tls is not None)]

    def _broker_props(self, node_id: int) -> dict[str, object]:
        n = self.spec.brokers
        port = self.ports[node_id]
        props: dict[str, object] = {
            **self._common_props(),
            "process.roles": "broker",
            "node.id": node_id,
            "listeners": f"CLIENT://{HOST}:{port}",
            "advertised.listeners": f"CLIENT://{HOST}:{port}",
            "listener.security.protocol.map": "CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "CLIENT",
            "log.dirs": self.workdir / f"broker-{node_id}" / "data",
            **broker_tuning(n),
        }
        if self.secured:
            probe = f"HARNESS://{HOST}:{self.probe_ports[node_id]}"
            props.update({
                "listeners": f"{props['listeners']},{probe}",
                "advertised.listeners": f"{props['advertised.listeners']},{probe}",
                "listener.security.protocol.map":
                    f"CLIENT:{self.client_protocol},CONTROLLER:PLAINTEXT,HARNESS:PLAINTEXT",
                "inter.broker.listener.name": "HARNESS",
            })
        if self.spec.sasl:
            scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            props.update({
                "sasl.enabled.mechanisms": ",".join(releases.sasl_mechanisms(self.version)),
                "listener.name.client.plain.sasl.jaas.config": self.spec.sasl.jaas(),
                "listener.name.client.scram-sha-256.sasl.jaas.config": scram,
                "listener.name.client.scram-sha-512.sasl.jaas.config": scram,
                "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "super.users": f"User:{self.spec.sasl.super_user};User:ANONYMOUS",
                "allow.everyone.if.no.acl.found": "false",
            })
        if self.spec.tls:
            props.update(self.spec.tls.broker_props(self._keystore()))
        props.update(self.spec.broker_overrides)
        props.update(self.spec.per_node_overrides.get(node_id, {}))
        return props

    def _keystore(self) -> Keystore:
        """The brokers' key and certificate as one PKCS#12 keystore (see harness.cluster.tls)."""
        assert self.spec.tls is not None
        if self._broker_keystore is None:
            broker = self.spec.tls.certificates.broker
            self._broker_keystore = pkcs12_keystore(broker.cert, broker.key, broker.key_password,
                                                    self.workdir / "broker-keystore.p12")
        return self._broker_keystore

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> LocalCluster:
        check_java()
        for node in [self.controller, *self.brokers.values()]:
            node.check_ports()
        ensure_cds_archive(self.dist)
        if self.links is not None:
            try:
                self.links.setup()
            except (OSError, KctsError) as exc:
                # A machine that refuses the cgroups or the rules loses link faults, not the cluster.
                self.links.close()
                self.links, self.no_links = None, f"link faults could not be set up here: {exc}"
                for node in [self.controller, *self.brokers.values()]:
                    node.cgroup = None
        self.controller.format_from_template(
            self.cluster_id, self.spec.features, cache_root() / "formats" / self.dist.version
        )
        self.controller.spawn()
        for broker in self.brokers.values():
            broker.write_meta_properties(self.cluster_id)
            broker.spawn()
        self._wait_ready(list(self.brokers), self.spec.start_timeout)
        if self.spec.sasl and "SCRAM-SHA-512" in releases.sasl_mechanisms(self.version):
            self._add_scram_users(self.spec.sasl)
        return self

    def _add_scram_users(self, sasl: SaslConfig) -> None:
        """Every SASL user gets SCRAM-SHA-256 and -512 credentials, set on the harness listener."""
        from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

        host, port = self.probe_address(self.broker_ids[0])
        with confluent.admin({"bootstrap.servers": f"{host}:{port}"}) as admin:
            # One mechanism a request: a request may alter each user once.
            for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
                upserts = [UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 4096), password.encode())
                           for user, password in sorted(sasl.users.items())]
                for user, future in admin.alter_user_scram_credentials(upserts).items():
                    try:
                        confluent.admin_result(admin, future, 30)
                    except Exception as exc:  # noqa: BLE001 - one message for any refusal
                        raise ClusterError(f"creating the {mechanism} credentials of {user!r} failed: {exc}") from None
        # Brokers learn credentials from the metadata log: each must know them before a client tries.
        wanted = {(user, m) for user in sasl.users for m in (1, 2)}  # SCRAM-SHA-256 is 1, -512 is 2
        for broker in self.broker_ids:
            seen: set[tuple[str, int]] = set()

            def known(broker: int = broker, seen: set[tuple[str, int]] = seen) -> bool:
                with RawClient.connect(*self.probe_address(broker), spec=self.target.protocol_specs) as c:
                    resp = c.send("DescribeUserScramCredentials", 0, {"Users": None})
                seen |= {(r["User"], i["Mechanism"]) for r in resp["Results"] for i in r["CredentialInfos"]}
                return wanted <= seen

            wait_until(known, 30, lambda b=broker, seen=seen: f"broker {b} knows SCRAM credentials {sorted(seen)}")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Brokers first, controller last: a broker's controlled shutdown needs the controller.
        errors = []
        for node in [self.controller, *self.brokers.values()]:
            node.resume()
        for node in [*self.brokers.values(), self.controller]:
            try:
                node.stop(timeout=20)
            except Exception as exc:  # noqa: BLE001 - keep stopping the rest, report at the end
                errors.append(f"{node.name}: {exc!r}")
                node.kill()
        if self.links is not None:
            self.links.close()
        session.remove_tree(self.workdir)
        if errors:
            raise ClusterError("errors while stopping nodes: " + "; ".join(errors))

    def _wait_ready(self, broker_ids: list[int], timeout: float) -> None:
        """Ready: every broker's own metadata lists all of `broker_ids` as registered and unfenced."""
        def alive() -> None:
            self.controller.check_alive()
            for b in broker_ids:
                self.brokers[b].check_alive()

        try:
            self.state.wait_registered(broker_ids, timeout, alive)
        except NodeExited as exc:
            raise ClusterError(f"Kafka {self.version} cluster did not start: {exc}") from exc
        except WaitTimeout as exc:
            tails = "\n".join(f"--- {n.name} ---\n{n.log_tail(15)}" for n in [self.controller, *self.brokers.values()])
            raise ClusterError(f"Kafka {self.version} cluster not ready: {exc}\n{tails}") from exc

    # -- addresses ---------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{HOST}:{p}" for p in self.ports.values())

    @property
    def broker_ids(self) -> list[int]:
        return list(self.brokers)

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        return HOST, self.ports[broker_id]

    def probe_address(self, broker_id: int) -> tuple[str, int]:
        return HOST, self.probe_ports[broker_id]

    def client_config(self, user: str | None = None) -> dict[str, str]:
        if not self.secured:
            return super().client_config(user)
        config = super().client_config()
        if self.spec.sasl is not None:
            if user is not None and user not in self.spec.sasl.users:
                raise ClusterError(f"no SASL user {user!r} on this cluster; users are {sorted(self.spec.sasl.users)}")
            config.update(self.spec.sasl.client_config(user))
        elif user is not None:
            raise ClusterError(f"this cluster has no SASL users, so no user {user!r}")
        if self.spec.tls is not None:
            config.update(self.spec.tls.client_config())
        return {**config, "security.protocol": self.client_protocol}

    def node(self, broker_id: int) -> KafkaNode:
        try:
            return self.brokers[broker_id]
        except KeyError:
            raise ClusterError(f"no broker {broker_id}; brokers are {self.broker_ids}") from None

    def environment(self) -> dict[str, str]:
        return {**super().environment(), "kafka_tools_version": self.dist.tools_version}

    def log_paths(self) -> list[Path]:
        return [n.log_path for n in [self.controller, *self.brokers.values()]]

    # -- node control ------------------------------------------------------------------------
    def start_node(self, broker_id: int) -> None:
        node = self.node(broker_id)
        if node.state is NodeState.PAUSED:
            node.resume()
        if node.state is NodeState.RUNNING:
            return
        node.spawn()
        # A broker started again does a cluster start's work (the JVM, the log, registering): it gets the
        # start's deadline, not a shorter one that a loaded machine outruns (a gate run at 2.7x its usual
        # time saw a restarted broker not answer within 60 s). A broker that dies ends the wait at once.
        running = [b for b in self.broker_ids if self.node_state(b) is NodeState.RUNNING]
        self._wait_ready(running, self.spec.start_timeout)

    @property
    def controller_ids(self) -> list[int]:
        return [CONTROLLER_ID]

    def cut_links(self, faults: Iterable[LinkFault]) -> None:
        if self.links is None:
            super().cut_links(faults)
            return
        try:
            self.links.apply(faults)
        except LinkControlUnavailable as exc:
            raise FaultControlUnavailable(self.target.label, str(exc)) from exc

    def heal_links(self) -> None:
        if self.links is None:
            super().heal_links()
            return
        self.links.heal()

    def deaf_to_controller(self) -> set[int]:
        return set() if self.links is None else {f.to for f in self.links.faults.values() if f.frm == CONTROLLER_ID}

    def links_in_force(self) -> str:
        return self.links.describe() if self.links is not None else self.no_links

    def pause_controller(self) -> None:
        self.controller.pause()

    def resume_controller(self) -> None:
        self.controller.resume()


def _cluster_id() -> str:
    return random_kafka_uuid()


def _make(target: TargetSpec, log_dir: Path | None) -> LocalCluster:
    assert target.version is not None
    return LocalCluster(LocalClusterSpec(version=target.version, brokers=target.brokers, log_dir=log_dir),
                        target=target)


def _prepare(target: TargetSpec) -> str:
    assert target.version is not None
    check_java()
    dist = resolve(target.version)
    return f"Apache Kafka {dist.version} ({len(dist.jars)} jars, tools {dist.tools_version})"


BACKEND = Backend(kind=KIND, make=_make, prepare=_prepare)
