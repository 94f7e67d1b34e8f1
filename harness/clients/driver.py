"""A client driver: a process of one client stack (Java, librdkafka, franz-go) that takes commands on
stdin and prints JSON lines (harness.process.events). `ClientDriver` runs it as a service (start,
events, stop) and keeps every event it printed, so that assertions read the history.

Every stack's driver of one scenario speaks the same commands and events, so a scenario drives a
Java consumer and a franz-go one with the same lines and judges their histories alike.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from harness.closing import closed_on_exit
from harness.errors import ClusterError
from harness.process.events import as_event
from harness.process.worker import WorkerProcess
from harness.waiting import Owed, wait_until

# How long a consumer driver is given to hand a record already written: a group join, a coordinator
# lookup and a Fetch after a leader moved, on a machine as loaded as a CI runner (30 s was too short
# for a librdkafka group member after an unclean election there).
READ_THROUGH_S = 60


class ClientDriver:
    """One driver process; every event is kept in `events`.

    It runs as a WorkerProcess: other lines (logs) go to its log file, the last of them kept for
    `describe()`. The process carries the session marker and dies with its parent; `stop()`
    (SIGTERM, then a thread dump and SIGKILL) is idempotent and also runs on `__exit__`.
    """

    def __init__(self, name: str, command: list[str], log_path: Path, env: dict[str, str] | None = None,
                 dump_signal: signal.Signals = signal.SIGQUIT) -> None:
        self.command = command
        self.main_class = name
        self.log_path = log_path
        self.events: list[dict[str, Any]] = []
        # When each event arrived, on time.monotonic_ns()'s clock (the histories'), strictly increasing:
        # the moment a client's operation is known to have ended.
        self.arrived_ns: list[int] = []
        self.worker = WorkerProcess(name, command, log_path, self._on_event, commands=False, dump_signal=dump_signal,
                                    env=env)

    def _on_event(self, msg: dict[str, Any]) -> None:
        now = time.monotonic_ns()
        self.arrived_ns.append(max(now, self.arrived_ns[-1] + 1) if self.arrived_ns else now)
        self.events.append(as_event(msg))
        if msg.get("event") == "exited":
            # The driver is done with its input. A JVM about to exit waits about 0.3 s (longer on a
            # loaded machine) for any thread still blocked in a native read, as the Java drivers' stdin
            # readers are: the end of input lets them return, and the JVM exits at once.
            self.worker.end_input()

    @property
    def proc(self) -> subprocess.Popen[str] | None:
        return self.worker.proc

    def start(self) -> ClientDriver:
        self.worker.start()
        return self

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float, what: str,
                 since: int = 0) -> dict[str, Any]:
        """The first event from index `since` on (already seen or to come) that satisfies `predicate`."""
        seen = since

        def find() -> dict[str, Any] | None:
            nonlocal seen
            self.check_running_or_done()
            for event in self.events[seen:]:
                seen += 1
                if predicate(event):
                    return event
            return None

        # The driver's own event (its start, its answer to a command): what the target did on the way
        # arrives as events the scene judges (an error, a command_failed), not as this wait's timeout.
        return wait_until(find, timeout, lambda: f"{self.main_class} {what}: {self.describe()}", interval=0.05,
                          owed=Owed.HARNESS)

    def wait_ready(self, timeout: float = 60.0) -> dict[str, Any]:
        """The driver's "ready" event: it has started and takes commands."""
        return self.wait_for(lambda e: e.get("event") == "ready", timeout, "start")

    def ask(self, line: str, answer: str, timeout: float = 30.0) -> dict[str, Any]:
        """Send the consumer command `line` ("VERB NAME ...") and wait for its answer: the first later
        event `answer` of consumer NAME, or the driver's command_failed for the line (returned too)."""
        name = line.split()[1]
        mark = len(self.events)
        self.send_line(line)
        return self.wait_for(lambda e: (e.get("event") == answer and e.get("consumer") == name)
                             or (e.get("event") == "command_failed" and e.get("command") == line),
                             timeout, line, since=mark)

    def send_line(self, line: str) -> None:
        """Write a command line to the driver's stdin (drivers that take commands)."""
        if not self.worker.send_line(line):
            raise ClusterError(f"{self.main_class} no longer reads its input: {self.describe()}")

    def check_running_or_done(self) -> None:
        if self.proc is None:
            raise ClusterError(f"{self.main_class} was never started")

    def wait_exit(self, timeout: float) -> int:
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise ClusterError(f"{self.main_class} still running after {timeout}s: {self.describe()}") from None
        self.worker.drain(10)
        return code

    def stop(self, timeout: float = 20.0) -> None:
        if self.worker.running():
            self.worker.stop(timeout)

    def describe(self) -> str:
        last = self.events[-3:]
        return (f"exit={self.worker.returncode}, {len(self.events)} events, last {last}, "
                f"output tail {self.worker.tail(5)}")

    def __enter__(self) -> ClientDriver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stop_driver(driver: ClientDriver) -> None:
    """Ask a command-taking driver to exit (it closes its clients), then make sure it is gone."""
    if driver.proc is not None and driver.proc.poll() is None:
        driver.send_line("exit")
        try:
            driver.wait_exit(60)  # a JVM that said "exited" may take long to go on a loaded 2-core machine
        finally:
            driver.stop()


def stopped_on_exit(
    driver: ClientDriver, stop: Callable[[ClientDriver], None] = stop_driver
) -> AbstractContextManager[None]:
    """`stop(driver)` on the way out of the block; where the block raised, a stop that fails too is a
    note of the block's exception, not its replacement (harness.closing)."""
    return closed_on_exit(lambda: stop(driver), f"the {driver.main_class} driver")
