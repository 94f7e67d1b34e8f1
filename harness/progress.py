"""What a long check is doing, shown as it goes: records written, nemesis steps, the checker's stage.

Any floor of the harness reports through `status(text)` (the latest state, replaced by the next) and
`step(text)` (an event worth a line of its own: a fault injected, a leader elected). Nothing is shown
for a check that ends within `QUIET_S`: the gate's output stays the dots it is. Past that:

- on a terminal, one live line under pytest's own, rewritten in place, gone when the check ends;
- elsewhere (CI, a pipe, `CI=true`), plain lines: every step, and the status at most every `EVERY_S`.

The pytest plugin calls `begin` when a check starts and `end` before pytest reports its outcome (so
that the live line is gone before pytest writes its dot), with a stream that reaches the real
terminal even while pytest captures the check's output (a duplicate of stderr taken before capture).
Outside a check (a bench, a script) both calls do nothing.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TextIO

QUIET_S = 10.0
EVERY_S = 5.0


class Progress:
    """The running check's progress on one stream (see the module docstring)."""

    def __init__(self, stream: TextIO, name: str, live: bool, clock: Callable[[], float] = time.monotonic,
                 width: int = 120, column: Callable[[], int] = lambda: 0) -> None:
        self.stream = stream
        self.column = column  # where pytest's own line ends: the cursor goes back there
        self.name = name
        self.live = live
        self.clock = clock
        self.width = width
        self.started = clock()
        self._lock = threading.Lock()
        self._latest: str | None = None
        self._held: list[str] = []  # steps before QUIET_S, shown once the check turns out long
        self._shown = False  # anything written yet
        self._last_plain = float("-inf")
        self._line_open = False  # a live line is on the screen

    def status(self, text: str) -> None:
        with self._lock:
            self._latest = text
            self._emit(step=False)

    def step(self, text: str) -> None:
        with self._lock:
            self._held.append(text)
            self._emit(step=True)

    def tick(self) -> None:
        """Show what is held once the quiet time is over (called from a timer: a check that reports
        nothing more after 10 s still shows its last state)."""
        with self._lock:
            self._emit(step=False)

    def end(self) -> None:
        with self._lock:
            if self._line_open:
                # Clear the live line, then back up to where pytest's line ended, for its next word.
                col = self.column()
                self.stream.write("\r\x1b[2K\x1b[1A" + (f"\x1b[{col}C" if col else ""))
                self.stream.flush()
                self._line_open = False

    def _elapsed(self) -> float:
        return self.clock() - self.started

    def _emit(self, step: bool) -> None:
        elapsed = self._elapsed()
        if elapsed < QUIET_S:
            return
        prefix = f"  [{self.name} {elapsed:.0f} s]"
        if self.live:
            for held in self._held:
                self._live(f"{prefix} {held}")
            self._held.clear()
            if self._latest is not None:
                self._live(f"{prefix} {self._latest}")
            return
        for held in self._held:
            self._plain(f"{prefix} {held}")
        self._held.clear()
        due = elapsed - self._last_plain >= EVERY_S
        if self._latest is not None and (due or not self._shown) and not step:
            self._plain(f"{prefix} {self._latest}")
            self._last_plain = elapsed

    def _plain(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()
        self._shown = True

    def _live(self, line: str) -> None:
        line = line[: self.width - 1]
        if not self._line_open:
            self.stream.write("\n")  # a line of its own, under pytest's
            self._line_open = True
        self.stream.write(f"\r\x1b[2K{line}")
        self.stream.flush()
        self._shown = True


_current: Progress | None = None
_timer: threading.Timer | None = None


def begin(stream: TextIO, name: str, clock: Callable[[], float] = time.monotonic,
          column: Callable[[], int] = lambda: 0) -> Progress:
    """Start reporting for the check `name` on `stream`; a terminal gets the live line unless CI is set.
    `column` tells where the terminal's current line ends (pytest's terminal writer knows)."""
    global _current, _timer
    end()
    live = stream.isatty() and os.environ.get("CI", "").lower() not in ("1", "true", "yes")
    try:
        width = os.get_terminal_size(stream.fileno()).columns if live else 120
    except (OSError, ValueError, AttributeError):
        width = 120
    _current = Progress(stream, name, live, clock, width, column)
    _timer = threading.Timer(QUIET_S + 0.1, _current.tick)
    _timer.daemon = True
    _timer.start()
    return _current


def end() -> None:
    global _current, _timer
    if _timer is not None:
        _timer.cancel()
        _timer = None
    if _current is not None:
        _current.end()
        _current = None


def status(text: str) -> None:
    """The latest state of the running check (replaces the previous one)."""
    if _current is not None:
        _current.status(text)


def step(text: str) -> None:
    """An event of the running check, each shown once (a nemesis step, an election)."""
    if _current is not None:
        _current.step(text)
