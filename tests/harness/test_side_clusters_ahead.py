"""Side clusters started ahead of their first user (fixtures/side_clusters.py): which item starts them,
and a cluster held by a thread of its own, which its user takes as started or as the error starting it
raised. The cluster here is a stand-in context manager: what is tested is the holding, not a broker."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from fixtures.side_clusters import LEAD_MODULES, _StartedAhead, lead_item


@dataclass
class Item:
    nodeid: str


ITEMS = [Item(f"suites/m{m}.py::test_{t}") for m in range(5) for t in range(2)]


def test_the_first_item_of_the_module_lead_modules_before_the_first_user_starts_it() -> None:
    first_user = ITEMS[7]  # m3's second test
    assert lead_item(ITEMS, first_user).nodeid == f"suites/m{3 - LEAD_MODULES}.py::test_0"  # type: ignore[arg-type]


def test_a_first_user_in_the_first_modules_starts_it_with_the_run() -> None:
    assert lead_item(ITEMS, ITEMS[1]).nodeid == "suites/m0.py::test_0"  # type: ignore[arg-type]


@pytest.fixture
def held() -> dict[str, Any]:
    """A stand-in side cluster's start (`seen["start"]`): records the thread that entered and the one that left it."""
    seen: dict[str, Any] = {"fail": None}

    @contextmanager
    def side_cluster(name: str) -> Iterator[str]:
        seen["entered"] = threading.get_ident()
        if seen["fail"]:
            raise seen["fail"]
        try:
            yield f"cluster {name}"
        finally:
            seen["left"] = threading.get_ident()

    seen["start"] = side_cluster
    return seen


def test_a_cluster_started_ahead_is_started_and_closed_on_one_thread_not_the_callers(held: dict[str, Any]) -> None:
    ahead = _StartedAhead(held["start"]("tv1"), "tv1")
    assert ahead.take() == "cluster tv1"
    ahead.close()
    # A child process dies with the thread that started it: start and close share one thread, which
    # lived until the close.
    assert held["entered"] == held["left"] != threading.get_ident()


def test_what_starting_it_raised_is_raised_to_its_user(held: dict[str, Any]) -> None:
    held["fail"] = RuntimeError("the broker did not start")
    ahead = _StartedAhead(held["start"]("tv1"), "tv1")
    with pytest.raises(RuntimeError, match="did not start"):
        ahead.take()
    ahead.close()
    assert "left" not in held
