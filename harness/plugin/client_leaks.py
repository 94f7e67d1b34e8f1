"""A check that leaves a confluent-kafka client open fails, naming where it was made (clients are
closed where they are made: harness.confluent)."""

from __future__ import annotations

import gc
from collections.abc import Generator

import pytest

from harness import confluent

OPEN_CLIENTS_KEY = pytest.StashKey[frozenset[int]]()
CLIENT_ACTIVITY_KEY = pytest.StashKey[int]()


# A wrapper, so that the clients open before the check's own fixtures are set up are known.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    item.stash[OPEN_CLIENTS_KEY] = confluent.open_keys()
    item.stash[CLIENT_ACTIVITY_KEY] = confluent.activity()
    return (yield)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """Fail a check that leaves a client open once its fixtures are torn down. Clients of
    wider-scoped fixtures still in use are not the check's. Then collect the test's cyclic garbage
    here, on the main thread, as a safety net: a client in that garbage, collected later on one of
    librdkafka's threads, is destroyed there and takes the process with it
    (confluent-kafka-python #1761, #2129). Only a test (or a fixture torn down with it) that made
    or closed a client can leave one in its garbage: the others skip a full collection, which
    costs a tenth of a second on this process's heap."""
    try:
        result = yield
    finally:
        if confluent.activity() != item.stash.get(CLIENT_ACTIVITY_KEY, -1):
            gc.collect()
    left = confluent.left_open(item.stash.get(OPEN_CLIENTS_KEY, frozenset()))
    if left:
        raise AssertionError(f"the check left {len(left)} client(s) open: " + "; ".join(map(str, left)))
    return result
