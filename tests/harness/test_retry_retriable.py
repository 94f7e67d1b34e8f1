"""`produce_read.retry_retriable`: a client call whose error is retriable is made again within its bound,
and at least once again past it (a first call that outlived the bound on a starved machine)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from harness.clients.produce_read import retry_retriable


class Scripted:
    """A client call that raises each error given, then returns "done"."""

    def __init__(self, *errors: int) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0), retriable=True))
        return "done"


def test_a_retriable_error_past_the_bound_is_asked_again_once() -> None:
    op = Scripted(KafkaError._TIMED_OUT)
    assert retry_retriable(op, timeout=0) == "done"
    assert op.calls == 2


def test_a_retriable_error_that_persists_past_the_bound_is_raised_after_the_one_more_call() -> None:
    op = Scripted(KafkaError._TIMED_OUT, KafkaError._TIMED_OUT, KafkaError._TIMED_OUT)
    with pytest.raises(KafkaException):
        retry_retriable(op, timeout=0)
    assert op.calls == 2


def test_an_error_that_is_not_retriable_is_raised_at_once() -> None:
    def op() -> str:
        raise KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))

    with pytest.raises(KafkaException):
        retry_retriable(op, timeout=30)
