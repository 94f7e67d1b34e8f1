"""A cluster seen through the protocol proxy: the way a replay makes a reference broker answer as a
buggy one did, for every check of a run.

`ProxiedCluster(inner, rules)` hands out proxy addresses wherever a check or the harness reaches a
broker (bootstrap, each broker's client listener, the probe listener the harness reads state
from), so every client, raw connection and state read sees the rules' answers, as they would see
the buggy broker's. What is not the protocol (stopping, pausing and cutting off nodes, node logs)
goes to the inner cluster as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.cluster.base import Cluster, NodeState
from harness.network.links import LinkFault
from harness.protocol.auth import without_tls
from harness.proxy.rules import Rule
from harness.proxy.server import Proxy, ProxyError


class ProxiedCluster(Cluster):
    def __init__(self, inner: Cluster, rules: Sequence[Rule], label: str = "") -> None:
        self.inner = inner
        self.target = inner.target
        self.rules = list(rules)
        self.label = label  # what the rules replay, for the report's environment
        self._proxy: Proxy | None = None

    @property
    def version(self) -> str:  # type: ignore[override]
        return self.inner.version

    @property
    def proxy(self) -> Proxy:
        if self._proxy is None:
            raise ProxyError("the proxied cluster is not started")
        return self._proxy

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ProxiedCluster:
        self.inner.start()
        try:
            upstreams: dict[tuple[str, int], str] = {}
            for b in self.inner.broker_ids:
                upstreams[self.inner.broker_address(b)] = f"broker {b}"
                upstreams.setdefault(self.inner.probe_address(b), f"broker {b} (harness listener)")
            # Bodies are dropped once answered: the proxy runs the whole session, and the checks'
            # own evidence is their raw clients' record, not this one.
            self._proxy = Proxy(list(upstreams), self.target.protocol_specs, labels=upstreams,
                                base_config=self.inner.client_config(), keep_body_bytes=0)
            self._proxy.start()
            for rule in self.rules:
                self._proxy.add(rule)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        try:
            if self._proxy is not None:
                self._proxy.stop()
        finally:
            self.inner.close()

    # -- addresses: through the proxy --------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return ",".join("{}:{}".format(*self.broker_address(b)) for b in self.inner.broker_ids)

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        return self.proxy.address_of(self.inner.broker_address(broker_id))

    def probe_address(self, broker_id: int) -> tuple[str, int]:
        return self.proxy.address_of(self.inner.probe_address(broker_id))

    def client_config(self, user: str | None = None) -> dict[str, str]:
        # The proxy holds any TLS session to the brokers; its clients speak plaintext on loopback.
        return {**without_tls(self.inner.client_config(user)), "bootstrap.servers": self.bootstrap_servers}

    # -- the rest: the inner cluster's --------------------------------------------------------
    @property
    def broker_ids(self) -> list[int]:
        return self.inner.broker_ids

    @property
    def controller_ids(self) -> list[int]:
        return self.inner.controller_ids

    def node_state(self, broker_id: int) -> NodeState:
        return self.inner.node_state(broker_id)

    def start_node(self, broker_id: int) -> None:
        self.inner.start_node(broker_id)

    def stop_node(self, broker_id: int) -> None:
        self.inner.stop_node(broker_id)

    def kill_node(self, broker_id: int) -> None:
        self.inner.kill_node(broker_id)

    def pause_node(self, broker_id: int) -> None:
        self.inner.pause_node(broker_id)

    def resume_node(self, broker_id: int) -> None:
        self.inner.resume_node(broker_id)

    def restart_node(self, broker_id: int) -> None:
        self.inner.restart_node(broker_id)

    def pause_controller(self) -> None:
        self.inner.pause_controller()

    def resume_controller(self) -> None:
        self.inner.resume_controller()

    def isolate_node(self, broker_id: int) -> None:
        self.inner.isolate_node(broker_id)

    def heal_node(self, broker_id: int) -> None:
        self.inner.heal_node(broker_id)

    def cut_links(self, faults: Iterable[LinkFault]) -> None:
        self.inner.cut_links(faults)

    def heal_links(self) -> None:
        self.inner.heal_links()

    def links_in_force(self) -> str:
        return self.inner.links_in_force()

    def move_leader_to(self, topic: str, partition: int, to: int) -> None:
        self.inner.move_leader_to(topic, partition, to)

    def deaf_to_controller(self) -> set[int]:
        return self.inner.deaf_to_controller()

    def elect_unclean_itself(self, topic: str, partition: int, to: int) -> bool:
        return self.inner.elect_unclean_itself(topic, partition, to)

    def create_topic_itself(self, name: str, partitions: int, replication_factor: int,
                            config: dict[str, str] | None, why: str) -> None:
        self.inner.create_topic_itself(name, partitions, replication_factor, config, why)

    def environment(self) -> dict[str, str]:
        rules = "; ".join(r.describe() for r in self.rules)
        return {**self.inner.environment(), "replay": self.label or "proxy rules", "replay_rules": rules}

    def log_paths(self) -> list[Path]:
        return self.inner.log_paths()

    def node_log_size(self, broker_id: int) -> int:
        return self.inner.node_log_size(broker_id)

    def node_log(self, broker_id: int, since: int = 0) -> str | None:
        return self.inner.node_log(broker_id, since)

    def __getattr__(self, name: str) -> Any:
        # Backend-specific helpers (a node's handle, a held cluster's name) stay the inner cluster's.
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
