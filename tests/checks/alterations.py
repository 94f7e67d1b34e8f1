"""Recorded histories, read into their types, and altered one field at a time for the can-fail tests.

An `Alteration` names the recording, the field it changes (a path: `exchange.response.Topics[0].
Partitions[1].ErrorCode`, `[-1]` for the last item, `[*]` for every one), the value it puts there
(or a `Change`: a function of the old value and the whole recording), the check that must then
fail, the promise that check judges in the suites, and what the failure must show as evidence
(the altered value, mostly). The change is made on the recording's JSON, which is then read into
its history type through the one codec, so an alteration can only produce a history the type admits.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recordings import DATA

from harness.histories import json_codec, store

Change = Callable[[Any, Any], Any]  # (the old value, the whole recording) -> the new value
Check = Callable[[Any], object]


@dataclass(frozen=True)
class Alteration:
    """One field of one recording changed, and the check that must fail on it."""

    id: str
    promise: str
    recording: str
    changes: tuple[tuple[str, object], ...]  # (field path, new value or Change), applied in order
    check: Check
    shows: str = ""  # what the failure message must carry as evidence
    raises: type[BaseException] = AssertionError


def alteration(id: str, promise: str, recording: str, field: str, value: object, check: Check, shows: str = "",
               raises: type[BaseException] = AssertionError) -> Alteration:
    """The usual alteration: one field."""
    return Alteration(id, promise, recording, ((field, value),), check, shows, raises)


def raw(name: str) -> Any:
    """The recording `name` as JSON with bytes and UUIDs restored, free to alter."""
    path = DATA / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"no recorded answer {path.name}; refresh tests/checks/data "
                                "(see tests/checks/conftest.py)")
    return copy.deepcopy(store.load_untyped(path))


def typed(kind: type, data: Any) -> Any:
    """An (altered) recording read into its history type, through the codec."""
    return json_codec.decode(kind, json_codec.encode(data))


_STEP = re.compile(r"\.?(\w+)|\[(-?\d+|\*)\]")


def _steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            raise ValueError(f"bad field path {path!r} at {pos}")
        steps.append(m.group(1) if m.group(1) is not None else ("*" if m.group(2) == "*" else int(m.group(2))))
        pos = m.end()
    return steps


def apply(data: Any, path: str, value: object) -> Any:
    """`data` with the field at `path` set to `value` (or `value(old, data)` for a Change)."""
    def put(node: Any, steps: list[str | int]) -> None:
        head, rest = steps[0], steps[1:]
        keys = range(len(node)) if head == "*" else [head]
        for key in keys:
            if rest:
                put(node[key], rest)
            else:
                node[key] = value(node[key], data) if callable(value) else copy.deepcopy(value)

    put(data, _steps(path))
    return data


def altered(a: Alteration, kind: type) -> Any:
    data = raw(a.recording)
    for path, value in a.changes:
        apply(data, path, value)
    return typed(kind, data)
