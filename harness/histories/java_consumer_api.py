"""The histories of the KIP-320 "Public Interfaces" checks of the Java consumer (the API the KIP defines is
Java's: LogTruncationException, seek(TopicPartition, OffsetAndMetadata), OffsetAndMetadata's constructors).

harness.scenarios.java_consumer_api drives harness/clients/java/Kip320ConsumerApi.java through the
protocol proxy on a partition written in two leader epochs; harness.checks.java_consumer_api judges.

- `SeekTruncation`: a consumer positioned by seek(tp, OffsetAndMetadata) past the end the leader
  gives the epoch it names, so that validation finds a truncation: what it raised, read and logged.
- `SeekWindow`: every request a consumer sent through the proxy around one seek(tp, OffsetAndMetadata)
  call, made while nothing polled it.
- `OldConstructorCommits`: commits built by each OffsetAndMetadata constructor, and what the
  OffsetCommit requests carried.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.client_reactions import ClientRecord
from harness.histories.kip320_clients import PartitionAsk
from harness.histories.truncation import Divergence

OUT_OF_RANGE = "org.apache.kafka.clients.consumer.OffsetOutOfRangeException"
LOG_TRUNCATION = "org.apache.kafka.clients.consumer.LogTruncationException"


@dataclass(frozen=True)
class TwoEpochLog:
    """`topic`-0: `written` records, those from `moved_at` on after one leader move from `epoch_before`
    to `epoch_after`."""

    topic: str
    epoch_before: int
    epoch_after: int
    moved_at: int
    written: tuple[ClientRecord, ...]


@dataclass(frozen=True)
class RaisedError:
    """An exception poll() threw, as the driver saw it: its class, message, the handler that caught it
    (`caught_as`: "OffsetOutOfRangeException" or "Exception"), whether it is an instance of
    OffsetOutOfRangeException (`out_of_range`), every class it is an instance of (`types`, from its own
    up to Throwable) and, for a LogTruncationException, its divergent offsets."""

    exception: str
    message: str
    caught_as: str
    out_of_range: bool
    types: tuple[str, ...]
    divergent: tuple[Divergence, ...] = ()


@dataclass(frozen=True)
class SeekTruncation:
    """A consumer with auto.offset.reset `reset` (none: no policy) positioned by seek(tp,
    OffsetAndMetadata(`sought`, `sought_epoch`)) past the offset where the leader says `sought_epoch`
    ended, then polled: its OffsetsForLeaderEpoch and Fetch requests about the partition (`asks`, with
    the answers), what it read and raised, and every line its client logger wrote (INFO and up of
    org.apache.kafka.clients.consumer, WARN and up of the rest)."""

    client: str
    reset: str
    log: TwoEpochLog
    sought: int
    sought_epoch: int
    asks: tuple[PartitionAsk, ...]
    reads: tuple[ClientRecord, ...]
    errors: tuple[RaisedError, ...]
    log_lines: tuple[str, ...]
    refused: tuple[str, ...] = ()  # commands the driver could not do: "command: exception: message"
    incomplete: str | None = None


@dataclass(frozen=True)
class SentAt:
    """One request the consumer sent through the proxy: when it reached the proxy (seconds from the
    scene's start), its API and version."""

    at: float
    api: str
    version: int


@dataclass(frozen=True)
class SeekWindow:
    """A consumer that read the partition, then was left alone (no poll) until it had sent nothing for
    `quiet` seconds; at `window[0]` the harness sent it the seek command, whose answer (seek returned,
    after `seek_nanos` in the call) came at `answered`; the window closed at `window[1]`, `settle`
    seconds later. Then it was polled again. `sent`: every request of the consumer through the proxy."""

    client: str
    log: TwoEpochLog
    sought: int
    sought_epoch: int
    quiet: float
    window: tuple[float, float]
    answered: float
    seek_nanos: int
    sent: tuple[SentAt, ...]
    refused: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommitMade:
    """One commitSync({tp: OffsetAndMetadata}) with the object `mode` built ("offset": new
    OffsetAndMetadata(offset); "metadata": new OffsetAndMetadata(offset, metadata); "epoch:E" the
    KIP-320 constructor with Optional.of(E)); `built_epoch` its leaderEpoch() (-1: empty); what
    committed() read back; and (version, CommittedLeaderEpoch) of each OffsetCommit partition entry
    for that offset on the wire (-1 where the version has no such field)."""

    mode: str
    offset: int
    built_epoch: int
    read_offset: int
    read_epoch: int
    sent: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class OldConstructorCommits:
    """A group member that read the partition to its end (the last record at `consumed_epoch`), then
    committed with each constructor, in order."""

    client: str
    log: TwoEpochLog
    consumed_epoch: int
    reads: tuple[ClientRecord, ...]
    commits: tuple[CommitMade, ...]
    refused: tuple[str, ...] = ()
