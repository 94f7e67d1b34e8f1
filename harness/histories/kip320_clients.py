"""The histories of the KIP-320 consumer situations judged by what the consumer asked on the wire:
a position validated against an OffsetsForLeaderEpoch answer that finds no offset or carries a
retriable error, a position set without an epoch, and a lookup by time across a leader move.

The scenarios (harness.scenarios.client_validation, harness.scenarios.offsets_for_times) return
these; the checks (harness.checks.client_validation, harness.checks.offsets_for_times) judge them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.observations import ClientEvent, Read

FETCH, VALIDATION, LIST_OFFSETS = "Fetch", "OffsetForLeaderEpoch", "ListOffsets"


@dataclass(frozen=True)
class PartitionAsk:
    """One request a consumer sent about the partition through the protocol proxy, with the answer
    it got (after any proxy rule), in the order sent.

    `asked`: the FetchOffset of a Fetch, the LeaderEpoch of an OffsetForLeaderEpoch, the Timestamp of
    a ListOffsets. The answer: its error by name ("no answer" when none came), and its offset and
    epoch (OffsetForLeaderEpoch: EndOffset and LeaderEpoch; ListOffsets: Offset and LeaderEpoch;
    Fetch: HighWatermark and -1). `ruled`: a proxy rule edited the answer."""

    api: str
    version: int
    client_id: str
    asked: int
    current_epoch: int
    error: str
    offset: int = -1
    epoch: int = -1
    ruled: bool = False

    def __str__(self) -> str:
        what = {FETCH: "offset", VALIDATION: "epoch", LIST_OFFSETS: "timestamp"}.get(self.api, "asked")
        answer = self.error if self.error != "NONE" else f"offset {self.offset} epoch {self.epoch}"
        return (f"{self.api} v{self.version} {what} {self.asked} (current {self.current_epoch}) -> {answer}"
                + (" [ruled]" if self.ruled else ""))


@dataclass(frozen=True)
class ConsumerRun:
    """One consumer of a driver (its client.id is `name`): what it asked about the partition, read,
    reported (`errors`: error events), and what its driver could not do for it (`refused`:
    command_failed events; `lacks` among their fields when the client version has no such API)."""

    name: str
    asks: tuple[PartitionAsk, ...]
    reads: tuple[Read, ...]
    errors: tuple[ClientEvent, ...] = ()
    refused: tuple[ClientEvent, ...] = ()

    def of(self, api: str) -> list[PartitionAsk]:
        return [a for a in self.asks if a.api == api]

    def after_first_ruled(self, api: str) -> list[PartitionAsk]:
        """Its `api` asks sent after the first ask whose answer a proxy rule edited."""
        first = next((i for i, a in enumerate(self.asks) if a.ruled), None)
        return [] if first is None else [a for a in self.asks[first + 1:] if a.api == api]


@dataclass(frozen=True)
class WrittenPartition:
    """The partition the consumers read: `records` (offset, value) written and acknowledged, and its
    log start, log end and leader epoch as the leader answered them before any consumer ran."""

    topic: str
    records: tuple[tuple[int, str], ...]
    log_start: int
    log_end: int
    leader_epoch: int


@dataclass(frozen=True)
class UndefinedEpochRun:
    """A consumer with auto.offset.reset `reset` (`no_reset`: the stack's "no policy") positioned at
    (`sought`, `sought_epoch`) by seek with an epoch, every OffsetsForLeaderEpoch answer to it
    turned into UNDEFINED_EPOCH_OFFSET (leader epoch -1, end offset -1) by the proxy."""

    client: str
    reset: str
    no_reset: bool
    partition: WrittenPartition
    sought: int
    sought_epoch: int
    consumer: ConsumerRun
    exchanges: tuple[str, ...] = ()  # every exchange of the driver through the proxy, "api vN: outcome", in order
    incomplete: str | None = None  # why the watch ended before the consumer settled
    version: str | None = None  # the client and version its driver named


@dataclass(frozen=True)
class ValidationErrorRun:
    """A consumer with auto.offset.reset earliest positioned at (`sought`, `sought_epoch`) by seek with
    an epoch; the proxy answers the first `errored` OffsetsForLeaderEpoch requests through it with
    `error` (a retriable partition error, by name) and no offset (LeaderEpoch -1, EndOffset -1), and
    the later ones as the broker did."""

    client: str
    error: str
    errored: int
    partition: WrittenPartition
    sought: int
    sought_epoch: int
    consumer: ConsumerRun
    exchanges: tuple[str, ...] = ()
    incomplete: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class UnvalidatedSeekRun:
    """Two consumers of one driver, with no reset policy, at the same offset `sought`: `plain`
    positioned by seek without an epoch, `control` by seek with `sought_epoch`; every
    OffsetsForLeaderEpoch answer through the proxy says the epoch ended at `diverged_at` (below
    `sought`), so a consumer that validates moves there or reports it."""

    client: str
    partition: WrittenPartition
    sought: int
    sought_epoch: int
    diverged_at: int
    plain: ConsumerRun
    control: ConsumerRun
    exchanges: tuple[str, ...] = ()
    incomplete: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class TimeLookup:
    """What a client's lookup by time returned: the offset (-1: none found), the leader epoch it
    exposed with it (None: the API exposes none), the timestamp of the record found (None where the
    driver's API does not give it), and the error it reported."""

    offset: int
    epoch: int | None
    found_timestamp: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class OffsetsForTimesRun:
    """A partition written in two leader epochs (`epoch_before` up to the move, `epoch_after` from
    it), each record stamped with a CreateTime of the harness's choosing; the leader's log read raw
    afterwards (`log`, record batches as fetched); the client's lookup of `timestamp` (a record's
    timestamp in the later epoch) and the ListOffsets it sent for it through the proxy."""

    client: str
    topic: str
    epoch_before: int
    epoch_after: int
    moved_at: int  # the first offset written after the move
    log: bytes
    timestamp: int
    lookup: TimeLookup | None
    asks: tuple[PartitionAsk, ...] = ()
    refused: tuple[ClientEvent, ...] = ()
    version: str | None = None
