"""The one wait helper: poll a condition until a deadline, fail with the last state seen."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from harness.errors import Unrecoverable

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """A condition did not hold before its deadline; the message shows what was observed."""


def wait_until(
    condition: Callable[[], T],
    timeout: float,
    describe: Callable[[], str],
    interval: float = 0.1,
) -> T:
    """Return the first truthy value of `condition()` before `timeout` seconds.

    Exceptions raised by `condition` count as "not yet" but are kept: the last one is
    shown with `describe()` when the deadline passes, so no evidence is lost. An `Unrecoverable`
    one (a process that exited) ends the wait at once.
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Unrecoverable:
            raise
        except Exception as exc:  # noqa: BLE001 - kept as evidence, re-raised at the deadline
            last_error = exc
        if time.monotonic() >= deadline:
            try:
                state = describe()
            except Exception as exc:  # noqa: BLE001
                state = f"<describe() failed: {exc!r}>"
            detail = f"; last error: {last_error!r}" if last_error else ""
            raise WaitTimeout(f"timed out after {timeout:.1f}s waiting; last state: {state}{detail}") from last_error
        time.sleep(interval)
