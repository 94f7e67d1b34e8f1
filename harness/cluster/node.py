"""One Kafka JVM (broker or controller) as a small service: start, stop, kill, pause, resume."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from harness.cluster.base import NodeState
from harness.errors import ClusterError, NodeExited
from harness.kafka.dist import KafkaDistribution
from harness.kafka.log4j import LOG4J1_PROPERTIES, LOG4J2_PROPERTIES
from harness.process import jvm_launch
from harness.process.ports import LOOPBACK, bindable
from harness.process.service import SignalledProcess
from harness.process.spawn import spawn

# Every node: no JMX metrics reporter. Nothing here reads JMX, and registering thousands of
# MBeans costs each JVM about a fifth of its start-up CPU.
COMMON_PROPS: dict[str, object] = {"metric.reporters": ""}


def render_properties(props: dict[str, object]) -> str:
    return "".join(f"{k}={v}\n" for k, v in sorted(props.items()))


class KafkaNode(SignalledProcess):
    """A KRaft node process. `props` is its server.properties; its data lives under `workdir`."""

    def __init__(
        self,
        node_id: int,
        roles: str,
        props: dict[str, object],
        dist: KafkaDistribution,
        workdir: Path,
        log_path: Path,
        cds_archive: Path | None = None,
        archive_out: Path | None = None,
    ) -> None:
        self.node_id = node_id
        self.roles = roles
        self.props = {**COMMON_PROPS, **props}
        self.dist = dist
        self.workdir = workdir
        self.log_path = log_path
        self.cds_archive = cds_archive
        self.archive_out = archive_out
        super().__init__()
        self.config_path = workdir / "server.properties"
        self.log4j_path = workdir / "log4j2.properties"
        self.log4j1_path = workdir / "log4j.properties"

    @property
    def name(self) -> str:
        return f"{self.roles}-{self.node_id}"

    def write_config(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(render_properties(self.props))
        self.log4j_path.write_text(LOG4J2_PROPERTIES)
        self.log4j1_path.write_text(LOG4J1_PROPERTIES)

    def cds_archive_ready(self) -> bool:
        return self.cds_archive is not None and self.cds_archive.exists()

    def java_command(self, main_class: str, *args: str, archive: bool = True) -> list[str]:
        """This node's JVM; `archive=False` neither maps nor dumps the class-data archive."""
        return jvm_launch.java_command(
            jvm_launch.Role.BROKER, self.dist.classpath, main_class, args,
            archive=self.cds_archive if archive else None,
            dump_archive=self.archive_out if archive else None,
            properties=(
                f"-Dlog4j2.configurationFile={self.log4j_path}",
                f"-Dlog4j.configuration=file:{self.log4j1_path}",
                f"-Dkafka.logs.dir={self.workdir / 'logs'}",
            ),
        )

    @property
    def data_dir(self) -> Path:
        return Path(str(self.props["log.dirs"]))

    def write_meta_properties(self, cluster_id: str) -> None:
        """What `kafka-storage format` writes for a broker-only node, without a JVM start.

        Feature levels live in the controller's bootstrap checkpoint, so brokers need nothing else.
        """
        self.write_config()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "meta.properties").write_text(
            f"node.id={self.node_id}\ndirectory.id={random_kafka_uuid()}\nversion=1\ncluster.id={cluster_id}\n"
        )

    def format_from_template(self, cluster_id: str, features: dict[str, int], cache: Path) -> None:
        """Format a controller: run kafka-storage once per (version, features), then copy its output.

        Besides meta.properties, format writes only the bootstrap checkpoint (`bootstrap.checkpoint`
        before 4.1, a `__cluster_metadata-0` snapshot after), which holds feature levels and nothing
        of the cluster id or the node: one formatted template serves every later cluster.
        """
        key = ",".join(f"{k}={v}" for k, v in sorted(features.items())) or "defaults"
        template = cache / hashlib.sha256(key.encode()).hexdigest()[:12]
        if not template.is_dir():
            self.finish_format(self.start_format(random_kafka_uuid(), features))
            (self.data_dir / "meta.properties").unlink()
            staging = template.with_name(f"{template.name}.tmp{os.getpid()}")
            shutil.copytree(self.data_dir, staging)
            try:
                staging.rename(template)
            except OSError:  # another process made it first; theirs is as good
                shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(self.data_dir)
        shutil.copytree(template, self.data_dir, dirs_exist_ok=True)
        self.write_meta_properties(cluster_id)

    def start_format(self, cluster_id: str, features: dict[str, int]) -> subprocess.Popen[str]:
        """Launch kafka-storage format (meta.properties and bootstrap feature levels)."""
        self.write_config()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        args = ["format", f"--cluster-id={cluster_id}", "-c", str(self.config_path), "--ignore-formatted"]
        for name, level in sorted(features.items()):
            args += ["--feature", f"{name}={level}"]
        cmd = self.java_command("kafka.tools.StorageTool", *args, archive=self.cds_archive_ready())
        return spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def finish_format(self, proc: subprocess.Popen[str]) -> None:
        out, _ = proc.communicate(timeout=120)
        with open(self.log_path, "a") as log:
            log.write(f"$ kafka-storage {' '.join(proc.args[-8:])}\n{out}\n")  # type: ignore[index]
        if proc.returncode != 0:
            raise ClusterError(f"formatting {self.name} failed (exit {proc.returncode}): {out.strip()[-800:]}")

    # -- lifecycle (stop, kill, pause, resume and the log: SignalledProcess) -------------------
    def spawn(self) -> None:
        """Launch the JVM and return at once; readiness is the cluster's to judge."""
        if self.state is not NodeState.STOPPED:
            return
        self._launch(self.java_command("kafka.Kafka", str(self.config_path)), "", cwd=self.workdir)

    def check_ports(self) -> None:
        """Before any JVM starts: a listener port another process holds is named at once, not after
        the nodes before it have started (the JVM's own bind, below, still catches a later taker)."""
        for listener in str(self.props.get("listeners", "")).split(","):
            host, _, port = listener.partition("://")[2].rpartition(":")
            if port.isdigit() and not bindable(int(port)):
                raise ClusterError(self._port_in_use(f"{host or LOOPBACK}:{port}"))

    def _port_in_use(self, address: str) -> str:
        return (f"{self.name} could not start: port {address} is in use by another process; "
                "stop that process, or leave the ports to kcts (it picks free ones)")

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            tail = self.log_tail()
            busy = re.search(r"bind to ([\w.\-]+:\d+): Address already in use", tail)
            if busy:
                raise NodeExited(self._port_in_use(busy.group(1)))
            raise NodeExited(
                f"{self.name} exited with code {self.proc.returncode} during start-up; "
                f"last log lines:\n{self.log_tail()}"
            )

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM and wait (a broker runs its controlled shutdown); SIGKILL past the timeout."""
        super().stop(timeout)


def random_kafka_uuid() -> str:
    """A Kafka Uuid string: URL-safe base64 of 16 random bytes; Kafka avoids a leading '-'."""
    while True:
        text = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        if not text.startswith("-"):
            return text
