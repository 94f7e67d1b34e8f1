"""The kfake backend: franz-go's fake cluster, built from the Go module proxy and run on loopback.

kfake is a second, independent implementation of the Kafka protocol. It has no replication and
no processes per broker, so it offers no fault control: checks that need it skip with that reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from harness import session
from harness.clients import kafka
from harness.cluster import probe
from harness.cluster.base import Cluster, FaultControlUnavailable, NodeState
from harness.cluster.target import KFAKE, TargetSpec
from harness.errors import ClusterError, SetupError
from harness.kafka.dist import cache_root
from harness.process.spawn import spawn
from harness.waiting import wait_until

SOURCE = Path(__file__).resolve().parent.parent / "kfake"


def kfake_module_version() -> str:
    for line in (SOURCE / "go.mod").read_text().splitlines():
        if "pkg/kfake " in line:
            return line.split()[-1]
    return "unknown"


def ensure_binary() -> Path:
    """Build harness/kfake (our main around the kfake package) once per source; return the binary."""
    digest = hashlib.sha256(b"".join((SOURCE / f).read_bytes() for f in ("main.go", "go.mod", "go.sum")))
    out = cache_root() / "kfake" / digest.hexdigest()[:12] / "kcts-kfake"
    if out.exists():
        return out
    go = shutil.which("go")
    if go is None:
        raise SetupError("go not found on PATH; install Go 1.26+ (apt-get install golang-go) to build kfake")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"kcts-kfake.tmp{os.getpid()}")
    proc = subprocess.run([go, "build", "-o", str(tmp), "."], cwd=SOURCE, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SetupError(f"building kfake failed (is the Go module proxy reachable?): {proc.stderr.strip()[-1500:]}")
    tmp.replace(out)
    return out


class KfakeCluster(Cluster):
    def __init__(self, target: TargetSpec | None = None) -> None:
        self.target = target or TargetSpec(kind=KFAKE, version=None)
        self.version = f"kfake {kfake_module_version()}"
        self.brokers = self.target.brokers
        self.proc: subprocess.Popen[str] | None = None
        self._addrs: dict[int, tuple[str, int]] = {}
        self.log_path = session.current().scratch("kfake") / "kfake.log"

    def start(self) -> KfakeCluster:
        binary = ensure_binary()
        log = open(self.log_path, "w")  # the child writes its stderr here for its whole life
        try:
            self.proc = spawn(
                [str(binary), f"-brokers={self.brokers}", f"-tag={session.current().marker}"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
            )
        finally:
            log.close()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        try:
            addrs = json.loads(line)["addrs"]
        except (ValueError, KeyError) as exc:
            self.close()
            log_tail = self.log_path.read_text()[-500:]
            raise ClusterError(f"kfake did not report its addresses: {line!r}; log: {log_tail}") from exc
        host, _, port = addrs[0].rpartition(":")
        md = wait_until(lambda: probe.metadata(host, int(port), topics=[]), 30, lambda: f"kfake at {addrs[0]}")
        self._addrs = {b: (host, int(port)) for b in md.broker_ids}
        # Metadata names each broker's own address; the probe gives ids, the admin client addresses.
        with kafka.admin({"bootstrap.servers": ",".join(addrs)}) as admin:
            listed = admin.list_topics(timeout=10)
        self._addrs = {b.id: (b.host, b.port) for b in listed.brokers.values()}
        return self

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in self._addrs.values())

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._addrs)

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        return self._addrs[broker_id]

    def node_state(self, broker_id: int) -> NodeState:
        return NodeState.RUNNING

    def _no_control(self, broker_id: int) -> None:
        raise FaultControlUnavailable(self.target.label)

    start_node = stop_node = kill_node = pause_node = resume_node = _no_control
