"""The session's cluster behind the protocol proxy, with rules named on the command line (a pytest
plugin `kcts replay` and `kcts allowed` load with `-p harness.proxy.replaying`):

- `--replay ID`: the rules of that replay of a documented bug (harness/replays.toml);
- `--allowed ID`: the rules of that item of allowed behaviour (harness/allowed.toml);
- `--proxy-rule 'Name(key=value, ...)'` (repeatable): any rule of harness/proxy/rules/,
  harness/proxy/allowed_rules.py or harness/proxy/record_faults.py, without a catalogue entry.

They add up: every rule named is in force for the whole session. Node control stays the target's own.
The terminal summary ends with each rule and how often it acted (`proxy rule: ...` lines), the
evidence that what was staged happened."""

from __future__ import annotations

import pytest

from harness.cluster.base import Cluster
from harness.errors import KctsError
from harness.proxy.cluster import ProxiedCluster
from harness.proxy.rules import Rule

RULES_KEY = pytest.StashKey[list[Rule]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcts")
    group.addoption(
        "--replay", default=None, metavar="ID",
        help="run against the target seen through the protocol proxy with the rules of replay ID "
             "(harness/replays.toml); node control stays the target's own",
    )
    group.addoption(
        "--allowed", default=None, metavar="ID",
        help="run against the target seen through the protocol proxy with the rules of item ID of allowed "
             "behaviour (harness/allowed.toml); node control stays the target's own",
    )
    group.addoption(
        "--proxy-rule", action="append", default=[], metavar="'Name(key=value, ...)'",
        help="put one rule of harness/proxy/rules/, allowed_rules.py or record_faults.py in front of the target, "
             "e.g. 'ReplaceErrors(api=\"TxnOffsetCommit\", versions=(6, 6), count=None, error=35)' "
             "(values: Python literals or TOML; repeatable)",
    )


def _named_rules(config: pytest.Config) -> tuple[list[Rule], list[str]]:
    """The rules the options name, and what each option staged (for the report's environment)."""
    rules: list[Rule] = []
    labels: list[str] = []
    replay_id = config.getoption("replay", default=None)
    if replay_id:
        from harness.proxy.replays import load as load_replays

        replays = load_replays()
        if replay_id not in replays:
            raise pytest.UsageError(f"--replay {replay_id}: no such replay in harness/replays.toml; known: "
                                    f"{', '.join(replays)}")
        replay = replays[replay_id]
        rules += replay.make_rules()
        labels.append(f"{replay.id} ({replay.link})")
    allowed_id = config.getoption("allowed", default=None)
    if allowed_id:
        from harness.proxy.allowed import load as load_allowed

        catalogue = load_allowed()
        if allowed_id not in catalogue:
            raise pytest.UsageError(f"--allowed {allowed_id}: no such item in harness/allowed.toml; known: "
                                    f"{', '.join(catalogue)}")
        item = catalogue[allowed_id]
        if not item.staged:
            raise pytest.UsageError(f"--allowed {allowed_id}: not staged: {item.how}")
        rules += item.make_rules()
        labels.append(f"allowed {item.id} ({item.source})")
    texts = config.getoption("proxy_rule", default=None) or []
    if texts:
        from harness.proxy.rule_specs import parse_rule

        try:
            specs = [parse_rule(t) for t in texts]
        except KctsError as exc:
            raise pytest.UsageError(str(exc)) from None
        rules += [s.make() for s in specs]
        labels.append("--proxy-rule " + "; ".join(s.describe() for s in specs))
    return rules, labels


def behind_replay(config: pytest.Config, cluster: Cluster) -> Cluster:
    """`cluster`, or with `--replay`, `--allowed` or `--proxy-rule` (only where this plugin is loaded),
    the same cluster through the proxy with the rules they name; not started either way."""
    rules, labels = _named_rules(config)
    if not labels:
        return cluster
    stash = getattr(config, "stash", None)
    if stash is not None:
        stash[RULES_KEY] = rules
    return ProxiedCluster(cluster, rules, "; ".join(labels))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    rules = config.stash.get(RULES_KEY, None)
    if not rules:
        return
    terminalreporter.write_sep("-", "kcts: the proxy rules in force")
    for rule in rules:
        terminalreporter.write_line(f"proxy rule: {rule.describe()}")
