"""Recordings on disk: what a check judged, saved during a live run and read back by tests/checks.

With KCTS_RECORD_CHECKS=<dir> set, `save` writes `<dir>/<name>.json` (the history through the
codec), so one live run refreshes the recordings the check tests alter; without it `save` does
nothing. `load` reads a recording into its history type; `load_json` reads it as tagged JSON, for
a test that alters it before decoding. The checks never touch a file: this is the only I/O of
histories.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TypeVar

from harness.histories.json_codec import Json, decode, dumps, untyped

RECORD_ENV = "KCTS_RECORD_CHECKS"

T = TypeVar("T")


def save(name: str, history: object) -> None:
    """Write what a check is about to judge, when a recording run asked for it."""
    folder = os.environ.get(RECORD_ENV)
    if not folder:
        return
    path = Path(folder) / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(history))


def load_json(path: str | os.PathLike[str]) -> Json:
    """A recording as JSON, tags kept (decode it with `codec.decode` once altered)."""
    data: Json = json.loads(Path(path).read_text())
    return data


def load(path: str | os.PathLike[str], kind: type[T]) -> T:
    """A recording read into its history type."""
    return decode(kind, load_json(path))


def load_untyped(path: str | os.PathLike[str]) -> Any:
    """A recording of a history not yet typed: JSON with bytes and UUIDs restored."""
    return untyped(load_json(path))
