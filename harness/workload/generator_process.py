"""The generator (generator.py) in its own process, driven from the harness: write, tail, halt, close.

Its history is built here from what the child reports as each transaction ends. The generator
owns the id space, so a generator whose client dies cannot be replaced mid-run: the transaction
it was in has an unknown fate and unknown ids. Its death fails the write in progress, naming the
signal and showing the child's last output.

Use it as a context manager: it is closed on the way out, and a close that fails on the way out of
a block that raised is a note of the block's exception, never its replacement (harness.closing).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from types import TracebackType
from typing import Any

from harness import session
from harness.clients import txn_refusal
from harness.closing import close_after
from harness.errors import Unrecoverable, WorkerHung
from harness.process.events import EventLog, Message
from harness.process.worker import WorkerProcess, describe_exit, python_command
from harness.waiting import Owed, wait_until
from harness.workload.generator import GeneratorSpec
from harness.workload.write_log import IdRange, TxnOutcome, WriteLog

STOP_TIMEOUT_S = 60.0  # for the child to end once asked, before its threads are dumped and it is killed


class GeneratorDied(Unrecoverable):
    """The generator's process ended while a command was outstanding."""


@dataclass
class GeneratorHistory:
    topic: str
    ranges: list[IdRange] = field(default_factory=list)
    writes: WriteLog = field(default_factory=WriteLog)
    # Highest offset of a committed record per partition: processors are done once past it.
    last_committed_offset: dict[int, int] = field(default_factory=dict)
    events: EventLog = field(default_factory=EventLog)

    def ids(self, outcome: TxnOutcome) -> int:
        return sum(len(r) for r in self.ranges if r.outcome is outcome)

    def add_transaction(
        self, first: int, end: int, outcome: TxnOutcome, writes: list[tuple[int, str, int, int]]
    ) -> None:
        self.writes.extend(writes)
        for _, _, partition, offset in writes:
            if offset > self.last_committed_offset.get(partition, -1):
                self.last_committed_offset[partition] = offset
        self.ranges.append(IdRange(first, end, outcome))


class GeneratorProcess:
    """Same calls as an in-process generator; each blocks until the child has done it. A context
    manager that closes it on exit; where its start fails, the constructor stops the child itself."""

    def __init__(self, spec: GeneratorSpec) -> None:
        self.history = GeneratorHistory(spec.topic)
        self.next_id = 0  # ids handed out so far, the running transaction's included
        self.halted = False
        self._ids = itertools.count()
        self._replies: dict[int, Message] = {}
        self._ready = False
        self._refused: txn_refusal.InitRefused | None = None  # the target's answer to init_transactions
        self._lock = threading.Lock()  # one command at a time
        log = session.current().scratch("generator") / "generator.log"
        self.worker = WorkerProcess("generator", python_command("harness.workload.generator"), log, self._receive)
        self.worker.start(asdict(spec))
        try:
            self._await(lambda: self._ready, spec.timeout * 2 + 10,
                        "init_transactions" if spec.transactional else "the idempotent producer's start")
        except BaseException as exc:
            close_after(exc, self.close, "the generator")  # no one else holds it to close
            raise

    def __enter__(self) -> GeneratorProcess:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        close_after(exc, self.close, "the generator")

    def _receive(self, msg: Message) -> None:
        """The child's events: those that drive this side here, any other into the event log."""
        name = msg.get("event")
        if name == "begin":
            self.next_id = int(msg["first"]) + int(msg["size"])
        elif name == "txn":
            outcome = TxnOutcome(msg["outcome"])
            self.history.add_transaction(int(msg["first"]), int(msg["end"]), outcome, msg.get("writes", []))
        elif name == "ready":
            self._ready = True
        elif (refused := txn_refusal.from_event(msg)) is not None:
            self._refused = refused
        elif name == "done":
            self._replies[int(msg["id"])] = msg
        elif name == "stopped":
            pass  # its exit code says the same, and close() judges that
        elif isinstance(name, str):
            self.history.events.add_reported("generator", msg)

    # -- commands --------------------------------------------------------------------------
    def write(self, n: int, rate: float | None = None) -> None:
        """Write `n` records in transactions (or idempotent batches); `rate` (records/s) spreads them
        over time; halt() ends early."""
        # Every client call in the child has its own deadline; this one only bounds a child that
        # stopped answering without dying.
        budget = 120.0 + (n / rate if rate else n / 500.0)
        self._command({"cmd": "write", "n": n, "rate": rate}, budget, f"write {n}")

    def write_tail(self) -> None:
        """One committed record per partition, written last (see Generator.write_tail)."""
        self._command({"cmd": "tail"}, 120.0, "write the tail")

    def halt(self) -> None:
        """End the write in progress at its next transaction boundary, and every later write at once."""
        self.halted = True
        self.worker.send({"cmd": "halt"})

    def close(self) -> None:
        """Stop the child (asked, then its threads dumped and killed after STOP_TIMEOUT_S); `WorkerHung`
        where it had to be killed."""
        code = self.worker.stop(STOP_TIMEOUT_S)
        if self.worker.hung:
            raise WorkerHung(f"the generator did not stop: {self.worker.describe()}: {self.worker.tail(30)}")
        if code not in (0, None):
            tail = self.worker.last_words()
            self.history.events.add("generator", "crashed-on-stop", exit=describe_exit(code), stderr=tail)

    def _command(self, cmd: Message, timeout: float, what: str) -> None:
        with self._lock:
            cid = next(self._ids)
            if not self.worker.send({**cmd, "id": cid}):
                self._died(what)
            reply = self._await(lambda: self._replies.pop(cid, None), timeout, what)
        if reply.get("error"):
            raise AssertionError(f"generator: {what} failed: {reply['error']}\n{reply.get('traceback', '')}")

    def _await(self, ready: Callable[[], Any], timeout: float, what: str) -> Any:
        def check() -> object:
            value = ready()
            if not value and not self.worker.running():
                self.worker.drain()
                value = ready()
                if not value:
                    self._died(what)
            return value

        return wait_until(check, timeout, lambda: f"generator: {what}: {self.worker.describe()}", interval=0.02,
                          owed=Owed.HARNESS)

    def _died(self, what: str) -> None:
        if self._refused is not None:
            # It ended because the target would not start its transactions: the scene's premise.
            raise self._refused.error()
        raise GeneratorDied(
            f"the generator's process ended during {what}: {self.worker.describe()}; its last output: "
            f"{self.worker.last_words()}"
        )
