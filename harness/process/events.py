"""The one line format of every child that reports to the harness: `{"event": "<name>", ...fields}`.

One JSON object per line, flat: the event's name under "event", its fields beside it. The harness's
Python children print it (child.Channel), its Java drivers print it (KctsJson.emit), and kafka-tools'
programs, which print `{"name": ...}` lines of their own, are read into it by `as_event`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]


def as_event(msg: Message) -> Message:
    """`msg` in the one format: kafka-tools' `{"name": n, ...}` becomes `{"event": n, ...}`;
    a line already in it is returned as it is."""
    if "event" not in msg and isinstance(msg.get("name"), str):
        return {"event": msg["name"], **{k: v for k, v in msg.items() if k != "name"}}
    return msg


def event_fields(msg: Message) -> Message:
    """An event's fields without its name."""
    return {k: v for k, v in msg.items() if k != "event"}


@dataclass
class EventLog:
    events: list[dict[str, object]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _t0: float = field(default_factory=time.monotonic, repr=False)

    def add(self, who: str, what: str, **detail: object) -> None:
        with self._lock:
            self.events.append({"t": round(time.monotonic() - self._t0, 3), "who": who, "what": what, **detail})

    def add_reported(self, who: str, event: dict[str, object]) -> None:
        """An event a child process reported, `{"event": name, ...fields}` (harness.process.events)."""
        detail = dict(event)
        self.add(who, str(detail.pop("event")), **detail)

    def at_ns(self, event: dict[str, object]) -> int:
        """An event's moment on time.monotonic_ns()'s clock, the one client histories are written on
        (harness.histories.history), so that faults and operations share one time axis."""
        return round((self._t0 + float(str(event["t"]))) * 1e9)

    def count(self, what: str) -> int:
        with self._lock:
            return sum(1 for e in self.events if e["what"] == what)

    def of_who(self, who: str) -> list[dict[str, object]]:
        with self._lock:
            return [e for e in self.events if e["who"] == who]

    def of(self, what: str) -> list[dict[str, object]]:
        with self._lock:
            return [e for e in self.events if e["what"] == what]
