"""The one line format of every child that reports to the harness: `{"event": "<name>", ...fields}`.

One JSON object per line, flat: the event's name under "event", its fields beside it. The harness's
Python children print it (child.Channel), its Java drivers print it (KctsJson.emit), and kafka-tools'
programs, which print `{"name": ...}` lines of their own, are read into it by `as_event`.
"""

from __future__ import annotations

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
