"""A commit read back through librdkafka is asked again, as an application does, while it raises one of
the group's coordinator errors (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
NOT_COORDINATOR: retriable in the protocol guide's Error Codes, though confluent-kafka's KafkaError built
from the code alone says retriable() False): by the KIP-320 consumers driver's `commit` command
(harness.clients.drivers.kip320_consumers.called_again) and by the KIP-1094 zombie leader's scene
(harness.scenarios.kip1094._committed). The errors replaced are kept; one that persists through the
bound, or any other, is raised. No broker: stand-in consumers answer from a script."""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from harness.clients.drivers import kip320_consumers as driver
from harness.errors import TargetRefused
from harness.scenarios import kip1094

NOT_COORDINATOR, NOT_AVAILABLE, UNKNOWN_MEMBER = (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_NOT_AVAILABLE,
                                                  KafkaError.UNKNOWN_MEMBER_ID)


class Scripted:
    """Raises the next code of `codes` (0: answers (offset 50, epoch 2)) on each committed() or commit()."""

    def __init__(self, codes: list[int]) -> None:
        self.codes, self.asked = codes, 0

    def committed(self, partitions: list[TopicPartition], timeout: float) -> list[TopicPartition]:
        code = self.codes[min(self.asked, len(self.codes) - 1)]
        self.asked += 1
        if code:
            raise KafkaException(KafkaError(code))
        (tp,) = partitions
        return [TopicPartition(tp.topic, tp.partition, 50, leader_epoch=2)]

    def commit(self, asynchronous: bool) -> None:
        self.committed([TopicPartition("t", 0)], 10)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "RETRY_BACKOFF_S", 0)
    monkeypatch.setattr(kip1094, "attach", type("NoAllure", (), {"text": staticmethod(lambda *a: None)}))


def test_the_driver_asks_again_after_coordinator_errors() -> None:
    consumer = Scripted([NOT_COORDINATOR, NOT_AVAILABLE, 0])
    (got,), retried = driver.called_again(lambda: consumer.committed([TopicPartition("t", 0)], 10))
    assert (got.offset, got.leader_epoch, consumer.asked) == (50, 2, 3)
    assert [r.split(":")[0] for r in retried] == ["NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE"]


def test_the_driver_raises_any_other_error_at_once() -> None:
    consumer = Scripted([UNKNOWN_MEMBER, 0])
    with pytest.raises(KafkaException):
        driver.called_again(lambda: consumer.commit(asynchronous=False))
    assert consumer.asked == 1


def test_the_driver_raises_a_coordinator_error_that_persists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "RETRY_S", 0)
    consumer = Scripted([NOT_COORDINATOR])
    with pytest.raises(KafkaException):
        driver.called_again(lambda: consumer.commit(asynchronous=False))


def test_the_commit_command_reports_the_errors_it_replaced(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    consumers = driver.ConfluentConsumers("b:9092", "t", 0, {})
    consumers.polling["c"] = Scripted([0, NOT_COORDINATOR, 0])  # type: ignore[assignment]
    consumers.run(["commit", "c"])
    event: dict[str, Any] = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (event["event"], event["offset"], event["epoch"]) == ("committed", 50, 2)
    assert [r.split(":")[0] for r in event["retried"]] == ["NOT_COORDINATOR"]


def test_the_zombie_scene_asks_committed_again() -> None:
    got, replaced = kip1094._committed(Scripted([NOT_COORDINATOR, 0]), "t")  # type: ignore[arg-type]
    assert got == kip1094.CommittedOffset(50, 2)
    assert len(replaced) == 1 and "NOT_COORDINATOR" in replaced[0]


def test_the_zombie_scene_ends_a_persisting_coordinator_error_as_the_target_s_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kip1094, "COMMITTED_RETRY_S", 0.0)
    with pytest.raises(TargetRefused, match=r"kept answering committed\(\) with a retriable error"):
        kip1094._committed(Scripted([NOT_AVAILABLE, NOT_AVAILABLE, NOT_AVAILABLE]), "t")  # type: ignore[arg-type]


def test_the_zombie_scene_raises_any_other_error() -> None:
    with pytest.raises(KafkaException):
        kip1094._committed(Scripted([UNKNOWN_MEMBER]), "t")  # type: ignore[arg-type]
