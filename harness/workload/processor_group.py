"""Several confluent-kafka processors in one group, each in its own process (processor.py).

A processor that raises (e.g. it saw a transaction commit although deliveries failed) fails the
pipeline with its traceback. One whose client dies under it (a signal, an exit without a report)
is a crashed client: it is started again with the same transactional id, which fences whatever it
left open, up to `max_crashes` times; each crash is in the event log with the tail of its stderr
and counted in the summary. Starts, restarts and stops all happen on one supervisor thread,
because a child dies with the thread that started it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness import session
from harness.clients import txn_refusal
from harness.errors import KctsError, WorkerHung
from harness.process.events import EventLog, Message, event_fields
from harness.process.worker import WorkerProcess, describe_exit, python_command
from harness.waiting import Owed, wait_until
from harness.workload.write_log import WriteLog

STOP_TIMEOUT_S = 60.0


@dataclass
class ProcessorHistory:
    """What every instance of one processor group reported."""

    writes: WriteLog = field(default_factory=WriteLog)
    events: EventLog = field(default_factory=EventLog)
    committed_txns: int = 0
    deliberate_aborts: int = 0
    error_aborts: int = 0
    aborted_records: int = 0  # records written into transactions aborted on purpose
    client_hangs: int = 0  # calls that blocked past their timeout (producer replaced)
    client_crashes: int = 0  # processes that died under their client while processing
    crashes_on_stop: int = 0  # processes that died while closing their clients, work done
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def bump(self, counts: dict[str, int]) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)


@dataclass
class Instance:
    name: str
    worker: WorkerProcess
    spec: Message
    ready: bool = False
    error: str | None = None  # the processor's own failure, with its traceback
    handled_exit: bool = False


class ProcessorGroup:
    def __init__(
        self,
        client_config: dict[str, str],
        group: str,
        input_topic: str,
        outputs: list[str],
        history: ProcessorHistory,
        instances: int = 2,
        abort_every: int = 5,
        max_batch: int = 100,
        pace: float = 0.0,
        max_crashes: int = 3,
    ) -> None:
        self.history = history
        self.max_crashes = max_crashes
        self.workdir = session.current().scratch("processors")
        self.instances: list[Instance] = []
        for i in range(instances):
            name = f"py{i}"
            spec = {
                "name": name, "client_config": client_config, "group": group, "input_topic": input_topic,
                "outputs": outputs, "abort_every": abort_every, "max_batch": max_batch, "pace": pace,
            }
            worker = WorkerProcess(name, python_command("harness.workload.processor"), self.workdir / f"{name}.log")
            inst = Instance(name, worker, spec)
            worker.on_message = self._receiver(inst)
            self.instances.append(inst)
        self._halt = threading.Event()
        self._supervisor: threading.Thread | None = None
        self.error: str | None = None
        self.harness_fault = False  # the supervisor itself failed: the harness's trouble, never a FAIL
        self.refused: txn_refusal.InitRefused | None = None  # the target's answer to a processor's init_transactions

    # -- lifecycle -----------------------------------------------------------------------
    def start(self, timeout: float = 60.0) -> ProcessorGroup:
        self._supervisor = threading.Thread(target=self._supervise, daemon=True, name="processor-supervisor")
        self._supervisor.start()
        wait_until(
            lambda: self.error is not None or all(i.ready for i in self.instances), timeout,
            lambda: f"processors not ready: {self.describe()}", interval=0.1, owed=Owed.HARNESS,
        )
        self.check()
        return self

    def check(self) -> None:
        if self.refused is not None:
            raise self.refused.error()
        if self.error is not None:
            kind = KctsError if self.harness_fault else AssertionError
            raise kind(f"{self.error}; events: {self.history.events.events[-10:]}")

    def stop(self) -> None:
        self._halt.set()
        if self._supervisor is not None:
            self._supervisor.join(STOP_TIMEOUT_S + 30)
            if self._supervisor.is_alive():
                raise KctsError(f"the processor supervisor did not end: {self.describe()}")
        hung = [i for i in self.instances if i.worker.hung]
        if hung:
            raise WorkerHung(
                f"processors did not stop within {STOP_TIMEOUT_S}s (their threads are dumped at the end of "
                f"their logs): " + "; ".join(f"{i.worker.describe()}: {i.worker.tail(30)}" for i in hung)
            )
        self.check()

    def _supervise(self) -> None:
        try:
            for inst in self.instances:
                inst.worker.start(inst.spec)
            while not self._halt.wait(0.2):
                for inst in self.instances:
                    self._look_after(inst)
        except Exception as exc:  # noqa: BLE001 - surfaced by check()
            self.error = f"the processor supervisor failed: {exc!r}"
            self.harness_fault = True
        finally:
            for inst in self.instances:
                inst.worker.stop(STOP_TIMEOUT_S)
                self._look_after(inst)

    def _look_after(self, inst: Instance) -> None:
        code = inst.worker.returncode
        if code is None or inst.handled_exit:
            return
        inst.handled_exit = True
        inst.worker.drain()  # its last messages (a report of its own failure) come before its exit is judged
        tail = inst.worker.last_words()
        if inst.error is not None:
            self.error = f"processor {inst.name} failed: {inst.error}"
            return
        if inst.worker.stop_requested:
            if code != 0 and not inst.worker.hung:
                self.history.bump({"crashes_on_stop": 1})
                self.history.events.add(inst.name, "crashed-on-stop", exit=describe_exit(code), stderr=tail)
            return
        self.history.bump({"client_crashes": 1})
        self.history.events.add(inst.name, "client-crashed", exit=describe_exit(code), stderr=tail)
        if self.history.client_crashes > self.max_crashes:
            self.error = (
                f"processor clients crashed {self.history.client_crashes} times; the last, {inst.worker.describe()}, "
                f"ended with: {tail}"
            )
            return
        inst.ready = False
        inst.handled_exit = False
        inst.worker.start(inst.spec)
        self.history.events.add(inst.name, "restarted", pid=inst.worker.proc.pid if inst.worker.proc else None)

    # -- messages --------------------------------------------------------------------------
    def _receiver(self, inst: Instance) -> Callable[[Message], None]:
        def receive(msg: Message) -> None:
            """The child's events: writes, counts and its state here, any other into the event log."""
            name = msg.get("event")
            if name == "committed":
                self.history.writes.extend(msg["writes"])
                self.history.bump({"committed_txns": 1})
            elif name == "bump":
                self.history.bump(event_fields(msg))
            elif name == "ready":
                inst.ready = True
            elif name == "crashed":
                inst.error = f"{msg['error']}\n{msg.get('traceback', '')}"
                self.history.events.add(inst.name, "crashed", error=msg["error"])
            elif (refused := txn_refusal.from_event(msg)) is not None:
                self.refused = refused
                inst.error = str(refused)
            elif name == "stopped":
                pass  # its exit code says the same, and _look_after judges that
            elif isinstance(name, str):
                self.history.events.add_reported(inst.name, msg)

        return receive

    def logs(self) -> list[Path]:
        return [i.worker.log_path for i in self.instances]

    def describe(self) -> str:
        return "; ".join(f"{i.worker.describe()} ready={i.ready}" for i in self.instances)
