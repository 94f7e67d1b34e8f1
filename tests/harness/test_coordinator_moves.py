"""A transaction whose coordinator moves (its broker fenced under load, its partition's leader elsewhere)
follows it: the harness asks FindCoordinator again instead of asking the old broker until a timeout
turns the scene into an ERROR."""

from __future__ import annotations

from typing import Any

from harness.clients.transactions import Transaction, _following
from harness.protocol import errors


class Broker:
    """Answers every request with `error` and counts them."""

    def __init__(self, name: str, error: int) -> None:
        self.name, self.error, self.asked = name, error, 0

    def send(self, api: str, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self.asked += 1
        return {"ErrorCode": self.error, "at": self.name}

    def max_version(self, api: str) -> int:
        return 3


def test_an_answer_that_the_coordinator_moved_sends_the_next_attempt_to_the_new_one() -> None:
    old, new = Broker("old", errors.NOT_COORDINATOR), Broker("new", 0)
    answer, at = _following(lambda: new, old, lambda c: c.send("InitProducerId", 3, {}),  # type: ignore[arg-type]
                            {errors.NOT_COORDINATOR}, "InitProducerId")
    assert (answer, at, old.asked, new.asked) == ({"ErrorCode": 0, "at": "new"}, new, 1, 1)


def test_a_transaction_keeps_the_coordinator_that_answered() -> None:
    old, new = Broker("old", errors.COORDINATOR_NOT_AVAILABLE), Broker("new", 0)
    txn = Transaction("t", 1, 0, old, lambda: new)  # type: ignore[arg-type]
    txn.add_group("g")
    assert txn.coordinator is new and (old.asked, new.asked) == (1, 1)
