"""The child side of a worker process (see worker.py): a spec in, event lines out, commands in.

stdout carries only events (events.py), one JSON object per line; client logs and Python's fault
dumps go to stderr, which the parent keeps as the child's log. A child ends with `exit_now`, past
Python's finalizers: a client left wedged in a stuck thread must not hold the exit (or crash it)
once the child's work is written.
"""

from __future__ import annotations

import faulthandler
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from harness.process.events import Message

# librdkafka writes its own warnings and errors to stderr, which is the child's log. Not a Python
# logger: that would run Python on librdkafka's threads for every line.
CLIENT_LOGS = {"log_level": 4}


class Channel:
    """Events to the parent, `{"event": name, ...fields}` per line, whole lines even from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def event(self, name: str, /, **fields: Any) -> None:
        line = json.dumps({"event": name, **fields}, separators=(",", ":")) + "\n"
        with self._lock:
            sys.stdout.write(line)
            sys.stdout.flush()


def setup() -> Message:
    """Fault dumps and client logs to stderr; returns the spec (the first line of input)."""
    faulthandler.enable(all_threads=True)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # The parent stops a child by command; Ctrl-C on the terminal is the parent's to handle.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    line = sys.stdin.readline()
    if not line:
        exit_now(0)
    return json.loads(line)


def serve(on_command: Callable[[Message], None], on_eof: Callable[[], None]) -> threading.Thread:
    """Read commands in a thread; the end of input (the parent closed it, or died) calls `on_eof`."""

    def read() -> None:
        for line in sys.stdin:
            if line.strip():
                on_command(json.loads(line))
        on_eof()

    reader = threading.Thread(target=read, name="commands", daemon=True)
    reader.start()
    return reader


def exit_now(code: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
