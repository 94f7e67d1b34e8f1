"""The librdkafka-mock backend: librdkafka's mock cluster (rd_kafka_mock), held here with node control.

librdkafka carries a third Kafka-protocol implementation that nobody here wrote, the mock cluster its
own tests run against (src/rdkafka_mock*.c). One holder process (harness/cluster/rdkafka_mock_holder.py,
run under this interpreter, which has confluent-kafka and so its bundled librdkafka) creates it and
takes commands on its stdin, one JSON line each, answered on its stdout. Every broker listens on
127.0.0.1 only. How the harness's node operations map onto the mock's control API:
- stop/kill: rd_kafka_mock_broker_set_down: its listener and every connection close (the port is
  kept). The mock moves no leadership by itself, so this backend does what a controller does: every
  partition that broker led gets its first running replica as leader (rd_kafka_mock_partition_set_leader,
  which bumps the leader epoch as an election does), or no leader where no replica runs. One log per
  partition in one process: a crash loses what a clean stop does, so stop and kill are the same.
- start: rd_kafka_mock_broker_set_up on the same port; partitions left without a leader get it back.
- pause: rd_kafka_mock_broker_set_rtt to an hour: the broker holds every answer (its clients see a
  frozen broker) until resume sets it back to 0 and the held answers go out. Unlike a SIGSTOP'd
  broker it still applies what it is sent (a produce is appended when it arrives, answered later).
  After FENCE_AFTER_MS its leaderships move to running replicas at the next epoch, as a controller
  fences a frozen broker (harness/cluster/local.py's broker.session.timeout.ms).
- leader moves: rd_kafka_mock_partition_set_leader, at once and at the next leader epoch.
- topics: the mock serves no CreateTopics (API 19 is not in its ApiVersions); topics are made with
  rd_kafka_mock_topic_create, which takes a partition count and a replication factor, no configs.
There is no controller to pause and no node log of its own (librdkafka's log is the holder's stderr).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from harness import session
from harness.cluster import probe
from harness.cluster.backend import Backend
from harness.cluster.base import Cluster, NodeState
from harness.cluster.fixed_addresses import FixedAddresses
from harness.cluster.kinds.librdkafka_mock import KIND  # the kind of target this module serves
from harness.cluster.model import TargetSpec
from harness.cluster.rdkafka_mock_holder import library_path
from harness.errors import ClusterError, SetupError, TargetRefused
from harness.process.json_channel import JsonLineChannel
from harness.protocol.client import RawClient
from harness.waiting import wait_until

HOLDER = Path(__file__).resolve().parent / "rdkafka_mock_holder.py"
# As harness/cluster/kfake.py: a paused node's leaderships move after this long, as a local Apache
# cluster's controller fences a frozen broker after broker.session.timeout.ms (local.py sets 3000).
FENCE_AFTER_MS = 3000
PAUSE_RTT_MS = 3_600_000  # "forever" for any check: resume always comes first
REPLY_TIMEOUT = 30.0  # each control call waits on the mock's thread, normally for microseconds


def library() -> tuple[Path, str]:
    """The librdkafka shared library confluent-kafka bundles, and its version."""
    import confluent_kafka

    try:
        return library_path(), confluent_kafka.libversion()[0]
    except SystemExit as exc:  # the holder's way of saying why it cannot start
        raise SetupError(str(exc)) from None


def prepare() -> str:
    path, version = library()
    return f"librdkafka {version}'s mock cluster, from {path}"


def held_by_construction(config: dict[str, str], replication_factor: int) -> dict[str, str]:
    """The topic configs whose promise the mock keeps without being told: min.insync.replicas up to
    the replication factor (its one log per partition is written before any acks=all answer, and its
    ISR is always every replica, "Let Replicas == ISRs", so an acknowledged write survives any
    broker's loss), and unclean.leader.election.enable=false (it never elects uncleanly)."""
    held = {}
    for key, value in config.items():
        if key == "min.insync.replicas" and value.isdigit() and 1 <= int(value) <= replication_factor:
            held[key] = value
        elif key == "unclean.leader.election.enable" and value.lower() == "false":
            held[key] = value
    return held


class LibrdkafkaMockCluster(FixedAddresses, Cluster):
    def __init__(self, target: TargetSpec | None = None) -> None:
        self.target = target or TargetSpec(kind=KIND, version=None)
        self.version = f"librdkafka {library()[1]} mock"
        self._addrs: dict[int, tuple[str, int]] = {}
        self._states: dict[int, NodeState] = {}
        self._fences: dict[int, threading.Timer] = {}
        self._nodes_lock = threading.RLock()  # node states and the commands that change them
        self.log_path = session.current().scratch("librdkafka-mock") / "holder.log"
        # End of stdin: the holder destroys the cluster and exits.
        self._channel = JsonLineChannel("the mock cluster's holder", self.log_path, close_by_stdin=True)

    @property
    def proc(self) -> subprocess.Popen[str] | None:
        return self._channel.proc

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> LibrdkafkaMockCluster:
        cmd = [sys.executable, str(HOLDER), f"--brokers={self.target.brokers}", f"--tag={session.current().marker}"]
        ready = self._channel.start(cmd)  # its stderr is librdkafka's log
        bootstrap = ready.get("bootstrap")
        if not isinstance(bootstrap, str):
            self.close()
            raise ClusterError(f"the mock cluster's holder did not report its bootstrap: {ready!r}; "
                               f"log: {self._channel.log_tail()}")
        first = bootstrap.split(",")[0]
        host, _, port = first.rpartition(":")
        # The mock numbers its brokers 1..N; their addresses come from its own Metadata, not the order
        # of the bootstrap string.
        with RawClient.connect(host, int(port), timeout=10, client_id="kcts-probe") as c:
            md = c.send("Metadata", min(c.max_version("Metadata"), probe.METADATA_VERSION),
                        {"Topics": [], "AllowAutoTopicCreation": False})
        self._addrs = {b["NodeId"]: (b["Host"], b["Port"]) for b in md["Brokers"]}
        self._states = dict.fromkeys(self._addrs, NodeState.RUNNING)
        return self

    def close(self) -> None:
        for timer in self._fences.values():
            timer.cancel()
        self._channel.close()

    def log_paths(self) -> list[Path]:
        return [self.log_path]

    def _command(self, op: str, **fields: Any) -> None:
        """One control call; ClusterError with the mock's error name when it refuses."""
        self._channel.command(op, REPLY_TIMEOUT, **fields)

    # -- topics --------------------------------------------------------------------------------
    def create_topic_itself(self, name: str, partitions: int, replication_factor: int,
                            config: dict[str, str] | None, why: str) -> None:
        held = held_by_construction(config or {}, replication_factor)
        if held != (config or {}):
            other = {k: v for k, v in (config or {}).items() if k not in held}
            raise TargetRefused(
                f"the target refused to create topic {name} with config {other}: librdkafka's mock cluster "
                "serves no CreateTopics, and its own way (rd_kafka_mock_topic_create, src/rdkafka_mock.h) takes "
                "a partition count and a replication factor, no topic configs")
        try:
            self._command("create_topic", topic=name, partitions=partitions, replication_factor=replication_factor)
        except ClusterError as exc:
            raise TargetRefused(f"the target refused to create topic {name} (rf={replication_factor}): {exc}") from exc

    # -- node control --------------------------------------------------------------------------
    def node_state(self, broker_id: int) -> NodeState:
        try:
            return self._states[broker_id]
        except KeyError:
            known = self.broker_ids
            raise ClusterError(f"the mock cluster has no broker {broker_id}; its brokers are {known}") from None

    def start_node(self, broker_id: int) -> None:
        with self._nodes_lock:
            state = self.node_state(broker_id)
            if state is NodeState.PAUSED:
                self.resume_node(broker_id)
                return
            if state is NodeState.STOPPED:
                self._command("up", node=broker_id)
                self._states[broker_id] = NodeState.RUNNING
                # A partition no running replica could lead comes back with this one, as Apache's
                # controller elects the last in-sync replica when it returns.
                for (topic, partition), (leader, replicas) in self._leaders().items():
                    if leader < 0 and broker_id in replicas:
                        self._command("set_leader", topic=topic, partition=partition, node=broker_id)
        self._wait_answers(broker_id)

    def stop_node(self, broker_id: int) -> None:
        with self._nodes_lock:
            state = self.node_state(broker_id)
            if state is NodeState.STOPPED:
                return
            self._cancel_fence(broker_id)
            if state is NodeState.PAUSED:
                self._command("rtt", node=broker_id, ms=0)
            # Who leads what, asked while this broker still answers (it may be the last one running).
            leaders = self._leaders()
            self._command("down", node=broker_id)  # done on the mock's thread: gone when it answers
            self._states[broker_id] = NodeState.STOPPED
            self._fail_over(broker_id, leaders)

    def kill_node(self, broker_id: int) -> None:
        self.stop_node(broker_id)  # one log per partition, in one process: a crash loses what a clean stop does

    def pause_node(self, broker_id: int) -> None:
        with self._nodes_lock:
            if self.node_state(broker_id) is not NodeState.RUNNING:
                return
            self._command("rtt", node=broker_id, ms=PAUSE_RTT_MS)
            self._states[broker_id] = NodeState.PAUSED
            timer = threading.Timer(FENCE_AFTER_MS / 1000, self._fence, args=(broker_id,))
            timer.daemon = True
            self._fences[broker_id] = timer
            timer.start()

    def resume_node(self, broker_id: int) -> None:
        with self._nodes_lock:
            if self.node_state(broker_id) is not NodeState.PAUSED:
                return
            self._cancel_fence(broker_id)
            self._command("rtt", node=broker_id, ms=0)  # the held answers go out now
            self._states[broker_id] = NodeState.RUNNING

    def move_leader_to(self, topic: str, partition: int, to: int) -> None:
        """rd_kafka_mock_partition_set_leader: `to` leads at once, at the next leader epoch."""
        self._command("set_leader", topic=topic, partition=partition, node=to)

    # -- the controller's part -----------------------------------------------------------------
    def _fence(self, broker_id: int) -> None:
        """A paused broker's leaderships move, as a controller fences a broker that stopped heartbeating."""
        with self._nodes_lock:
            if self._fences.pop(broker_id, None) is None or self._states.get(broker_id) is not NodeState.PAUSED:
                return
            if not self.state.running_brokers():
                return  # nobody to lead in its place, nor to ask
            try:
                self._fail_over(broker_id, self._leaders())
            except (ClusterError, OSError) as exc:
                # Nobody waits on this timer: say it where the run's evidence is read.
                print(f"kcts: fencing paused mock broker {broker_id} failed: {exc}", file=sys.stderr)

    def _cancel_fence(self, broker_id: int) -> None:
        timer = self._fences.pop(broker_id, None)
        if timer is not None:
            timer.cancel()

    def _fail_over(self, broker_id: int, leaders: dict[tuple[str, int], tuple[int, tuple[int, ...]]]) -> None:
        """Every partition `broker_id` leads gets its first running replica as leader, or none."""
        for (topic, partition), (leader, replicas) in leaders.items():
            if leader != broker_id:
                continue
            running = [r for r in replicas if r != broker_id and self._states.get(r) is NodeState.RUNNING]
            self._command("set_leader", topic=topic, partition=partition, node=running[0] if running else -1)

    def _leaders(self) -> dict[tuple[str, int], tuple[int, tuple[int, ...]]]:
        """Every partition's leader and replicas, from a running broker's Metadata (one state for
        all: the brokers share it)."""
        errors = []
        for b in self.state.running_brokers():
            try:
                md = probe.metadata(*self.broker_address(b), topics=None)
            except OSError as exc:
                errors.append(f"broker {b}: {exc}")
                continue
            return {key: (p.leader, p.replicas) for key, p in md.partitions.items()}
        raise ClusterError(f"no running mock broker answers Metadata: {errors or 'none running'}")

    def _wait_answers(self, broker_id: int, timeout: float = 30.0) -> None:
        """Until the broker's listener answers Metadata again (set_up restarts it on the mock's thread)."""
        seen: list[object] = ["nothing yet"]

        def answers() -> bool:
            try:
                probe.metadata(*self.broker_address(broker_id), topics=[], timeout=2)
            except OSError as exc:
                seen[0] = exc
                return False
            return True

        wait_until(answers, timeout, lambda: f"mock broker {broker_id} answering Metadata: {seen[0]}")


BACKEND = Backend(kind=KIND, make=lambda target, log_dir: LibrdkafkaMockCluster(target),
                  prepare=lambda target: prepare())
