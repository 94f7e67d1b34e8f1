"""A child held for its whole life and commanded over its stdin, one JSON line a command, each
answered by one JSON line on its stdout with the command's id (kfake's control loop, the holder of
librdkafka's mock cluster). Its stderr goes to a log file, whose tail every error carries.

The first line the child writes says it is ready (its addresses); `start` returns it parsed. After
that a reader thread queues each line, so a command waits on the queue with a deadline, never on
a blocking read, and a child that dies is noticed at once (the queue's last word is None).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import ClusterError, NodeExited
from harness.process.spawn import spawn


class JsonLineChannel:
    def __init__(self, name: str, log_path: Path, *, close_by_stdin: bool = False) -> None:
        self.name = name  # how errors name the child: "kfake", "the mock cluster's holder"
        self.log_path = log_path
        # True: the child ends itself when its stdin closes (and cleans up first); False: SIGTERM.
        self._close_by_stdin = close_by_stdin
        self.proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()  # one command in flight: replies come in order, matched by id
        self._next_id = 0
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()  # None: the child's stdout ended
        self._reader: threading.Thread | None = None

    def start(self, cmd: Sequence[str]) -> dict[str, Any]:
        """Spawn the child and return its ready line, parsed; ClusterError (the child closed) if it
        wrote something else."""
        log = open(self.log_path, "w")  # the child writes its stderr here for its whole life
        try:
            self.proc = spawn(list(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        finally:
            log.close()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        try:
            ready = json.loads(line)
            if not isinstance(ready, dict):
                raise TypeError(type(ready).__name__)
        except (ValueError, TypeError) as exc:
            self.close()
            raise ClusterError(f"{self.name} did not report that it is ready: {line!r}; "
                               f"log: {self.log_tail()}") from exc
        self._reader = threading.Thread(target=self._read_replies, name=f"kcts-{self.name}-replies", daemon=True)
        self._reader.start()
        return ready

    def command(self, op: str, timeout: float, **fields: Any) -> dict[str, Any]:
        """Send one command and return its reply; ClusterError on an error reply or no reply in time,
        NodeExited when the child is gone."""
        what = f"{op} {json.dumps(fields, sort_keys=True)}"
        with self._lock:
            if self.proc is None or self.proc.stdin is None:
                raise ClusterError(f"{self.name} is not started; cannot {what}")
            if self.proc.poll() is not None:
                raise self.exited(f"before {what}")
            self._next_id += 1
            rid = self._next_id
            try:
                self.proc.stdin.write(json.dumps({"id": rid, "op": op, **fields}) + "\n")
                self.proc.stdin.flush()
            except (OSError, ValueError) as exc:
                raise self.exited(f"when sent {what}") from exc
            deadline = time.monotonic() + timeout
            while True:
                try:
                    reply = self._replies.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    raise ClusterError(f"{self.name} did not answer {what} within {timeout:.0f}s; "
                                       f"log {self.log_path}: {self.log_tail()}") from None
                if reply is None:
                    self._replies.put(None)  # stays the last word for whoever asks next
                    raise self.exited(f"while asked {what}")
                if reply.get("id") != rid:
                    continue  # the late answer to a command that timed out before
                if "error" in reply:
                    raise ClusterError(f"{self.name} refused {what}: {reply['error']}")
                return reply

    def close(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                if self._close_by_stdin:
                    assert proc.stdin is not None
                    proc.stdin.close()
                else:
                    proc.terminate()
                proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait(10)
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:
                        pass  # a broken pipe to a dead child is what close means here
        if self._reader is not None:
            self._reader.join(5)

    def log_tail(self, chars: int = 1500) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:] or "(empty)"
        except OSError as exc:
            return f"(unreadable: {exc})"

    def exited(self, doing: str) -> NodeExited:
        code = self.proc.poll() if self.proc is not None else None
        return NodeExited(f"{self.name} exited (code {code}) {doing}; log {self.log_path}: {self.log_tail()}")

    def _read_replies(self) -> None:
        """The reader thread: every line after the ready line is one reply."""
        assert self.proc is not None and self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                try:
                    self._replies.put(json.loads(line))
                except ValueError:
                    self._replies.put({"id": None, "garbled": line})
        except (OSError, ValueError):
            pass  # the pipe closed under us: close() ran
        self._replies.put(None)
