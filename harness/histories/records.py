"""Records as a client was told of them or a replica served them, values read as text.

- `LogRecord`: one record of a partition's log, at its offset (a replica's log read back, or what a
  consumer was served).
- `Ack`: a write a producer was told landed (`offset` None or -1: landed where it did not say).
- `DeliveryReport`: every delivery report of a producer, failed ones too (`error` None: acknowledged).

Scenarios that compare what was written with what a log holds (network splits, unclean elections
watched by consumers, idempotent producers through failovers) pass these; the values are the scenes' own
tags, so text is what the checks compare. A record a consumer read, with the epoch it reported, is
harness.histories.client_reactions.ClientRecord; these carry no epoch, and their recordings have no such key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


def _field(item: object, name: str) -> object:
    return item[name] if isinstance(item, Mapping) else getattr(item, name)


@dataclass(frozen=True)
class LogRecord:
    offset: int
    value: str

    @classmethod
    def coerce(cls, item: object) -> LogRecord:
        """`item` as a LogRecord: the KIP-359 failover scene reads its log into mappings of these
        fields until it is typed."""
        return cls(_field(item, "offset"), _field(item, "value"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Ack:
    value: str
    offset: int | None

    @classmethod
    def coerce(cls, item: object) -> Ack:
        """`item` as an Ack: the KIP-359 failover scene reports its acks as mappings until it is typed."""
        return cls(_field(item, "value"), _field(item, "offset"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class DeliveryReport:
    value: str
    offset: int | None
    error: str | None

