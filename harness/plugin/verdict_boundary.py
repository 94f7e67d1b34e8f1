"""The one boundary where refusals raised below pytest (a scenario, the nemesis, a fixture) end a
check with their verdict, and where what a check's body raised is kept, so that a failed assertion
is told (a FAIL) from anything else (an ERROR; harness.verdicts.classify)."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from harness import verdicts
from harness.cluster.target import TargetSpec
from harness.errors import FaultControlUnavailable, KctsError, VerdictError
from harness.plugin.target import target_spec


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    except (VerdictError, FaultControlUnavailable) as exc:
        verdicts.from_exception(exc, _target(item))
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    except (VerdictError, FaultControlUnavailable) as exc:
        verdicts.from_exception(exc, _target(item))
        raise


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Remember the type of what the check's body raised (harness.reports.results reads it)."""
    from harness.reports.results import RAISED_KEY

    try:
        return (yield)
    except BaseException as exc:
        pyfuncitem.stash[RAISED_KEY] = type(exc)
        raise


def _target(item: pytest.Item) -> TargetSpec | None:
    """The run's target, against whose reference profile a NotSupported is read (None: none parsed)."""
    try:
        return target_spec(item.config)
    except (KctsError, pytest.UsageError):
        return None
