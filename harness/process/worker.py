"""A child process seen from the harness: JSON lines out (events.py), commands in, output kept.

Workload clients run this way (child.py is their side), and so do Java clients and daemons that
take no commands. Client libraries crash (librdkafka's teardown has segfaulted inside the pytest
process) and hang (librdkafka #5456, #5511). Run in a child, a crash ends that child only: the
parent sees an exit code or a signal, keeps the child's stderr as evidence, and decides what the
check makes of it.

The child carries the session marker (the reaper finds it) and PR_SET_PDEATHSIG: it dies with the
thread that started it, so a worker must be started and stopped by one long-lived thread.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import session
from harness.process.events import Message
from harness.process.spawn import spawn


def python_command(module: str) -> list[str]:
    """`python -m <module>` for a child module of the harness, tagged with the session marker."""
    return [sys.executable, "-X", "faulthandler", "-m", module, session.current().marker]


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class WorkerProcess:
    """One child process. Its stdout lines that parse as JSON objects go to `on_message`; every
    other line of its output goes to `log_path`, the last `tail_lines` of it kept for evidence.

    `stop()` asks first (a stop command, or SIGTERM for programs that take no commands), then asks
    the child to dump its threads (`dump_signal`: SIGUSR1 for Python children with faulthandler,
    SIGQUIT for a JVM) and kills it.
    """

    def __init__(
        self,
        name: str,
        command: list[str],
        log_path: Path,
        on_message: Callable[[Message], None] = lambda _msg: None,
        commands: bool = True,
        dump_signal: signal.Signals = signal.SIGUSR1,
        tail_lines: int = 200,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.command = command
        self.log_path = log_path
        self.on_message = on_message
        self.commands = commands
        self.dump_signal = dump_signal
        self.env = env
        self.proc: subprocess.Popen[str] | None = None
        self.stop_requested = False
        self.hung = False
        self._tail: deque[str] = deque(maxlen=tail_lines)
        self._log_lock = threading.Lock()
        self._readers: list[threading.Thread] = []

    # -- lifecycle -----------------------------------------------------------------------
    def start(self, spec: Message | None = None) -> WorkerProcess:
        """Start the child; `spec`, if given, is its first line of input."""
        self.stop_requested = False
        self.hung = False
        self.proc = spawn(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if self.commands else subprocess.STDOUT,
            text=True, bufsize=1, env=self.env,
        )
        streams = [self.proc.stdout] + ([self.proc.stderr] if self.commands else [])
        self._readers = [
            threading.Thread(target=self._read, args=(s,), daemon=True, name=f"{self.name}-{i}")
            for i, s in enumerate(streams)
        ]
        for r in self._readers:
            r.start()
        if spec is not None:
            self.send(spec)
        return self

    def send(self, msg: Message) -> bool:
        """Write one command as a JSON line; False if the child no longer reads."""
        return self.send_line(json.dumps(msg))

    def send_line(self, line: str) -> bool:
        """Write one line to the child's input; False if it no longer reads."""
        if self.proc is None or self.proc.stdin is None or self.proc.stdin.closed:
            return False
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, ValueError, OSError):
            return False

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def stop(self, timeout: float = 60.0) -> int | None:
        """Ask the child to end, wait up to `timeout`, then dump its threads and kill it. Idempotent."""
        if self.proc is None:
            return None
        self.stop_requested = True
        if self.proc.poll() is None:
            if self.commands:
                self.send({"cmd": "stop"})
                self._close_stdin()
            else:
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.hung = True
                self._log(f"[kcts] {self.name} did not stop within {timeout}s: dumping its threads, then SIGKILL")
                self.proc.send_signal(self.dump_signal)
                try:
                    self.proc.wait(3)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
        self._close_stdin()
        self.drain()
        return self.proc.returncode

    def drain(self, timeout: float = 5.0) -> None:
        """Wait until the output of an ended child has been read to its end."""
        for r in self._readers:
            r.join(timeout)

    def end_input(self) -> None:
        """Close the child's input: it reads end of file (a child that has said it is done with it)."""
        self._close_stdin()

    def _close_stdin(self) -> None:
        if self.proc is not None and self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    # -- output ----------------------------------------------------------------------------
    def _read(self, stream: Any) -> None:
        for line in stream:
            if line.startswith("{"):
                try:
                    msg = json.loads(line)
                except ValueError:
                    msg = None
                if isinstance(msg, dict):
                    self.on_message(msg)
                    continue
            self._log(line.rstrip("\n"))

    def _log(self, line: str) -> None:
        with self._log_lock:
            self._tail.append(line)
            with open(self.log_path, "a") as log:
                log.write(line + "\n")

    def tail(self, n: int = 20) -> list[str]:
        with self._log_lock:
            return list(self._tail)[-n:]

    def last_words(self, limit: int = 60) -> list[str]:
        """What the child said as it ended: Python's fault dump from its first line when there is one
        (it names the signal, then every thread's stack), else the last lines of its output."""
        lines = self.tail(len(self._tail))
        starts = [i for i, line in enumerate(lines) if line.startswith("Fatal Python error")]
        return lines[starts[-1]:][:limit] if starts else lines[-15:]

    def describe(self) -> str:
        pid = self.proc.pid if self.proc is not None else None
        return f"{self.name} (pid {pid}, {describe_exit(self.returncode)}, log {self.log_path})"
