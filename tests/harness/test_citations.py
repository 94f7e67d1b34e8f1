"""The harness cites KIPs by name and section, as a reader can look them up: never by the number of
a note outside this repository ("seed 004"), and the promise catalogue points at nothing outside it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SEED = re.compile(r"\bseeds? \d{3}\b", re.IGNORECASE)


def test_no_module_cites_a_seed_number() -> None:
    cited = [f"{p.relative_to(REPO)}:{n}: {line.strip()}"
             for d in ("harness", "suites", "fixtures", "tests")
             for p in sorted((REPO / d).rglob("*.py")) if p != Path(__file__).resolve()
             for n, line in enumerate(p.read_text().splitlines(), 1) if SEED.search(line)]
    assert not cited, "cite the KIP by name and section instead:\n  " + "\n  ".join(cited)


def test_the_promise_catalogue_points_nowhere_outside_the_repository() -> None:
    text = (REPO / "harness" / "promises.toml").read_text()
    outside = [line for line in text.splitlines() if "../" in line or "shared/reference" in line]
    assert not outside, outside
