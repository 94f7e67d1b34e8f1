"""The histories of KIP-320 consumers whose log was truncated under them by unclean elections.

- `TruncatedConsumer`: one consumer after a forced unclean election (harness.scenarios.truncation;
  the network-split zombie scene watches the same consumers): what it read and reported, where the
  logs diverged, where it was, and what the new leader wrote from the divergence on.
- `RepeatedUncleanConsumer`: one consumer after two unclean elections in a row, the second back to
  a leader that never saw the epoch the consumer read (harness.scenarios.repeated_unclean).
- `GroupCommit` (or `CommitFailed`): what a group committed before the election, read back.

Made of: `ClientRecord` (a record the consumer read, with the epoch it exposed: harness.histories.
client_reactions), `LogRecord` (a record the new leader was acknowledged for), `ConsumerError` (an
error event of the KIP-320 consumers driver, with the `Divergence`s it names) and `Refusal` (a
command the driver could not do). Recordings (tests/checks/data/kip320-truncation-*,
kip320-repeated-unclean-*, partition-zombie-*) load into them through the codec, as the driver's
events were printed: fields a client does not report are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.histories.client_reactions import ClientRecord
from harness.histories.json_codec import OMITTED_AT_DEFAULT
from harness.histories.text_records import LogRecord


@dataclass(frozen=True)
class Divergence:
    """A truncation a client located: the partition and the offset and epoch it resets to (Java's
    LogTruncationException divergent offsets; kgo's ErrDataLoss ResetTo, with where it had consumed to)."""

    partition: int
    offset: int
    epoch: int
    consumed_to: int | None = field(default=None, metadata=OMITTED_AT_DEFAULT)
    consumed_to_epoch: int | None = field(default=None, metadata=OMITTED_AT_DEFAULT)


@dataclass(frozen=True)
class ConsumerError:
    """An error a consumer reported: librdkafka and franz-go name a `code` (_AUTO_OFFSET_RESET,
    ErrDataLoss, a broker error), Java the `exception` class; Java and franz-go list the truncations
    they located in `divergent`."""

    code: str | None = field(default=None, metadata=OMITTED_AT_DEFAULT)
    exception: str | None = field(default=None, metadata=OMITTED_AT_DEFAULT)
    message: str | None = field(default=None, metadata=OMITTED_AT_DEFAULT)
    divergent: tuple[Divergence, ...] = field(default=(), metadata=OMITTED_AT_DEFAULT)


@dataclass(frozen=True)
class Refusal:
    """A command the consumers driver could not do for a consumer; `lacks`: the client version has no
    API for it (an older confluent-kafka without leader epochs)."""

    command: str
    exception: str
    message: str
    lacks: bool | None = field(default=None, metadata=OMITTED_AT_DEFAULT)


@dataclass(frozen=True)
class ConsumerSeen:
    """What one watched consumer read and reported after the election, and what it could not be set up for."""

    reads: tuple[ClientRecord, ...] = ()
    errors: tuple[ConsumerError, ...] = ()
    refused: tuple[Refusal, ...] = ()


@dataclass(frozen=True)
class GroupCommit:
    """A group's commit before the election as read back: its offset and leader epoch (None: the client
    exposes none)."""

    offset: int
    epoch: int | None


@dataclass(frozen=True)
class CommitFailed:
    """A group's commit before the election that the client reported failed, with its message."""

    failed: str


@dataclass(frozen=True)
class TruncatedConsumer:
    """One consumer after an unclean election that truncated the log at `divergence` while it was at
    `position_before`; `new_leader_writes` what the new leader was acknowledged for from there;
    `client` the client and version its driver named (None: unknown)."""

    reads: tuple[ClientRecord, ...]
    errors: tuple[ConsumerError, ...]
    divergence: int
    position_before: int
    new_leader_writes: tuple[LogRecord, ...]
    client: str | None = None
    refused: tuple[Refusal, ...] = ()


@dataclass(frozen=True)
class RepeatedUncleanConsumer:
    """One consumer after two unclean elections in a row: it read epoch `epochs[1]` from `e1_start` up
    to `position_before`; the last leader never saw that epoch, and its epoch `epochs[2]` starts at
    `e2_start`, where `leader_writes` begin."""

    reads: tuple[ClientRecord, ...]
    errors: tuple[ConsumerError, ...]
    e1_start: int
    e2_start: int
    position_before: int
    epochs: tuple[int, int, int]
    leader_writes: tuple[LogRecord, ...]
