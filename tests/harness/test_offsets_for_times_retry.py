"""The librdkafka KIP-320 consumers driver (harness.clients.drivers.kip320_consumers) asks
offsets_for_times again, as an application does, while librdkafka hands it NOT_LEADER_FOR_PARTITION or
LEADER_NOT_AVAILABLE (raised, or on the partition): the protocol guide's Error Codes call both
retriable, though confluent-kafka's KafkaError built from the code alone says retriable() False. The
errors replaced are in the answer (`retried`); one that persists through RETRY_S is the answer; any
other error is the answer at once. No broker: a stand-in consumer answers from a script."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from harness.clients.drivers import kip320_consumers as driver

NOT_LEADER, NOT_AVAILABLE, FENCED = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
                                     KafkaError.FENCED_LEADER_EPOCH)


class ScriptedConsumer:
    """offsets_for_times answers with the next step: ("raise", code), ("partition", code) or ("found", offset)."""

    def __init__(self, steps: list[tuple[str, int]]) -> None:
        self.steps, self.asked, self.closed = steps, 0, False

    def offsets_for_times(self, partitions: list[TopicPartition], timeout: float) -> list[Any]:
        kind, value = self.steps[min(self.asked, len(self.steps) - 1)]
        self.asked += 1
        if kind == "raise":
            raise KafkaException(KafkaError(value))
        if kind == "partition":  # TopicPartition's error is read-only: the fields the driver reads
            return [SimpleNamespace(offset=-1, leader_epoch=None, error=KafkaError(value))]
        (tp,) = partitions
        return [TopicPartition(tp.topic, tp.partition, value, leader_epoch=1)]

    def close(self) -> None:
        self.closed = True


def lookup(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           steps: list[tuple[str, int]]) -> tuple[ScriptedConsumer, dict[str, Any]]:
    consumer = ScriptedConsumer(steps)
    consumers = driver.ConfluentConsumers("b:1", "t", 0, {})
    monkeypatch.setattr(consumers, "consumer", lambda *a, **k: consumer)
    monkeypatch.setattr(driver, "RETRY_BACKOFF_S", 0.0)
    consumers.offset_for_time("lookup", 1000)
    (line,) = capsys.readouterr().out.splitlines()
    return consumer, json.loads(line)


@pytest.mark.parametrize("kind", ["raise", "partition"])
@pytest.mark.parametrize("code", [NOT_LEADER, NOT_AVAILABLE])
def test_a_leader_moving_error_is_asked_again(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                              kind: str, code: int) -> None:
    consumer, event = lookup(monkeypatch, capsys, [(kind, code), ("found", 25)])
    assert (event["offset"], event["epoch"], event["error"]) == (25, 1, None)
    assert len(event["retried"]) == 1 and consumer.asked == 2 and consumer.closed


def test_another_error_is_the_answer_at_once(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    consumer, event = lookup(monkeypatch, capsys, [("partition", FENCED), ("found", 25)])
    assert event["offset"] == -1 and event["error"] and event["retried"] == [] and consumer.asked == 1


def test_a_persisting_error_is_the_answer_with_those_it_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "RETRY_S", 0.05)
    monkeypatch.setattr(driver, "RETRY_BACKOFF_S", 0.01)
    consumer = ScriptedConsumer([("raise", NOT_LEADER)])
    consumers = driver.ConfluentConsumers("b:1", "t", 0, {})
    monkeypatch.setattr(consumers, "consumer", lambda *a, **k: consumer)
    with pytest.raises(KafkaException, match="still after asking again") as raised:
        consumers.offset_for_time("lookup", 1000)
    assert raised.value.args[0].code() == NOT_LEADER and consumer.asked >= 2 and consumer.closed
