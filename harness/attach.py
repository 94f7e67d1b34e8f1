"""Attachments to the running check's Allure result, named for a reader: what it is and whose.

Every call does nothing outside an Allure-reporting pytest run (a bench, a script), and nothing
when allure-pytest is not installed, so any floor of the harness may attach what it knows.
"""

from __future__ import annotations

from pathlib import Path


def text(name: str, body: str) -> None:
    """A plain-text attachment."""
    try:
        import allure
    except ImportError:
        return
    allure.attach(body, name=name, attachment_type=allure.attachment_type.TEXT)


def file(path: Path, name: str, kind: str = "text") -> None:
    """A file as an attachment; `kind` is text, json or anything else (attached as its extension)."""
    try:
        import allure
    except ImportError:
        return
    types = {"text": allure.attachment_type.TEXT, "json": allure.attachment_type.JSON}
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
