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


def test_a_wait_on_the_targets_premise_ends_as_its_refusal() -> None:
    from harness.errors import TargetRefused
    from harness.waiting import Owed

    with pytest.raises(TargetRefused, match=r"did not get there within 0.1s; last state: leader -1"):
        wait_until(lambda: False, 0.1, lambda: "leader -1", interval=0.02, owed=Owed.PREMISE)


def test_a_wait_on_what_a_promise_owes_ends_as_its_fail() -> None:
    from harness.errors import PromiseUnkept
    from harness.verdicts import is_verdict
    from harness.waiting import Owed

    shows = r"(?s)last state: OffsetFetch: -1.*promise: kip1319.client.retries"
    with pytest.raises(PromiseUnkept, match=shows) as raised:
        wait_until(lambda: False, 0.1, lambda: "OffsetFetch: -1", interval=0.02, owed=Owed.PROMISE,
                   promise="kip1319.client.retries")
    assert is_verdict(raised.type), "a promise's wait that timed out is a FAIL, not an ERROR"
    assert not is_verdict(WaitTimeout), "the harness's own wait that timed out stays an ERROR"


def test_a_broken_promise_inside_a_wait_ends_it_at_once() -> None:
    import time

    from harness.errors import PromiseUnkept

    def inner() -> bool:
        raise PromiseUnkept("never committed")

    t0 = time.monotonic()
    with pytest.raises(PromiseUnkept):
        wait_until(inner, 30, lambda: "n/a")
    assert time.monotonic() - t0 < 1


def test_a_premise_wait_that_timed_out_in_a_harness_test_is_not_turned_into_a_verdict() -> None:
    """In tests/ (the harness's own tests) a PREMISE wait's timeout fails the test, as WaitTimeout did;
    in a conformance check it is the target's refusal."""
    from types import SimpleNamespace

    from harness import layout
    from harness.plugin.verdict_boundary import _harness_test

    assert _harness_test(SimpleNamespace(path=layout.ROOT / "tests" / "harness" / "test_x.py"))
    assert not _harness_test(SimpleNamespace(path=layout.ROOT / "suites" / "kip320" / "test_x.py"))


def test_asked_again_returns_the_first_answer_it_may_keep_and_those_it_replaced() -> None:
    from harness.waiting import asked_again

    answers = iter(["retriable", "retriable", "accepted"])
    assert asked_again(lambda: next(answers), lambda a: a == "retriable", 5, backoff=0) == (
        "accepted", ("retriable", "retriable"))


def test_asked_again_returns_a_persisting_answer_as_it_stands_at_the_bound() -> None:
    from harness.waiting import asked_again

    last, replaced = asked_again(lambda: "retriable", lambda a: a == "retriable", 0.05, backoff=0.01)
    assert last == "retriable" and replaced, "the bound passed: the last answer is the caller's to judge"


def test_asked_again_asks_again_at_least_once_even_past_its_bound() -> None:
    """A first ask that took longer than the bound (a starved harness) is still asked once more."""
    from harness.waiting import asked_again

    answers = iter(["retriable", "accepted"])
    assert asked_again(lambda: next(answers), lambda a: a == "retriable", 0, backoff=0) == ("accepted", ("retriable",))
