"""Attachments to the running check's Allure result, named for a reader: what it is and whose; and
the run's event log, where faults write what they did as they do it.

Every call does nothing outside an Allure-reporting pytest run (a bench, a script), and nothing
when allure-pytest is not installed, so any floor of the harness may attach what it knows.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

# The run's event log (reports/<run>/events.jsonl), opened by the pytest plugin; None elsewhere.
_event_log: Path | None = None
_check = ""


def text(name: str, body: str) -> None:
    """A plain-text attachment."""
    try:
        import allure
    except ImportError:
        return
    allure.attach(body, name=name, attachment_type=allure.attachment_type.TEXT)


def file(path: Path, name: str, kind: str = "text") -> None:
    """A file as an attachment; `kind` is text, json, png or anything else (attached as its extension)."""
    try:
        import allure
    except ImportError:
        return
    types = {"text": allure.attachment_type.TEXT, "json": allure.attachment_type.JSON,
             "png": allure.attachment_type.PNG}
    if kind in types:
        allure.attach.file(str(path), name=name, attachment_type=types[kind])
    else:
        allure.attach.file(str(path), name=name, extension=kind)


def timeline(name: str, events: list[dict[str, object]]) -> None:
    """Events (`{"t": seconds, "who": ..., "what": ..., **detail}`) as one line each, in time order."""
    lines = []
    for e in sorted(events, key=lambda e: float(str(e.get("t", 0)))):
        detail = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("t", "who", "what"))
        lines.append(f"{float(str(e.get('t', 0))):8.3f} s  {e.get('who', '')}: {e.get('what', '')}  {detail}".rstrip())
    text(name, "\n".join(lines) or "(no event)")


def open_event_log(path: Path | None) -> None:
    """Where `event` appends, from now on (None: nowhere)."""
    global _event_log
    _event_log = path


def set_check(name: str) -> None:
    """The check that events belong to until the next call."""
    global _check
    _check = name


def event(who: str, what: str, **detail: object) -> None:
    """One line of the run's event log: wall time, the running check, who did what, and its detail."""
    if _event_log is None:
        return
    line = {"time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z",
            "check": _check, "who": who, "what": what, **detail}
    with open(_event_log, "a") as f:
        f.write(json.dumps(line, default=str) + "\n")
