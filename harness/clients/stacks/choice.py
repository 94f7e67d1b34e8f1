"""Which client stacks a run judges, and at which release.

librdkafka and the Java clients are judged by default. `--go-client` adds franz-go; `--client-stack
S[@VERSION]` makes a client-only run of stack S (one column of `kcts matrix`'s client axis), at
VERSION where the stack has version choice (`--librdkafka` is librdkafka's).
"""

from __future__ import annotations

from dataclasses import dataclass

import confluent_kafka

LIBRDKAFKA, JAVA, GO = "librdkafka", "java", "franz-go"
DEFAULT = (LIBRDKAFKA, JAVA)
PINNED_CONFLUENT_KAFKA: str = confluent_kafka.__version__


@dataclass(frozen=True)
class ClientChoice:
    """Which client versions a run uses, and which stacks it judges."""

    librdkafka: str = PINNED_CONFLUENT_KAFKA  # the confluent-kafka release of the librdkafka drivers
    go: bool = False  # judge franz-go too
    only: str | None = None  # a client-only run: the one stack judged
    version: str | None = None  # the release of `only` asked for (None: the stack's pinned one)

    @classmethod
    def parse(cls, librdkafka: str | None, go: bool, client_stack: str | None) -> ClientChoice:
        """From the options: `client_stack` is "S" or "S@VERSION"."""
        only, _, version = (client_stack or "").partition("@")
        return cls(librdkafka or PINNED_CONFLUENT_KAFKA, go, only or None, version or None)

    def judged(self) -> tuple[str, ...]:
        if self.only:
            return (self.only,)
        return (*DEFAULT, GO) if self.go else DEFAULT

    def label(self) -> str:
        parts = [f"librdkafka via confluent-kafka {self.librdkafka}"] + (["franz-go"] if GO in self.judged() else [])
        only = f"{self.only}@{self.version}" if self.version else self.only
        return ", ".join(parts) + (f"; only {only}" if only else "")


_choice = ClientChoice()


def choose(choice: ClientChoice) -> None:
    """The run's choice (harness.clients.stacks.registry.configure checks it first)."""
    global _choice
    _choice = choice


def current() -> ClientChoice:
    return _choice
