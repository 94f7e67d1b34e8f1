"""`--shard I/N`: this pytest process runs part I of N of what it collected (harness/reporting/
pytest_shards.py starts the N processes and joins their run folders into one).

Every part collects the same items and cuts them alike into units: a module, or the modules that use
one released session fixture (a cluster ended after its last user, harness.plugin.last_user), which
stay in one part because split, each part would start that cluster of its own. Units are weighed by the
module times in `--shard-weights`, the longest first (harness.reporting.shards.units).

- Dealt (the default): each unit to the lightest part so far (harness.reporting.shards.deal); a part
  knows its share before it runs anything.
- Pulled (`--shard-pool DIR`): a part takes the next unit no part has taken when it is ready for one,
  through a file created in DIR (O_EXCL, so one part wins each unit). Parts then end within about one
  unit of each other whatever share of the cores each gets, which a deal by earlier times cannot know
  (the gate runs the harness's tests in the idle class, on what the conformance run leaves).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.plugin import last_user


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcts", "Kafka conformance target")
    group.addoption("--shard", default=None, metavar="I/N",
                    help="run part I (from 0) of N of the collected tests, dealt by module")
    group.addoption("--shard-weights", default=None, metavar="JSON",
                    help="each module's time in seconds, by which --shard deals the modules (default: equal)")
    group.addoption("--shard-pool", default=None, metavar="DIR",
                    help="with --shard: take the modules from a pool the N parts share in DIR, the next one "
                         "no part has taken whenever this part is ready for one, instead of a share dealt "
                         "before the run")


def part(spec: str) -> tuple[int, int]:
    """`I/N` as (I, N), with 0 <= I < N."""
    m = re.fullmatch(r"(\d+)/(\d+)", spec)
    if not m or not int(m[1]) < int(m[2]):
        raise pytest.UsageError(f"--shard {spec}: give I/N with 0 <= I < N, such as 0/2")
    return int(m[1]), int(m[2])


@dataclass
class Pool:
    """The units every part collected, in the order the parts take them; a unit is taken by creating
    its file in `folder`."""

    folder: Path
    units: list[list[pytest.Item]]

    def take(self, index: int) -> bool:
        try:
            os.close(os.open(self.folder / f"unit-{index}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def taken(self, left: list[pytest.Item]) -> Iterator[pytest.Item]:
        """The items of each unit this part takes, one unit taken only when the one before is all
        handed out; the items of the units it does not take go to `left`."""
        for index, unit in enumerate(self.units):
            if self.take(index):
                yield from unit
            else:
                left.extend(unit)


_POOL = pytest.StashKey[Pool]()


@pytest.hookimpl(trylast=True)  # after every other deselection: each part cuts the same final items
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.option.shard is None:
        return
    from harness.reporting.shards import deal, units

    index, n = part(config.option.shard)
    weights_file = config.option.shard_weights
    weights = {k: float(v) for k, v in json.loads(Path(weights_file).read_text()).items()} if weights_file else {}
    modules = list(dict.fromkeys(_module(item) for item in items))
    together = _together(config, items)
    if config.option.shard_pool:
        by_module: dict[str, list[pytest.Item]] = {}
        for item in items:
            by_module.setdefault(_module(item), []).append(item)
        pool = [[item for m in unit.modules for item in by_module[m]] for unit in units(modules, weights, together)]
        folder = Path(config.option.shard_pool)
        folder.mkdir(parents=True, exist_ok=True)
        config.stash[_POOL] = Pool(folder, pool)
        items[:] = [item for unit in pool for item in unit]  # the order the last users are found in
        return
    mine = next((set(s.modules) for s in deal(modules, weights, n, together) if s.index == index), set())
    keep, drop = [], []
    for item in items:
        (keep if _module(item) in mine else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """pytest's own loop over the items, over those of the units this part takes from the pool."""
    pool = session.config.stash.get(_POOL, None)
    if pool is None or session.config.option.collectonly:
        return None
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} error{'s' if session.testsfailed != 1 else ''} "
                                  "during collection")
    left: list[pytest.Item] = []
    taken = pool.taken(left)
    # An item's teardown needs the next item (what of its scope to keep), so the next unit is taken as
    # the last item of one starts.
    item = next(taken, None)
    while item is not None:
        nextitem = next(taken, None)
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)
        item = nextitem
    if left:
        session.config.hook.pytest_deselected(items=left)
    return True


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
