"""What every Python driver shares: JSON-line events on stdout, command lines from stdin, logs on stderr."""

from __future__ import annotations

import json
import logging
import queue
import sys
import threading
from typing import Any

_OUT = threading.Lock()


def emit(event: dict[str, Any]) -> None:
    """One event line; whole lines even from the client's own threads (a delivery callback)."""
    line = json.dumps(event) + "\n"
    with _OUT:
        sys.stdout.write(line)
        sys.stdout.flush()


def commands() -> queue.Queue[str]:
    """The driver's input lines, stripped, read in a thread; "exit" at the end of input (the harness
    closed it, or died), so that a driver never outlives its parent's pipe."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            lines.put(line.strip())
        lines.put("exit")

    threading.Thread(target=read, name="commands", daemon=True).start()
    return lines


def client_logs(*verbose: str) -> None:
    """The client's own log on stderr (the driver's log file, kept as evidence): warnings, and the
    loggers `verbose` (where the client says what it decided, e.g. a truncation it found) from INFO."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for name in verbose:
        logging.getLogger(name).setLevel(logging.INFO)


def qualified(exc: BaseException) -> str:
    return f"{type(exc).__module__}.{type(exc).__qualname__}"


def failed(line: str, exc: BaseException, lacks: bool = False) -> None:
    """The answer to a command the driver could not do. `lacks`: the client has no API for it; the
    exception named is then the client's own (the cause), the message the driver's account of it."""
    raised = exc.__cause__ if lacks and exc.__cause__ is not None else exc
    emit({"event": "command_failed", "command": line, "exception": qualified(raised), "message": str(exc),
          "lacks": lacks})
