"""The Java exactly-once processor: kafka-tools' TransactionalMessageCopier, several per group.

A copier subscribes to the input topic in group mode, copies each record unchanged (key, value,
partition number) to one output topic inside a transaction, commits the consumed offsets with the
group metadata (KIP-447), and aborts about a third of its transactions on purpose
(`--enable-random-aborts`). One group per output topic makes the fan-out.

In group mode a copier exits with 0 once it has copied what its partitions held when they were
assigned, so under a live generator it is a worker to start again while work remains. A non-zero
exit (a fatal error, e.g. fenced) is a crash: it is restarted too, with the same transactional id,
up to `max_crashes` times. Every start and exit is in the event log with the tail of its output.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import threading
import zipfile
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness import session
from harness.cluster.combined import cds_archive_path
from harness.errors import KctsError
from harness.kafka.dist import KafkaDistribution, cache_root
from harness.workload.history import EventLog

MAIN = "org.apache.kafka.tools.TransactionalMessageCopier"
JVM_OPTS = ("-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData")

# kafka-clients 4.4.0 moved o.a.k.common.utils.Exit to ...utils.internals.Exit; the copier of the
# newest kafka-tools on Maven Central (4.3.1) still calls the old class and dies with
# NoClassDefFoundError. This forwarder restores the old name, so the copier runs on the client
# version under test rather than on an older one.
_EXIT_SHIM = """\
package org.apache.kafka.common.utils;

public final class Exit {
    private Exit() { }
    public static void exit(int code) { org.apache.kafka.common.utils.internals.Exit.exit(code); }
    public static void exit(int code, String why) { org.apache.kafka.common.utils.internals.Exit.exit(code, why); }
    public static void halt(int code) { org.apache.kafka.common.utils.internals.Exit.halt(code); }
    public static void halt(int code, String why) { org.apache.kafka.common.utils.internals.Exit.halt(code, why); }
    public static void addShutdownHook(String name, Runnable runnable) {
        org.apache.kafka.common.utils.internals.Exit.addShutdownHook(name, runnable);
    }
}
"""


def copier_classpath(dist: KafkaDistribution) -> str:
    """The distribution's classpath, with the Exit forwarder first when its kafka-clients lacks the old class."""
    clients = dist.jar("kafka-clients")
    with zipfile.ZipFile(clients) as jar:
        names = set(jar.namelist())
    moved = "org/apache/kafka/common/utils/Exit.class" not in names
    if not moved or "org/apache/kafka/common/utils/internals/Exit.class" not in names:
        return dist.classpath
    classes = cache_root() / "shims" / clients.stem
    if not (classes / "org/apache/kafka/common/utils/Exit.class").exists():
        classes.mkdir(parents=True, exist_ok=True)
        with open(classes.parent / f".{clients.stem}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            source = classes.parent / f"{clients.stem}-src" / "Exit.java"
            source.parent.mkdir(exist_ok=True)
            source.write_text(_EXIT_SHIM)
            proc = subprocess.run(
                ["javac", "-nowarn", "-d", str(classes), "-cp", str(clients), str(source)],
                capture_output=True, text=True, timeout=120,
            )
            if proc.returncode != 0:
                raise KctsError(f"compiling the Exit forwarder for {clients.name} failed: {proc.stderr[-800:]}")
    return os.pathsep.join([str(classes), dist.classpath])


@dataclass
class CopierProcess:
    """One copier JVM, started again by `ensure_running` after it exits."""

    name: str
    args: list[str]
    dist: KafkaDistribution
    log_path: Path
    events: EventLog
    proc: subprocess.Popen[str] | None = None
    starts: int = 0
    crashes: int = 0
    exit_logged: bool = False
    status: dict[str, object] = field(default_factory=dict)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=20))

    def command(self) -> list[str]:
        cmd = ["java", *JVM_OPTS, session.current().marker]
        archive = cds_archive_path(self.dist)
        if archive.exists():
            cmd.append(f"-XX:SharedArchiveFile={archive}")
        return [*cmd, "-cp", copier_classpath(self.dist), MAIN, *self.args]

    def start(self) -> None:
        self.starts += 1
        self.exit_logged = False
        self.proc = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, preexec_fn=session.die_with_parent,
        )
        self.events.add(self.name, "started", pid=self.proc.pid, start=self.starts)
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True, name=f"{self.name}-out").start()

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        with open(self.log_path, "a") as log:
            for line in proc.stdout:
                if line.startswith("{"):
                    try:
                        event = json.loads(line)
                    except ValueError:
                        event = None
                    if isinstance(event, dict):
                        if event.get("stage") == "ProcessLoop":
                            self.status = event  # one per poll: kept as the latest, not logged
                            continue
                        self.status = event
                log.write(line)
                self.tail.append(line.rstrip())

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure_running(self, max_crashes: int, work_left: Callable[[], bool]) -> None:
        """Start the copier again if it exited: after a crash always, after a clean exit if work is left."""
        if self.running() or self.proc is None:
            return
        if not self.exit_logged:
            self.exit_logged = True
            self.events.add(self.name, "exited", code=self.proc.returncode, tail=list(self.tail)[-5:])
            if self.proc.returncode != 0:
                self.crashes += 1
        if self.crashes > max_crashes:
            raise KctsError(f"copier {self.name} crashed {self.crashes} times; last output: {list(self.tail)[-10:]}")
        if self.proc.returncode != 0 or work_left():
            self.start()

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM runs the copier's shutdown hook (it closes its producer); SIGKILL past `timeout`."""
        if not self.running():
            return
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.events.add(self.name, "stopped", code=self.proc.returncode)


class CopierGroup:
    """`instances` copiers per output topic, each output topic copied by its own consumer group."""

    def __init__(
        self,
        dist: KafkaDistribution,
        bootstrap_servers: str,
        group: str,
        input_topic: str,
        outputs: list[str],
        instances: int = 2,
        transaction_size: int = 100,
        random_aborts: bool = True,
        max_crashes: int = 10,
        work_left: Callable[[], bool] = lambda: True,
    ) -> None:
        self.events = EventLog()
        self.max_crashes = max_crashes
        self.work_left = work_left
        self.workdir = session.current().scratch("copiers")
        self.groups = [f"{group}-o{i}" for i in range(len(outputs))]
        self.copiers: list[CopierProcess] = []
        for i, (out, grp) in enumerate(zip(outputs, self.groups, strict=True)):
            for j in range(instances):
                name = f"copier-o{i}-{j}"
                args = [
                    "--broker-list", bootstrap_servers, "--input-topic", input_topic, "--input-partition", "0",
                    "--output-topic", out, "--consumer-group", grp, "--transactional-id", f"{grp}-{j}",
                    "--transaction-size", str(transaction_size), "--transaction-timeout", "15000",
                    "--group-mode", "--use-group-metadata",
                ]
                if random_aborts:
                    args.append("--enable-random-aborts")
                self.copiers.append(CopierProcess(name, args, dist, self.workdir / f"{name}.log", self.events))
        self._halt = threading.Event()
        self._supervisor: threading.Thread | None = None
        self.error: BaseException | None = None

    def start(self) -> CopierGroup:
        for c in self.copiers:
            c.start()
        self._supervisor = threading.Thread(target=self._supervise, daemon=True, name="copier-supervisor")
        self._supervisor.start()
        return self

    def _supervise(self) -> None:
        try:
            while not self._halt.wait(0.5):
                for c in self.copiers:
                    c.ensure_running(self.max_crashes, self.work_left)
        except BaseException as exc:  # noqa: BLE001 - surfaced by check()
            self.error = exc

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        self._halt.set()
        if self._supervisor is not None:
            self._supervisor.join(10)
        for c in self.copiers:
            c.stop()

    def restarts(self) -> int:
        return sum(max(0, c.starts - 1) for c in self.copiers)

    def crashes(self) -> int:
        return sum(c.crashes for c in self.copiers)

    def describe(self) -> str:
        return "; ".join(f"{c.name}: starts={c.starts} running={c.running()} last={c.status}" for c in self.copiers)
