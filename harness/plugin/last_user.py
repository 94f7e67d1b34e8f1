"""Session clusters end after the last check that uses them, not when the session ends.

An idle Kafka cluster is not free, and what it costs depends on the machine (`kcts bench idle`, 60 and
30 s after ready). On one 2-core machine a controller and three 4.4.0 brokers took 0.52 of a core and a
controller and one broker 0.42, as much as starting them again after 25 and 17 s; on another, 0.10 and
0.06 (75 and 55 s). Where a held cluster waits longer than that, ending it after its last user costs less
than holding it to the end of the run, and it never costs a verdict.

A session fixture named in `RELEASED` (or added by `release_after_last_user`) is finished in the
teardown of the last collected item that uses it, with the session fixtures that depend on it, as
pytest finishes them at the session's end. An item after that which asks for it again through
`request.getfixturevalue` (which collection cannot see) gets a new one: later, never wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

# name -> the fixtures whose users use it too, through request.getfixturevalue: kip1319's
# `sasl_cluster` asks for the SASL side cluster only once the target advertises v6, so that a target
# without it starts none.
RELEASED: dict[str, tuple[str, ...]] = {"sasl_side_cluster": ("sasl_cluster",)}

_NAMES = pytest.StashKey[dict[str, tuple[str, ...]]]()
# nodeid of a last user -> the session fixtures to finish in its teardown
_LAST = pytest.StashKey[dict[str, list[pytest.FixtureDef[Any]]]]()


def release_after_last_user(config: pytest.Config, name: str, *aliases: str) -> None:
    """Finish the session fixture `name` after its last user in this run too (a conftest's
    pytest_configure)."""
    config.stash.setdefault(_NAMES, dict(RELEASED))[name] = aliases


def released(config: pytest.Config) -> dict[str, tuple[str, ...]]:
    """The session fixtures finished after their last user, each with its aliases."""
    return config.stash.setdefault(_NAMES, dict(RELEASED))


def uses(item: pytest.Item, name: str, aliases: tuple[str, ...] = ()) -> bool:
    """Whether `item` uses the session-scoped fixture `name`, or one of `aliases` that gets it."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    defs = info.name2fixturedefs.get(name)
    if defs and defs[-1].scope == "session":
        return True
    return any(alias in info.name2fixturedefs for alias in aliases)


def pytest_collection_finish(session: pytest.Session) -> None:
    """After every deselection and reordering: the last item of the run that uses each released fixture,
    and the definition of it that item sees (through an alias too)."""
    names = released(session.config)
    last_user = {name: item for item in session.items for name, aliases in names.items() if uses(item, name, aliases)}
    last: dict[str, list[pytest.FixtureDef[Any]]] = {}
    for name, item in last_user.items():
        defs = session._fixturemanager.getfixturedefs(name, item)
        if defs and defs[-1].scope == "session":
            last.setdefault(item.nodeid, []).append(defs[-1])
    session.config.stash[_LAST] = last


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    try:
        return (yield)
    finally:
        # The session's own end finishes what the run's last item used.
        if nextitem is not None:
            for fixturedef in item.config.stash.get(_LAST, {}).get(item.nodeid, ()):
                if fixturedef.cached_result is not None:
                    fixturedef.finish(item._request)  # type: ignore[attr-defined]
