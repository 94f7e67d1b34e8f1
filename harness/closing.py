"""Closing what a block used on the way out, without the close's failure standing for the block's.

A `finally: close()` whose close raises replaces the exception the block was raising: a scene's
WaitTimeout or TargetRefused would leave as "the generator did not stop", its verdict lost. Here the
block's exception is what leaves, and the close's failure becomes a note of it (PEP 678); after a
clean block the close's own exception leaves as it is, so a close raises the type its trouble calls
for (harness.errors.WorkerHung where one of the harness's processes would not stop: an ERROR).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


def close_after(raised: BaseException | None, close: Callable[[], object], what: str,
                noted: tuple[type[BaseException], ...] = (Exception,)) -> None:
    """Call `close()` on the way out of a block that raised `raised` (None: it ended cleanly). A
    failure of the close (of a type in `noted`) after a block that raised becomes a note of the block's
    exception, and the caller re-raises that; after a clean block it is raised."""
    if raised is None:
        close()
        return
    try:
        close()
    except noted as closing:
        raised.add_note(f"closing {what} then raised too: {closing}")


@contextmanager
def closed_on_exit(close: Callable[[], object], what: str,
                   noted: tuple[type[BaseException], ...] = (Exception,)) -> Iterator[None]:
    """Run the block, then `close()` (named `what` in a note) however it ended: see `close_after`."""
    try:
        yield
    except BaseException as exc:
        close_after(exc, close, what, noted)
        raise
    close_after(None, close, what, noted)


def close_all(*closes: tuple[str, Callable[[], object]]) -> None:
    """Call every `(what, close)` in turn, each even where one before it failed; the first failure is
    raised, with each later one a note of it."""
    raised: BaseException | None = None
    for what, close in closes:
        try:
            close_after(raised, close, what)
        except BaseException as exc:  # noqa: BLE001 - the first failure, raised after every close ran
            raised = exc
    if raised is not None:
        raise raised
