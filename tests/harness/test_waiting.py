"""wait_until: returns the first truthy value, and times out with the state it last saw."""

import pytest

from harness.waiting import WaitTimeout, wait_until


def test_returns_first_truthy_value() -> None:
    values = iter([0, None, "", "ready"])
    assert wait_until(lambda: next(values), 5, lambda: "n/a", interval=0) == "ready"


def test_timeout_message_shows_described_state_and_last_error() -> None:
    def boom() -> bool:
        raise ConnectionError("refused")

    with pytest.raises(WaitTimeout, match=r"last state: isr=\[1\].*ConnectionError\('refused'\)"):
        wait_until(boom, 0.2, lambda: "isr=[1]", interval=0.05)


def test_unrecoverable_error_ends_the_wait_at_once() -> None:
    import time

    from harness.errors import NodeExited

    def exited() -> bool:
        raise NodeExited("broker-1 exited with code 1")

    t0 = time.monotonic()
    with pytest.raises(NodeExited):
        wait_until(exited, 30, lambda: "n/a")
    assert time.monotonic() - t0 < 1
