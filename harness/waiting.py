"""The one wait helper: poll a condition until a deadline, fail with the last state seen.

Every wait says whose the outcome is (`owed`), because a deadline passed means something different
for each: the harness's own step (a process it started, a client it drives) is its ERROR
(`WaitTimeout`); the target's part in a check's scene is "target refused the premise"
(`TargetRefused`); the outcome a promise owes is that promise's FAIL (`PromiseUnkept`).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from typing import TypeVar

from harness.errors import PromiseUnkept, TargetRefused, Unrecoverable

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """A condition of the harness's own did not hold before its deadline; the message shows what was
    observed. An ERROR (harness.verdicts.NOT_VERDICTS), never a FAIL."""


class PremiseTimeout(TargetRefused):
    """A PREMISE wait that timed out: the target's refusal of a check's scene. In the harness's own
    tests (tests/) it stays a failure of the test (harness.plugin.verdict_boundary), as WaitTimeout was."""


class Owed(enum.Enum):
    """Whose the awaited outcome is, which decides what a passed deadline means."""

    HARNESS = "harness"  # the harness's own step: WaitTimeout, an ERROR
    PREMISE = "premise"  # the target's part in a scene no promise is judged on: TargetRefused
    PROMISE = "promise"  # what a promise owes: PromiseUnkept, that promise's FAIL


def wait_until(
    condition: Callable[[], T],
    timeout: float,
    describe: Callable[[], str],
    interval: float = 0.1,
    *,
    owed: Owed = Owed.HARNESS,
    promise: str = "",
) -> T:
    """Return the first truthy value of `condition()` before `timeout` seconds.

    Exceptions raised by `condition` count as "not yet" but are kept: the last one is
    shown with `describe()` when the deadline passes, so no evidence is lost. An `Unrecoverable`
    one (a process that exited, a refusal) ends the wait at once.

    At the deadline it raises according to `owed` (see the module's doc); `promise` names the
    promise a `PROMISE` wait is for, in the FAIL's message.
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except (Unrecoverable, PromiseUnkept):
            raise
        except Exception as exc:  # noqa: BLE001 - kept as evidence, re-raised at the deadline
            last_error = exc
        if time.monotonic() >= deadline:
            try:
                state = describe()
            except Exception as exc:  # noqa: BLE001
                state = f"<describe() failed: {exc!r}>"
            detail = f"; last error: {last_error!r}" if last_error else ""
            if owed is Owed.PREMISE:
                raise PremiseTimeout(f"the target did not get there within {timeout:.1f}s; last state: "
                                    f"{state}{detail}") from last_error
            if owed is Owed.PROMISE:
                raise PromiseUnkept(f"the target did not keep it within {timeout:.1f}s; last state: "
                                    f"{state}{detail}", promise) from last_error
            raise WaitTimeout(f"timed out after {timeout:.1f}s waiting; last state: {state}{detail}") from last_error
        time.sleep(interval)


def asked_again(
    ask: Callable[[], T], again: Callable[[T], bool], timeout: float, backoff: float = 0.1,
) -> tuple[T, tuple[T, ...]]:
    """`ask()`, asked again while `again(answer)` holds, within `timeout`, with a client's `backoff`
    between: (the last answer, the earlier ones it replaced). Unlike `wait_until`, the bound passing is
    no timeout: the last answer is returned as it stands, for its caller to judge (a retriable error
    that persisted is then the answer). An answer to be asked again is asked again at least once,
    whatever the clock says: a harness starved of the cores past the bound in its first ask must not
    turn a retriable answer into the answer."""
    deadline = time.monotonic() + timeout
    replaced: list[T] = []
    while True:
        answer = ask()
        if not again(answer) or (replaced and time.monotonic() >= deadline):
            return answer, tuple(replaced)
        replaced.append(answer)
        time.sleep(backoff)  # a client's retry backoff, not a wait for a state
