"""The one boundary where refusals raised below pytest (a scenario, the nemesis, a fixture) end a
check with their verdict, and where what a check's body raised is kept, so that a failed assertion
is told (a FAIL) from anything else (an ERROR; harness.verdicts.classify).

The target's failures end as verdicts wherever they surface, never as the harness's ERROR:
- a promise the target did not keep while a fixture built the scene (`PromiseUnkept`) fails every
  check that needed the scene, in its call phase, as that promise's FAIL;
- a connection the target closed on a version it advertised (`AdvertisedVersionNotServed`, found in
  the chain of whatever was raised) is the FAIL of ApiVersions' promise in a check's body, and the
  target's refusal of the premise in a fixture's scene.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

import pytest

from harness import layout, verdicts
from harness.cluster.target import TargetSpec
from harness.errors import FaultControlUnavailable, KctsError, PromiseUnkept, VerdictError
from harness.plugin.target import target_spec
from harness.protocol.exceptions import AdvertisedVersionNotServed
from harness.waiting import PremiseTimeout

UNKEPT_IN_SETUP = pytest.StashKey[PromiseUnkept]()
HARNESS_TESTS = layout.ROOT / "tests"  # the harness's own tests: a wait there that timed out is their failure
E = TypeVar("E", bound=BaseException)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    except (VerdictError, FaultControlUnavailable) as exc:
        if not (isinstance(exc, PremiseTimeout) and _harness_test(item)):
            verdicts.from_exception(exc, _target(item))
        raise
    except Exception as exc:
        unkept = _found(exc, PromiseUnkept)
        if unkept is not None:
            # pytest can only call a failed setup an error; the FAIL is raised in the call phase instead.
            item.stash[UNKEPT_IN_SETUP] = unkept
            return None
        closed = _found(exc, AdvertisedVersionNotServed)
        if closed is not None:
            verdicts.target_refused(f"{closed} (a broken promise of ApiVersions, "
                                    f"{AdvertisedVersionNotServed.PROMISE}, while the scene was built)")
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    unkept = item.stash.get(UNKEPT_IN_SETUP, None)
    if unkept is not None:
        _raised(item, PromiseUnkept)
        raise PromiseUnkept(f"while its scene was built: {unkept}") from unkept
    try:
        return (yield)
    except (VerdictError, FaultControlUnavailable) as exc:
        if not (isinstance(exc, PremiseTimeout) and _harness_test(item)):
            verdicts.from_exception(exc, _target(item))
        raise
    except Exception as exc:
        closed = _found(exc, AdvertisedVersionNotServed)
        if closed is None or isinstance(exc, AssertionError):
            raise
        _raised(item, PromiseUnkept)
        raise PromiseUnkept(str(closed), AdvertisedVersionNotServed.PROMISE) from exc


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Remember the type of what the check's body raised (harness.reporting.results reads it)."""
    try:
        return (yield)
    except BaseException as exc:
        _raised(pyfuncitem, type(exc))
        raise


def _raised(item: pytest.Item, kind: type[BaseException]) -> None:
    from harness.reporting.results import RAISED_KEY

    item.stash[RAISED_KEY] = kind


def _found(exc: BaseException, kind: type[E]) -> E | None:
    """`exc` or the first exception of its cause/context chain that is a `kind`."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _harness_test(item: pytest.Item) -> bool:
    return item.path.is_relative_to(HARNESS_TESTS)


def _target(item: pytest.Item) -> TargetSpec | None:
    """The run's target, against whose reference profile a NotSupported is read (None: none parsed)."""
    try:
        return target_spec(item.config)
    except (KctsError, pytest.UsageError):
        return None
