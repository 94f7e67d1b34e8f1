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

from dataclasses import dataclass


@dataclass(frozen=True)
class LogRecord:
    offset: int
    value: str


@dataclass(frozen=True)
class Ack:
    value: str
    offset: int | None


@dataclass(frozen=True)
class DeliveryReport:
    value: str
    offset: int | None
    error: str | None

