"""Every client stack kcts can judge, in the order of the client axis. A new stack is a module of
this package and one line here."""

from __future__ import annotations

from harness.clients.stacks.aiokafka import Aiokafka
from harness.clients.stacks.base import ClientStack
from harness.clients.stacks.choice import ClientChoice, choose
from harness.clients.stacks.franz_go import FranzGo
from harness.clients.stacks.java import Java
from harness.clients.stacks.kafka_go import KafkaGo
from harness.clients.stacks.kafka_python import KafkaPython
from harness.clients.stacks.kafkajs import KafkaJS
from harness.clients.stacks.librdkafka import Librdkafka
from harness.clients.stacks.platformatic_kafka import PlatformaticKafka
from harness.clients.stacks.sarama import Sarama
from harness.errors import SetupError

_STACKS: tuple[ClientStack, ...] = (
    Librdkafka(), Java(), FranzGo(), KafkaPython(), KafkaJS(), PlatformaticKafka(), Sarama(), KafkaGo(), Aiokafka(),
)
BY_NAME: dict[str, ClientStack] = {s.name: s for s in _STACKS}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def get(name: str) -> ClientStack:
    try:
        return BY_NAME[name]
    except KeyError:
        raise SetupError(f"no client stack {name!r}: give one of {', '.join(NAMES)}") from None


def configure(choice: ClientChoice) -> None:
    """Check the run's choice against the stacks, then make it the run's."""
    if choice.only is not None:
        stack = get(choice.only)
        if choice.version is not None:
            stack.choose(choice.version)
    choose(choice)
