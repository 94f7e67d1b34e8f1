"""The promise catalogue (harness/promises.toml): every testable promise of the four KIPs, and which
checks judge it. A check names the promises it judges with `@pytest.mark.promise("kip320....")`."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from harness.errors import KctsError

CATALOGUE = Path(__file__).resolve().parent / "promises.toml"
SIDES = ("broker", "client")


@dataclass(frozen=True)
class Promise:
    id: str
    kip: str
    section: str
    side: str
    text: str
    apis: dict[str, str] = field(default_factory=dict)  # API -> the versions it concerns ("9+", "0-5", "6")
    unobservable: str | None = None  # why no check can see it
    pending: str | None = None  # what is missing before a check can judge it

    @property
    def expects_checks(self) -> bool:
        return self.unobservable is None and self.pending is None

    def concerns(self, api: str, version: int) -> bool:
        """Whether `api` at `version` is one this promise is about."""
        spec = self.apis.get(api)
        if spec is None:
            return False
        if spec == "any":
            return True
        if spec.endswith("+"):
            return version >= int(spec[:-1])
        low, _, high = spec.partition("-")
        return int(low) <= version <= int(high or low)


def load(path: Path = CATALOGUE) -> dict[str, Promise]:
    """Every promise by id; a malformed entry is one error naming it."""
    entries = tomllib.loads(path.read_text()).get("promise", [])
    found: dict[str, Promise] = {}
    for e in entries:
        try:
            p = Promise(**e)
        except TypeError as exc:
            raise KctsError(f"{path.name}: entry {e.get('id', e)}: {exc}") from None
        if p.id in found:
            raise KctsError(f"{path.name}: promise {p.id} is listed twice")
        if p.side not in SIDES:
            raise KctsError(f"{path.name}: promise {p.id} has side {p.side!r}; one of {SIDES}")
        if p.unobservable and p.pending:
            raise KctsError(f"{path.name}: promise {p.id} is both unobservable and pending")
        found[p.id] = p
    return found


@cache
def catalogue() -> dict[str, Promise]:
    return load()
