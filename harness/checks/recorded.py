"""What a check saw, as JSON: written during a live run, read back by tests/suites.

Decoded responses hold bytes (record batches) and UUIDs (topic ids), which JSON cannot; they are
tagged objects here. A scenario's history record (a dataclass, or any mapping) is saved as the
mapping of its fields, which is what the check tests read back; sets are saved as sorted lists.
With KCTS_RECORD_CHECKS=<dir> set, `save` writes `<dir>/<name>.json`, so one live run refreshes
the recorded answers the check tests alter; without it `save` does nothing.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RECORD_ENV = "KCTS_RECORD_CHECKS"


def to_json(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, uuid.UUID):
        return {"$uuid": str(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, set | frozenset):
        return [to_json(v) for v in sorted(value, key=repr)]
    return value


def from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return base64.b64decode(value["$bytes"])
        if set(value) == {"$uuid"}:
            return uuid.UUID(value["$uuid"])
        return {k: from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_json(v) for v in value]
    return value


def save(name: str, payload: Any) -> None:
    """Write what a check is about to judge, when a recording run asked for it."""
    folder = os.environ.get(RECORD_ENV)
    if not folder:
        return
    path = Path(folder) / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(payload), indent=1, sort_keys=True) + "\n")


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    return from_json(json.loads(Path(path).read_text()))
