"""A long-running child under signals, logging to a file: the one lifecycle that Kafka JVMs, command
targets' nodes and their services share (start, stop, kill, pause, resume, and their log).

Subclasses say how to launch (`_launch` with their argv) and what a death during start-up means
(`check_alive`); everything else is here once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from enum import Enum
from pathlib import Path
from typing import Any

from harness import procfs
from harness.process.spawn import spawn
from harness.waiting import wait_until


class ProcessState(Enum):
    STOPPED = "stopped"
    RUNNING = "running"
    PAUSED = "paused"


def tail(path: Path, lines: int = 30) -> str:
    """The last `lines` lines of a log (from its last 64 KiB), or why there is none."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
    except OSError as exc:
        return f"<no log: {exc}>"


def wait_stopped(pid: int, timeout: float = 5.0) -> None:
    """SIGSTOP is asynchronous: wait until the kernel shows the process stopped (state T)."""

    def state() -> str:
        seen = procfs.stat(pid)
        return "gone" if seen is None else seen.state

    wait_until(lambda: state() in ("T", "t", "gone"), timeout, lambda: f"process {pid} in state {state()}", 0.01)


class LogFile:
    """A node's log on this machine, at `log_path`: its size as a mark, its text since a mark, its tail."""

    log_path: Path

    def log_tail(self, lines: int = 30) -> str:
        return tail(self.log_path, lines)

    def log_text(self, since: int = 0) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(since)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0


class SignalledProcess(LogFile):
    """One child whose stdout and stderr go to `log_path` for its whole life; every operation is
    idempotent and returns once the kernel shows its effect."""

    name: str
    log_path: Path
    stop_signal: int = signal.SIGTERM

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused = False
        self.cgroup: Path | None = None  # a v2 cgroup the process joins before it execs

    @property
    def state(self) -> ProcessState:
        if self.proc is None or self.proc.poll() is not None:
            return ProcessState.STOPPED
        return ProcessState.PAUSED if self.paused else ProcessState.RUNNING

    def _launch(self, argv: list[str], banner: str, **popen: Any) -> None:
        """Spawn `argv` (session tag, PDEATHSIG) with its output appended to the log under `banner`."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # the child writes to it for its whole life
        try:
            log.write(f"\n===== start {self.name} at {time.strftime('%H:%M:%S')}{banner} =====\n".encode())
            log.flush()
            self.proc = spawn(argv, cgroup=self.cgroup, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                               **popen)
        finally:
            log.close()
        self.paused = False

    def stop(self, timeout: float = 20.0) -> None:
        """The stop signal, and wait; SIGKILL past the timeout. Returns once the process is gone."""
        if self.state is ProcessState.STOPPED:
            return
        assert self.proc is not None
        if self.paused:
            self.resume()
        self.proc.send_signal(self.stop_signal)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL; returns once the process is gone."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        self.paused = False

    def pause(self) -> None:
        """SIGSTOP; returns once the kernel shows the process stopped."""
        if self.state is ProcessState.RUNNING:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGSTOP)
            wait_stopped(self.proc.pid)
            self.paused = True

    def resume(self) -> None:
        if self.state is ProcessState.PAUSED:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGCONT)
            self.paused = False

