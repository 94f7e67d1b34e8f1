"""The catalogue of documented broker bugs (harness/replays.toml) as data: each entry's link, the
promise it broke, and the proxy rules that make Apache Kafka answer as that broker did. Below both
the proxy's `--replay` plugin (harness.proxy.replaying) and the runner (harness.replay)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.promises import catalogue
from harness.proxy import rules as proxy_rules
from harness.proxy.rules import Rule

CATALOGUE = Path(__file__).resolve().parent.parent / "replays.toml"


@dataclass(frozen=True)
class RuleSpec:
    """One proxy rule by its class name in harness/proxy/rules.py, with its arguments."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    def make(self) -> Rule:
        cls = getattr(proxy_rules, self.name, None)
        if not (isinstance(cls, type) and issubclass(cls, Rule)):
            raise KctsError(f"replay rule {self.name!r} is no rule of harness/proxy/rules.py")
        try:
            return cls(**dict(self.args))
        except TypeError as exc:
            raise KctsError(f"replay rule {self.name}: {exc}") from None

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.args)
        return f"{self.name}({args})"


@dataclass(frozen=True)
class Replay:
    id: str
    title: str
    link: str
    promise: str
    rules: tuple[RuleSpec, ...]
    tests: tuple[str, ...]
    select: str | None = None  # a pytest -k expression that narrows the tests to the checks that bear on it
    caught_by: tuple[str, ...] = field(default=())  # the checks seen catching it on a live run, for the README

    def make_rules(self) -> list[Rule]:
        return [r.make() for r in self.rules]


def _tupled(value: Any) -> Any:
    # TOML arrays are lists; rules take tuples (versions, lookups) and must stay hashable where frozen.
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def load(path: Path = CATALOGUE) -> dict[str, Replay]:
    """The catalogue, checked: known promises, rules that exist and take their arguments, test paths."""
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KctsError(f"cannot read the replay catalogue {path}: {exc}") from None
    promises = catalogue()
    out: dict[str, Replay] = {}
    for i, entry in enumerate(data.get("replay", [])):
        where = f"{path.name} replay #{i + 1} ({entry.get('id', 'no id')})"
        missing = [k for k in ("id", "title", "link", "promise", "rules", "tests") if not entry.get(k)]
        if missing:
            raise KctsError(f"{where}: missing {', '.join(missing)}")
        if entry["id"] in out:
            raise KctsError(f"{where}: id {entry['id']!r} is used twice")
        if entry["promise"] not in promises:
            raise KctsError(f"{where}: promise {entry['promise']!r} is not in harness/promises.toml")
        specs = []
        for r in entry["rules"]:
            r = dict(r)
            name = r.pop("rule", None)
            if not name:
                raise KctsError(f"{where}: a rule without its `rule` name")
            specs.append(RuleSpec(name, tuple((k, _tupled(v)) for k, v in sorted(r.items()))))
        replay = Replay(entry["id"], entry["title"], entry["link"], entry["promise"], tuple(specs),
                        tuple(entry["tests"]), entry.get("select"), tuple(entry.get("caught_by", ())))
        try:
            replay.make_rules()
        except KctsError as exc:
            raise KctsError(f"{where}: {exc}") from None
        out[replay.id] = replay
    return out
