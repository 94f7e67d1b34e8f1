"""Evidence for failing tests: node log tails since the test began, and anything a test recorded."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Evidence:
    """Sources of evidence registered by fixtures, read only when a test fails."""

    environment: dict[str, str] = field(default_factory=dict)
    fingerprint: dict[str, Any] | None = None  # harness.reporting.fingerprint, taken once the target runs
    log_sources: list[Callable[[], list[Path]]] = field(default_factory=list)
    _marks: dict[str, dict[Path, int]] = field(default_factory=dict)

    def add_logs(self, source: Callable[[], list[Path]]) -> None:
        self.log_sources.append(source)

    def mark(self, nodeid: str) -> None:
        """Remember how long each log was when a test started, so that only its part is attached."""
        self._marks[nodeid] = {p: _size(p) for p in self._paths()}

    def collect(self, item: pytest.Item, max_bytes: int = 48 * 1024) -> Iterator[tuple[str, str]]:
        marks = self._marks.get(item.nodeid, {})
        for path in self._paths():
            start = marks.get(path, 0)
            size = _size(path)
            if size <= start:
                continue
            with open(path, "rb") as f:
                f.seek(max(start, size - max_bytes))
                text = f.read().decode(errors="replace")
            yield f"{_node(path)} log, during the test", text

    def _paths(self) -> list[Path]:
        return [p for source in self.log_sources for p in source()]


def _node(path: Path) -> str:
    """"broker 2" for broker-2.log, "controller 1000" for controller-1000.log; else the file's name."""
    role, _, number = path.stem.rpartition("-")
    return f"{role} {number}" if role and number.isdigit() else path.name


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
