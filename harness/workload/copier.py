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

import signal
import threading
from collections.abc import Callable
from pathlib import Path

from harness import session
from harness.clients.jvm import TRANSACTIONAL_COPIER, client_command
from harness.errors import KctsError
from harness.kafka.dist import KafkaDistribution
from harness.process.events import EventLog, Message, as_event
from harness.process.worker import WorkerProcess, describe_exit


class CopierProcess:
    """One copier JVM (a WorkerProcess), started again by `ensure_running` after it exits."""

    def __init__(self, name: str, args: list[str], dist: KafkaDistribution, log_path: Path, events: EventLog) -> None:
        self.name = name
        self.events = events
        self.log_path = log_path
        self.status: Message = {}
        self.starts = 0
        self.crashes = 0
        self.exit_logged = False
        # It takes no commands: SIGTERM runs its shutdown hook; SIGQUIT makes the JVM dump its threads.
        self.worker = WorkerProcess(
            name, client_command(dist, TRANSACTIONAL_COPIER, args), log_path, self._status,
            commands=False, dump_signal=signal.SIGQUIT,
        )

    def _status(self, msg: Message) -> None:
        self.status = as_event(msg)  # the latest of its events; one per poll, so not logged

    def start(self) -> None:
        self.starts += 1
        self.exit_logged = False
        self.worker.start()
        self.events.add(self.name, "started", pid=self.worker.proc.pid if self.worker.proc else None, start=self.starts)

    def running(self) -> bool:
        return self.worker.running()

    def ensure_running(self, max_crashes: int, work_left: Callable[[], bool]) -> None:
        """Start the copier again if it exited: after a crash always, after a clean exit if work is left."""
        code = self.worker.returncode
        if code is None:
            return
        if not self.exit_logged:
            self.exit_logged = True
            self.worker.drain()
            tail = self.worker.last_words()[-5:]
            self.events.add(self.name, "exited", code=code, exit=describe_exit(code), tail=tail)
            if code != 0:
                self.crashes += 1
        if self.crashes > max_crashes:
            raise KctsError(f"copier {self.name} crashed {self.crashes} times; last output: {self.worker.tail(10)}")
        if code != 0 or work_left():
            self.start()

    def stop(self, timeout: float = 20.0) -> None:
        if self.worker.running():
            code = self.worker.stop(timeout)
            self.events.add(self.name, "stopped", code=code, exit=describe_exit(code), hung=self.worker.hung)


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
        self._supervisor = threading.Thread(target=self._supervise, daemon=True, name="copier-supervisor")
        self._supervisor.start()
        return self

    def _supervise(self) -> None:
        """Starts, restarts and stops every copier: a child dies with the thread that started it."""
        try:
            for c in self.copiers:
                c.start()
            while not self._halt.wait(0.5):
                for c in self.copiers:
                    c.ensure_running(self.max_crashes, self.work_left)
        except BaseException as exc:  # noqa: BLE001 - surfaced by check()
            self.error = exc
        finally:
            for c in self.copiers:
                c.stop()

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        self._halt.set()
        if self._supervisor is not None:
            self._supervisor.join(60)
            if self._supervisor.is_alive():
                raise KctsError(f"the copier supervisor did not end: {self.describe()}")

    def restarts(self) -> int:
        return sum(max(0, c.starts - 1) for c in self.copiers)

    def crashes(self) -> int:
        return sum(c.crashes for c in self.copiers)

    def describe(self) -> str:
        return "; ".join(f"{c.name}: starts={c.starts} running={c.running()} last={c.status}" for c in self.copiers)
