"""The kfake backend: franz-go's fake cluster, built from the Go module proxy and run on loopback.

kfake is a second, independent implementation of the Kafka protocol, in one process with no
replication. Our main (harness/cluster/kcts_kfake/main.go) takes commands on its stdin, one JSON line each,
answered on its stdout: that is how this backend moves leaders and fakes node faults.
- stop/kill: kfake's RemoveNode; its listener and every connection to it close, and kfake gives
  each partition a random running leader with a higher epoch (one log per partition: nothing is
  lost, so stop and kill are the same). kcts-kfake answers "remove" only once all of that is done,
  a connection accepted in the instant of the stop included, so when stop_node returns the node
  answers nothing, on any connection.
- start: AddNode with the same id on the same port; kfake again gives every partition a random
  leader with a higher epoch.
- pause: every request that node receives is held (other nodes answer) until resume, which
  answers the held ones: what clients see of a SIGSTOP'd broker. After FENCE_AFTER_MS its
  leaderships move to running nodes at the next epoch, as a controller fences a frozen broker;
  unlike a fenced Apache broker it stays in Metadata's broker list.
There is no controller quorum to pause.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

from harness import session
from harness.cluster import probe
from harness.cluster.backend import Backend
from harness.cluster.base import Cluster, NodeState
from harness.cluster.fixed_addresses import FixedAddresses
from harness.cluster.kinds.kfake import KIND  # the kind of target this module serves
from harness.cluster.local import SaslConfig
from harness.cluster.model import TargetSpec
from harness.errors import ClusterError
from harness.kafka.dist import cache_root
from harness.process.gobuild import go_binary
from harness.process.json_channel import JsonLineChannel
from harness.waiting import wait_until

SOURCE = Path(__file__).resolve().parent / "kcts_kfake"


def kfake_module_version() -> str:
    for line in (SOURCE / "go.mod").read_text().splitlines():
        if "pkg/kfake " in line:
            return line.split()[-1]
    return "unknown"


def ensure_binary() -> Path:
    """Build harness/cluster/kcts_kfake (our main around the kfake package) once per source; return the binary."""
    return go_binary(SOURCE, "kcts-kfake", "kfake", cache_root() / "kfake")


def _host_port(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host, int(port)


# A paused node's leaderships move after this long, as a local Apache cluster's controller fences a
# frozen broker after broker.session.timeout.ms (harness/cluster/local.py sets 3000).
FENCE_AFTER_MS = 3000
REPLY_TIMEOUT = 30.0  # seconds for kfake to answer a command; each runs on its loop, normally in milliseconds


class KfakeCluster(FixedAddresses, Cluster):
    """kfake as a cluster with node control. With `sasl`, SASL/PLAIN with ACLs enforced: the
    super user bypasses them, every other user has none until granted (the KIP-1319 checks)."""

    def __init__(self, target: TargetSpec | None = None, sasl: SaslConfig | None = None) -> None:
        self.target = target or TargetSpec(kind=KIND, version=None)
        self.version = f"kfake {kfake_module_version()}"
        self.brokers = self.target.brokers
        self.sasl = sasl
        self._addrs: dict[int, tuple[str, int]] = {}  # every broker ever started, stopped ones too
        self._probes: dict[int, tuple[str, int]] = {}  # with SASL: kfake's credential-free way in for the harness
        self._states: dict[int, NodeState] = {}
        self._nodes_lock = threading.Lock()  # node states and the commands that change them
        self.log_path = session.current().scratch("kfake") / "kfake.log"
        self._channel = JsonLineChannel("kfake", self.log_path)

    @property
    def proc(self) -> subprocess.Popen[str] | None:
        return self._channel.proc

    def start(self) -> KfakeCluster:
        binary = ensure_binary()
        cmd = [str(binary), f"-brokers={self.brokers}", f"-tag={session.current().marker}"]
        if self.sasl is not None:
            users = ",".join(f"{u}:{p}" for u, p in sorted(self.sasl.users.items()))
            cmd += ["-sasl-users", users, "-superuser", self.sasl.super_user]
        ready = self._channel.start(cmd)
        try:
            nodes, probes = ready["nodes"], ready.get("probes") or {}
        except (KeyError, AttributeError) as exc:
            self.close()
            raise ClusterError(f"kfake did not report its addresses: {ready!r}; "
                               f"log: {self._channel.log_tail()}") from exc
        self._addrs = {int(node): _host_port(addr) for node, addr in nodes.items()}
        self._probes = {int(node): _host_port(addr) for node, addr in probes.items()}
        self._states = dict.fromkeys(self._addrs, NodeState.RUNNING)
        for b in self.broker_ids:
            self._wait_listed(b)
        return self

    def log_paths(self) -> list[Path]:
        """kfake's own log (its stderr: the control channel's complaints, its panics), for the report."""
        return [self.log_path]

    def close(self) -> None:
        self._channel.close()

    def _command(self, op: str, timeout: float = REPLY_TIMEOUT, **fields: Any) -> dict[str, Any]:
        """Send one command and return its reply; ClusterError on an error reply or no reply in time."""
        return self._channel.command(op, timeout, **fields)

    # -- addresses ---------------------------------------------------------------------------
    def probe_address(self, broker_id: int) -> tuple[str, int]:
        return self._probes.get(broker_id) or self._addrs[broker_id]

    def client_config(self, user: str | None = None) -> dict[str, str]:
        if self.sasl is None:
            return super().client_config(user)
        if user is not None and user not in self.sasl.users:
            raise ClusterError(f"no SASL user {user!r} on this kfake; users are {sorted(self.sasl.users)}")
        return {**super().client_config(), **self.sasl.client_config(user)}

    # -- node control ------------------------------------------------------------------------
    def node_state(self, broker_id: int) -> NodeState:
        try:
            return self._states[broker_id]
        except KeyError:
            raise ClusterError(f"kfake has no broker {broker_id}; its brokers are {self.broker_ids}") from None

    # Each operation reads the state, commands kfake and records the new state under one lock, so
    # that two threads stopping the same node send one "remove".
    def start_node(self, broker_id: int) -> None:
        with self._nodes_lock:
            state = self.node_state(broker_id)
            if state is NodeState.PAUSED:
                self._command("resume", node=broker_id)
                self._states[broker_id] = NodeState.RUNNING
            if state is not NodeState.STOPPED:
                return
            self._command("add", node=broker_id, port=self._addrs[broker_id][1])
            self._states[broker_id] = NodeState.RUNNING
        self._wait_listed(broker_id)

    def stop_node(self, broker_id: int) -> None:
        with self._nodes_lock:
            if self.node_state(broker_id) is not NodeState.STOPPED:
                # answered once its listener and every connection to it are closed (main.go's remove)
                self._command("remove", node=broker_id)
                self._states[broker_id] = NodeState.STOPPED

    def kill_node(self, broker_id: int) -> None:
        self.stop_node(broker_id)  # one log per partition, in one process: a crash loses what a clean stop does

    def pause_node(self, broker_id: int) -> None:
        with self._nodes_lock:
            if self.node_state(broker_id) is NodeState.RUNNING:
                self._command("pause", node=broker_id, fence_ms=FENCE_AFTER_MS)
                self._states[broker_id] = NodeState.PAUSED

    def resume_node(self, broker_id: int) -> None:
        with self._nodes_lock:
            if self.node_state(broker_id) is NodeState.PAUSED:
                self._command("resume", node=broker_id)
                self._states[broker_id] = NodeState.RUNNING

    def move_leader_to(self, topic: str, partition: int, to: int) -> None:
        """kfake's MoveTopicPartition: `to` leads at once, at the next leader epoch."""
        self._command("move", topic=topic, partition=partition, node=to)

    def _wait_listed(self, broker_id: int, timeout: float = 30.0) -> None:
        """Until every running broker's Metadata lists `broker_id` (kfake changes its broker list on
        its loop, so this is at once; the wait is for the listener and the sockets)."""
        seen: dict[int, object] = {}

        def listed() -> bool:
            for b in self.state.running_brokers():
                try:
                    ids = probe.metadata(*self.probe_address(b), topics=[], timeout=2).broker_ids
                except OSError as exc:
                    seen[b] = exc
                    return False
                seen[b] = ids
                if broker_id not in ids:
                    return False
            return True

        wait_until(listed, timeout, lambda: f"kfake broker {broker_id} listed by every running broker: {seen}")


def _sasl_side_cluster(name: str) -> KfakeCluster:
    # The checks that need a SASL cluster judge kfake itself beside kfake: the same users, ACLs enforced.
    return KfakeCluster(TargetSpec(kind=KIND, version=None, brokers=1, name=f"kfake-{name}"),
                        sasl=SaslConfig())


BACKEND = Backend(kind=KIND, make=lambda target, log_dir: KfakeCluster(target),
                  prepare=lambda target: f"kfake at {ensure_binary()}", sasl_side_cluster=_sasl_side_cluster)
