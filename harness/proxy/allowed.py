"""The catalogue of allowed behaviour (harness/allowed.toml) as data: what a correct broker may do
that Apache Kafka on one machine seldom does, the text that allows it (a KIP's section, or the
protocol's own definitions), and the proxy rules that make a local Apache Kafka do it. Below both the
proxy's `--allowed` plugin option (harness.proxy.replaying) and the runner (harness.allowed).

An entry without rules is listed, not staged: its `how` says why a proxy cannot make it faithfully
yet, and the runner reports it as such, never as passing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.errors import KctsError
from harness.proxy.rule_specs import RuleSpec, read_catalogue, rules_of
from harness.proxy.rules import Rule

CATALOGUE = Path(__file__).resolve().parent.parent / "allowed.toml"
REQUIRED = ("id", "title", "source", "quote", "tests")


@dataclass(frozen=True)
class Allowed:
    id: str
    title: str
    source: str  # the document and section that allows it
    quote: str  # the sentence of that source that allows it, exactly
    rules: tuple[RuleSpec, ...]
    tests: tuple[str, ...]
    select: str | None = None  # a pytest -k expression narrowing the tests
    how: str = ""  # for an entry not staged: why a proxy cannot make it faithfully yet

    @property
    def staged(self) -> bool:
        return bool(self.rules)

    def make_rules(self) -> list[Rule]:
        return [r.make() for r in self.rules]


def load(path: Path = CATALOGUE) -> dict[str, Allowed]:
    """The catalogue, checked: every field there, rules that exist and take their arguments, and a
    `how` for each entry that has no rules."""
    out: dict[str, Allowed] = {}
    for where, entry in read_catalogue(path, "allowed", "catalogue of allowed behaviour"):
        missing = [k for k in REQUIRED if not entry.get(k)]
        if missing:
            raise KctsError(f"{where}: missing {', '.join(missing)}")
        if entry["id"] in out:
            raise KctsError(f"{where}: id {entry['id']!r} is used twice")
        if "rules" not in entry:
            raise KctsError(f"{where}: missing rules (`rules = []` with a `how` for one not staged yet)")
        specs = rules_of(entry, "allowed", where)
        how = entry.get("how", "")
        if not specs and not how:
            raise KctsError(f"{where}: no rules and no `how` saying why it is not staged")
        if specs and how:
            raise KctsError(f"{where}: staged (it has rules), so no `how`")
        out[entry["id"]] = Allowed(entry["id"], entry["title"], entry["source"], entry["quote"], specs,
                                   tuple(entry["tests"]), entry.get("select"), how)
    return out
