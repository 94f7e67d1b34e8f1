"""`kcts compare RUN_A RUN_B`: do two runs give the same verdict on every check both ran?

Each run is a report folder (or its `results.json`). The docker backend's gate compares its smoke
and KIP-320 run with the local run of the same release this way: a backend must not change what
kcts finds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.errors import KctsError


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    common: int
    differ: list[tuple[str, str, str]]  # nodeid, cell in a, cell in b
    only_a: list[str]
    only_b: list[str]

    @property
    def same(self) -> bool:
        return self.common > 0 and not self.differ

    def render(self) -> str:
        lines = [f"{self.common} checks in both {self.a} and {self.b}; {len(self.differ)} with another verdict"]
        lines += [f"  {nodeid}: {ca} in {self.a}, {cb} in {self.b}" for nodeid, ca, cb in self.differ]
        if self.only_a or self.only_b:
            lines.append(f"  ({len(self.only_a)} only in {self.a}, {len(self.only_b)} only in {self.b}: not compared)")
        return "\n".join(lines)


def load_cells(run: Path) -> tuple[str, dict[str, str]]:
    """A run's name and its verdict cell per check."""
    path = run / "results.json" if run.is_dir() else run
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise KctsError(f"no results to compare at {path}: {exc}") from None
    name = path.parent.name
    return name, {c["nodeid"]: c["cell"] for c in data.get("checks", [])}


def compare(a: Path, b: Path) -> Comparison:
    name_a, cells_a = load_cells(a)
    name_b, cells_b = load_cells(b)
    common = sorted(set(cells_a) & set(cells_b))
    differ = [(n, cells_a[n], cells_b[n]) for n in common if cells_a[n] != cells_b[n]]
    return Comparison(name_a, name_b, len(common), differ, sorted(set(cells_a) - set(cells_b)),
                      sorted(set(cells_b) - set(cells_a)))
