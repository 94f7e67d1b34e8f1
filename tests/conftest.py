"""The harness's own tests: the modules that use the session's Apache Kafka cluster run one after
another, and the cluster ends after the last of them (harness.plugin.last_user), not when the last
of 2,600 tests ends: held idle through the unit tests that follow, it cost more CPU than all of them."""

from __future__ import annotations

import os

import pytest

from harness import session
from harness.kafka.dist import cache_root
from harness.plugin import last_user


def pytest_configure(config: pytest.Config) -> None:
    # pytester gives each inner run a HOME of its own, and with it an empty ~/.cache/kcts: each run
    # that prepared a target resolved Kafka's jars again (Maven, 54 MB, about 4 CPU-s). The cache is
    # named here, for this process and every one it starts; a test that needs an empty one sets its own.
    os.environ.setdefault("KCTS_CACHE", str(cache_root()))
    # A run these tests start as a user would (`kcts run`, `pytest --collect-only suites`) writes its
    # folder where the user's own runs are, and points reports/latest at it: 3 empty folders a gate,
    # and `latest` no longer the user's last run. Such runs write under this session instead, removed
    # with it; this process's own folder was named before this hook (harness.plugin.options).
    os.environ["KCTS_REPORTS"] = str(session.current().scratch("reports"))
    last_user.release_after_last_user(config, "cluster")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the modules that use the session cluster to where the first of them is, in their order."""
    modules = {item.nodeid.split("::")[0] for item in items if last_user.uses(item, "cluster")}
    users = [item for item in items if item.nodeid.split("::")[0] in modules]
    if not users:
        return
    first = items.index(users[0])
    rest = [item for item in items if item.nodeid.split("::")[0] not in modules]
    items[:] = [*rest[:first], *users, *rest[first:]]
