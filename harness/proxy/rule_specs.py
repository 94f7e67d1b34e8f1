"""Proxy rules named as data, for the catalogues (harness/replays.toml, harness/allowed.toml) and the
`--proxy-rule` option: `RuleSpec` is a rule class by name, with its arguments, of a family module of
harness/proxy/rules/, of harness/proxy/allowed_rules.py or of harness/proxy/record_faults.py;
`parse_rule` reads one from `Name(key=value, ...)`; `read_catalogue` and `rules_of` read a
catalogue's TOML, naming the entry at fault in every error."""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import KctsError
from harness.proxy import allowed_rules, record_faults, rules
from harness.proxy.rules import Rule

RULE_MODULES = (*rules.FAMILIES, allowed_rules, record_faults)
WHERE = "harness/proxy/rules/, harness/proxy/allowed_rules.py or harness/proxy/record_faults.py"


def rule_class(name: str) -> type[Rule] | None:
    """The rule class called `name` in one of RULE_MODULES; None where there is none."""
    for module in RULE_MODULES:
        cls = getattr(module, name, None)
        if isinstance(cls, type) and issubclass(cls, Rule) and not name.startswith("_"):
            return cls
    return None


def tupled(value: Any) -> Any:
    """TOML arrays and Python lists as tuples: rules take tuples (versions, lookups), and a frozen spec
    must stay hashable."""
    return tuple(tupled(v) for v in value) if isinstance(value, list | tuple) else value


@dataclass(frozen=True)
class RuleSpec:
    """One proxy rule by its class name, with its arguments."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    def make(self) -> Rule:
        cls = rule_class(self.name)
        if cls is None:
            raise KctsError(f"proxy rule {self.name!r} is no rule of {WHERE}")
        try:
            return cls(**dict(self.args))
        except (TypeError, ValueError) as exc:
            raise KctsError(f"proxy rule {self.name}: {exc}") from None

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.args)
        return f"{self.name}({args})"


def rules_of(entry: dict[str, Any], table: str, where: str) -> tuple[RuleSpec, ...]:
    """The `[[<table>.rules]]` of one catalogue entry as specs, each made once to check its arguments."""
    specs = []
    for r in entry.get("rules", ()):
        r = dict(r)
        name = r.pop("rule", None)
        if not name:
            raise KctsError(f"{where}: a rule without its `rule` name")
        spec = RuleSpec(name, tuple((k, tupled(v)) for k, v in sorted(r.items())))
        try:
            spec.make()
        except KctsError as exc:
            raise KctsError(f"{where}: {exc}") from None
        specs.append(spec)
    return tuple(specs)


def read_catalogue(path: Path, table: str, what: str) -> list[tuple[str, dict[str, Any]]]:
    """The entries of `[[<table>]]` in the TOML file at `path`, each with how errors name it."""
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KctsError(f"cannot read the {what} {path}: {exc}") from None
    return [(f"{path.name} {table} #{i + 1} ({entry.get('id', 'no id')})", entry)
            for i, entry in enumerate(data.get(table, []))]


def _literal(text: str, node: ast.expr) -> Any:
    """A keyword's value, as a Python literal or, failing that, as TOML (`true`, `[1, 2]`)."""
    source = ast.get_source_segment(text, node) or ""
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    try:
        return tomllib.loads(f"v = {source}")["v"]
    except tomllib.TOMLDecodeError:
        raise KctsError(f"--proxy-rule {text!r}: {source!r} is neither a Python literal nor a TOML value") from None


def parse_rule(text: str) -> RuleSpec:
    """`Name(key=value, ...)` as a checked RuleSpec: every argument named, each value a Python literal
    (None, 35, "TxnOffsetCommit", (6, 6)) or a TOML value (true, [6, 6])."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise KctsError(f"--proxy-rule {text!r}: not Name(key=value, ...): {exc.msg}") from None
    if isinstance(tree, ast.Name):
        tree = ast.Call(tree, [], [])
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)):
        raise KctsError(f"--proxy-rule {text!r}: not Name(key=value, ...)")
    if tree.args or any(k.arg is None for k in tree.keywords):
        raise KctsError(f"--proxy-rule {text!r}: name every argument (key=value)")
    stripped = text.strip()
    spec = RuleSpec(tree.func.id, tuple((k.arg, tupled(_literal(stripped, k.value))) for k in tree.keywords
                                        if k.arg is not None))
    spec.make()
    return spec
