"""harness.confluent.delete_records: a DeleteRecords that times out under load is asked again; any
other answer is the target's and ends it at once."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from harness.confluent import delete_records

HEAD = TopicPartition("t", 0, 5)


class ScriptedAdmin:
    """Answers each DeleteRecords with the next of `answers`: None (done), or an exception."""

    def __init__(self, *answers: BaseException | None) -> None:
        self.answers = list(answers)
        self.asked = 0

    def delete_records(self, heads: list[TopicPartition], request_timeout: float) -> dict[TopicPartition, Future[None]]:
        self.asked += 1
        done: Future[None] = Future()
        answer = self.answers.pop(0)
        if answer is None:
            done.set_result(None)
        else:
            done.set_exception(answer)
        return {heads[0]: done}


def timed_out() -> KafkaException:
    return KafkaException(KafkaError(KafkaError._TIMED_OUT))


def test_a_timed_out_delete_is_asked_again_until_answered() -> None:
    admin = ScriptedAdmin(timed_out(), timed_out(), None)
    delete_records(admin, HEAD)  # type: ignore[arg-type]
    assert admin.asked == 3


def test_the_last_timeout_is_raised() -> None:
    admin = ScriptedAdmin(timed_out(), timed_out(), timed_out())
    with pytest.raises(KafkaException):
        delete_records(admin, HEAD)  # type: ignore[arg-type]
    assert admin.asked == 3


def test_an_error_of_the_target_is_not_asked_again() -> None:
    admin = ScriptedAdmin(KafkaException(KafkaError(KafkaError.POLICY_VIOLATION)), None)
    with pytest.raises(KafkaException):
        delete_records(admin, HEAD)  # type: ignore[arg-type]
    assert admin.asked == 1
