"""`--shard I/N`: this pytest process runs part I of N of what it collected (harness/reporting/
pytest_shards.py starts the N processes and joins their run folders into one).

Every part collects the same items and deals them alike, so the parts never overlap and miss nothing:
by module, the longest first, each to the lightest part (harness.reporting.shards.deal), weighted by
the module times in `--shard-weights`. The modules that use one released session fixture (a cluster
ended after its last user, harness.plugin.last_user) go to one part together: split, each part would
start that cluster of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.plugin import last_user


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcts", "Kafka conformance target")
    group.addoption("--shard", default=None, metavar="I/N",
                    help="run part I (from 0) of N of the collected tests, dealt by module")
    group.addoption("--shard-weights", default=None, metavar="JSON",
                    help="each module's time in seconds, by which --shard deals the modules (default: equal)")


def part(spec: str) -> tuple[int, int]:
    """`I/N` as (I, N), with 0 <= I < N."""
    m = re.fullmatch(r"(\d+)/(\d+)", spec)
    if not m or not int(m[1]) < int(m[2]):
        raise pytest.UsageError(f"--shard {spec}: give I/N with 0 <= I < N, such as 0/2")
    return int(m[1]), int(m[2])


@pytest.hookimpl(trylast=True)  # after every other deselection: each part deals the same final items
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.option.shard is None:
        return
    from harness.reporting.shards import deal

    index, n = part(config.option.shard)
    weights_file = config.option.shard_weights
    weights = {k: float(v) for k, v in json.loads(Path(weights_file).read_text()).items()} if weights_file else {}
    modules = list(dict.fromkeys(_module(item) for item in items))
    mine = next((set(s.modules) for s in deal(modules, weights, n, _together(config, items)) if s.index == index),
                set())
    keep, drop = [], []
    for item in items:
        (keep if _module(item) in mine else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0]


def _together(config: pytest.Config, items: list[pytest.Item]) -> list[list[str]]:
    """The modules of each released session fixture's users, groups that share a module merged."""
    groups: list[set[str]] = []
    for name, aliases in last_user.released(config).items():
        group = {_module(item) for item in items if last_user.uses(item, name, aliases)}
        for other in [g for g in groups if g & group]:
            groups.remove(other)
            group |= other
        if group:
            groups.append(group)
    return [sorted(g) for g in groups]
