"""The observations every history is made of, one frozen dataclass per kind.

- `ObservedExchange`: one request and its answer on the wire, decoded (from the raw client or the proxy).
- `ClientEvent`: one line a client driver printed (harness.process.events: a name and its fields).
- `TimelineEvent`: one line of a scene's own timeline (harness.process.events.EventLog: when, who, what).
- `Write` and `Read`: one record a client wrote (acknowledged or not) and one it read back.
- `OffsetCommit` and `FetchedOffset`: an offset a group was asked to commit, and what OffsetFetch
  returned for it afterwards.

The epoch lineage of a partition (appends by epoch, each broker's view, an unclean election) is
harness.histories.epochs.

A history of a situation (harness/histories/<kip>.py) is a frozen dataclass of these; the codec
(harness.histories.json_codec) writes and reads all of them the same way.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

# A decoded Kafka message body: its shape is the message's JSON spec (harness/protocol/specs), one
# per API and version, not a Python type; the histories keep it as decoded, fields by their spec names.
Body = dict[str, Any]


@dataclass(frozen=True)
class ObservedExchange:
    """One request and its answer. `response` None: none came. `broker`: who answered (host:port)
    when known; `role`: what it was to the request (e.g. "group coordinator"). From the proxy also
    `outcome` (answered, dropped, ...) and the `rules` it applied to the exchange."""

    api: str
    version: int
    request: Body
    response: Body | None
    broker: str | None = None
    role: str | None = None
    outcome: str | None = None
    rules: tuple[str, ...] = ()

    def codes(self) -> list[int]:
        """Every ErrorCode the answer carries, at any depth, in order."""
        return _codes(self.response)


def _codes(body: object) -> list[int]:
    if isinstance(body, dict):
        found: list[int] = []
        for k, v in body.items():
            found.extend([v] if k == "ErrorCode" else _codes(v))
        return found
    if isinstance(body, list):
        return [c for item in body for c in _codes(item)]
    return []


# A value a driver printed: JSON, as the one line format carries it.
EventValue = None | bool | int | float | str | list[Any] | dict[str, Any]


@dataclass(frozen=True)
class ClientEvent:
    """One event a client driver printed: its name (`event`) and its fields (`detail`), e.g.
    transaction_committed {records, copied, offsets}, done {outcome}, transaction_failed {error}."""

    event: str
    detail: dict[str, EventValue] = field(default_factory=dict)

    @classmethod
    def of(cls, line: dict[str, Any]) -> ClientEvent:
        """The event of one driver line (`{"event": name, ...fields}`)."""
        return cls(str(line["event"]), {k: v for k, v in line.items() if k != "event"})

    def get(self, name: str, default: EventValue = None) -> EventValue:
        return self.detail.get(name, default)

    def __str__(self) -> str:
        return f"{self.event} {self.detail}" if self.detail else self.event


@dataclass(frozen=True)
class TimelineEvent:
    """One line of a scene's timeline (harness.process.events.EventLog): `t` seconds after the log
    began, `who` (nemesis, observer, scenario, generator, a processor instance), `what` happened, and
    its other fields (`detail`: a fault's broker and topic, each broker's view, a child's counts)."""

    t: float
    who: str
    what: str
    detail: dict[str, EventValue] = field(default_factory=dict)

    @classmethod
    def of(cls, line: Mapping[str, object]) -> TimelineEvent:
        """The event of one EventLog line (`{"t": ..., "who": ..., "what": ..., **detail}`)."""
        detail = {k: cast(EventValue, v) for k, v in line.items() if k not in ("t", "who", "what")}
        return cls(float(str(line["t"])), str(line["who"]), str(line["what"]), detail)

    def flat(self) -> dict[str, EventValue]:
        """The line as the EventLog holds it: what recordings and integrity reports keep, so that typing
        the event changed neither."""
        return {"t": self.t, "who": self.who, "what": self.what, **self.detail}


@dataclass(frozen=True)
class Write:
    """One record a client produced: where it landed (offset None: not acknowledged) and its value."""

    topic: str
    partition: int
    value: bytes
    offset: int | None = None
    leader_epoch: int | None = None


@dataclass(frozen=True)
class Read:
    """One record a client consumed, with the leader epoch its batch carried (None: not exposed)."""

    topic: str
    partition: int
    offset: int
    value: bytes
    leader_epoch: int | None = None


@dataclass(frozen=True)
class OffsetCommit:
    """An offset a group was asked to commit; `leader_epoch` None: any (the client gave none);
    `topic` None: a TopicId made up, that names no topic."""

    topic: str | None
    topic_id: uuid.UUID
    partition: int
    offset: int
    leader_epoch: int | None


@dataclass(frozen=True)
class FetchedOffset(OffsetCommit):
    """What OffsetFetch returned for one partition of the group: offset -1 when none is committed."""

    error: int
