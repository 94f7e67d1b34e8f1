"""The catalogue of documented broker bugs (harness/replays.toml) as data: each entry's link, the
promise it broke, and the proxy rules that make Apache Kafka answer as that broker did. Below both
the proxy's `--replay` plugin (harness.proxy.replaying) and the runner (harness.replay). The rules
are named as harness.proxy.rule_specs reads them, as in the catalogue of allowed behaviour."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import KctsError
from harness.promises import catalogue
from harness.proxy.rule_specs import RuleSpec, read_catalogue, rules_of
from harness.proxy.rules import Rule

__all__ = ["CATALOGUE", "Replay", "RuleSpec", "load"]

CATALOGUE = Path(__file__).resolve().parent.parent / "replays.toml"


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
    # A broker answer that made a client misbehave is replayed to that client at the release that had
    # the bug: the run is a client-only run of this stack (`--client-stack S@VERSION`); None: the default stacks.
    client_stack: str | None = None

    def make_rules(self) -> list[Rule]:
        return [r.make() for r in self.rules]


def load(path: Path = CATALOGUE) -> dict[str, Replay]:
    """The catalogue, checked: known promises, rules that exist and take their arguments, test paths."""
    promises = catalogue()
    out: dict[str, Replay] = {}
    for where, entry in read_catalogue(path, "replay", "replay catalogue"):
        missing = [k for k in ("id", "title", "link", "promise", "rules", "tests") if not entry.get(k)]
        if missing:
            raise KctsError(f"{where}: missing {', '.join(missing)}")
        if entry["id"] in out:
            raise KctsError(f"{where}: id {entry['id']!r} is used twice")
        if entry["promise"] not in promises:
            raise KctsError(f"{where}: promise {entry['promise']!r} is not in harness/promises.toml")
        replay = Replay(entry["id"], entry["title"], entry["link"], entry["promise"], rules_of(entry, "replay", where),
                        tuple(entry["tests"]), entry.get("select"), tuple(entry.get("caught_by", ())),
                        entry.get("client_stack"))
        out[replay.id] = replay
    return out
