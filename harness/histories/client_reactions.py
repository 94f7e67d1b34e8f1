"""The histories of clients meeting epochs through the protocol proxy, one shape per client situation.

- `EpochErrorRun`: a consumer (or producer) whose first Fetches (Produces) were answered with an epoch
  error (harness.scenarios.client_reactions).
- `ResetFetch`: a consumer resetting by its policy, its ListOffsets answers and its Fetches.
- `CommittedAhead`: a group member starting from a commit whose epoch its metadata has not reached.
- `FetchEpochRun`: a consumer reading through a leader move, every Metadata answer it got and every
  Fetch it sent (harness.scenarios.client_fetch_epochs).
- `ResetAheadRun`: a consumer resetting while its Metadata is held behind the epoch ListOffsets
  returns (harness.scenarios.client_fetch_epochs).

Made of: `ClientRecord` (a record written or read), `ProxiedRequest` (one exchange as the premise
guards read it), `harness.histories.observations.ClientEvent` (what the client reported), and
`ClientRelease` (the client that ran, with the first release of its stack that fences Fetch:
harness.clients.kip320_releases).
Recordings (tests/checks/data/kip320-client-*, -committed-ahead-*, -reset-*, -fetch-epochs-*) load
into them through the codec.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.observations import ClientEvent
from harness.protocol.sentinels import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

CONNECT = "connect"  # the `api` of a ProxiedRequest that stands for a client connection the proxy could not make


@dataclass(frozen=True)
class ClientRecord:
    """A record a client wrote (acknowledged) or read: offset, value as text, and the leader epoch of
    its batch where the client exposed it (None: not recorded)."""

    offset: int
    value: str
    epoch: int | None = None


@dataclass(frozen=True)
class ProxiedRequest:
    """One exchange through the proxy, as the premise guards read it: API, version and outcome
    (answered, connection-lost, ...); api `CONNECT`, version -1: a client connection the proxy
    could not take to a broker, `outcome` saying why."""

    api: str
    version: int
    outcome: str


NEVER = "never"  # a FirstRelease's release where no release of the client keeps the promise


@dataclass(frozen=True)
class FirstRelease:
    """The first release of a client stack that keeps a promise: `product` names what the release
    numbers count (librdkafka, kafka-clients, franz-go), `evidence` where that is shown upstream."""

    product: str
    release: str
    evidence: str

    def includes(self, release: str) -> bool:
        """Whether `release` (of the same product) is this release or a later one; none is where no
        release keeps the promise (`release` NEVER)."""
        from packaging.version import Version

        return self.release != NEVER and Version(release) >= Version(self.release)


@dataclass(frozen=True)
class ClientRelease:
    """The client that ran: its stack, what its driver named (e.g. "confluent-kafka 2.6.1 (librdkafka
    2.6.1)"), its release number in `fences_fetch.product`'s numbering (None: unknown), and the first
    release of its stack that sends CurrentLeaderEpoch in Fetch (KIP-320)."""

    stack: str
    named: str | None
    release: str | None
    fences_fetch: FirstRelease

    def fences(self) -> bool | None:
        """Whether this release is one that fences Fetch (None: its release is unknown or unreadable)."""
        from packaging.version import InvalidVersion

        try:
            return None if self.release is None else self.fences_fetch.includes(self.release)
        except InvalidVersion:
            return None


METADATA, LEADER_HINT = "Metadata", "Fetch CurrentLeader"  # where a consumer learns a leader epoch


@dataclass(frozen=True)
class EpochLearned:
    """A leader and leader epoch of the partition a client was told, as it got them (after the
    proxy's rules): when the proxy passed the answer on (seconds from the run's start), its source
    (`METADATA`; or `LEADER_HINT`, the KIP-951 CurrentLeader of a Fetch answer, v12+), the answer's
    version, the leader and epoch (-1: none), and the partition's error by name."""

    at: float
    source: str
    version: int
    leader: int
    epoch: int
    error: str = "NONE"


@dataclass(frozen=True)
class EpochErrorRun:
    """A client whose first `refused` Fetch (Produce) answers carried `error`: what it was written,
    read back and reported, the APIs it sent from the first refused answer on (the first 20; a
    Metadata request is its refresh), the CurrentLeaderEpoch of each refused partition entry, and
    every exchange it had through the proxy (a client that never reached the target shows how far).

    `learned`: every Metadata answer naming the partition that the client got (the epoch it could
    fence with: KIP-320 "Consumer Handling", "The consumer will obtain the current leader epoch
    using the Metadata API"); `first_refused_at`: when its first refused request reached the proxy
    (None: none was refused); both in seconds from the run's start."""

    client: str
    error: str
    written: tuple[ClientRecord, ...]
    reads: tuple[ClientRecord, ...]
    errors: tuple[ClientEvent, ...]
    refused: int
    after: tuple[str, ...]
    incomplete: str | None = None
    sent_epochs: tuple[int, ...] = ()
    version: str | None = None  # the client and version its driver named
    exchanges: tuple[ProxiedRequest, ...] = ()
    release: ClientRelease | None = None
    learned: tuple[EpochLearned, ...] = ()
    first_refused_at: float | None = None


@dataclass(frozen=True)
class ListOffsetsAnswer:
    """A ListOffsets answer for the partition: the request's version and CurrentLeaderEpoch, the
    offset and epoch answered, its error by name, how many Fetches of the partition came before it,
    and the timestamp asked (-2 earliest, -1 latest; None in histories recorded before it was kept)."""

    version: int
    current: int
    offset: int
    epoch: int
    error: str
    fetches_before: int
    timestamp: int | None = None

    def resets_to(self, reset: str) -> bool:
        """Whether this is the lookup a reset to `reset` makes (a client may ask others beside it:
        sarama asks LATEST and EARLIEST, then starts at the one its policy names)."""
        wanted = {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP}.get(reset)
        return self.timestamp is None or wanted is None or self.timestamp == wanted


@dataclass(frozen=True)
class FetchAsk:
    """One Fetch partition entry: the request's version, FetchOffset and CurrentLeaderEpoch (-1: none)."""

    version: int
    offset: int
    current: int


@dataclass(frozen=True)
class ResetFetch:
    """A consumer of a fresh group resetting `topic`-0 by its policy, through the proxy: its ListOffsets
    answers for the partition, then its Fetches of it, in the order sent, and the partition's epoch."""

    client: str
    reset: str
    epoch: int
    list_offsets: tuple[ListOffsetsAnswer, ...]
    fetches: tuple[FetchAsk, ...]
    errors: tuple[ClientEvent, ...]
    incomplete: str | None = None
    sent: tuple[str, ...] = ()  # every exchange through the proxy: "JoinGroup v9: NONE", in order
    version: str | None = None  # the client and version its driver named


@dataclass(frozen=True)
class Committed:
    """An offset a group committed, with its leader epoch."""

    offset: int
    epoch: int


@dataclass(frozen=True)
class Validation:
    """An OffsetsForLeaderEpoch partition the client sent: its CurrentLeaderEpoch, the LeaderEpoch it
    asked about, and the answer (error by name and end offset; "" where not recorded)."""

    current: int
    leader_epoch: int
    answer: str = ""


@dataclass(frozen=True)
class CommittedAhead:
    """A group member starting from a commit whose epoch its first metadata has not reached yet.

    `stale` the Metadata answers shown behind; `validations` the OffsetsForLeaderEpoch it sent;
    `written` the records from the committed offset on; `learned` every Metadata answer naming the
    partition that it got (the stale ones first, then the broker's own)."""

    client: str
    committed: Committed
    stale: int
    validations: tuple[Validation, ...]
    written: tuple[ClientRecord, ...]
    reads: tuple[ClientRecord, ...]
    errors: tuple[ClientEvent, ...]
    incomplete: str | None = None
    metadata_versions: tuple[int, ...] = ()  # of every Metadata request the client sent
    version: str | None = None  # the client and version its driver named
    exchanges: tuple[ProxiedRequest, ...] = ()
    learned: tuple[EpochLearned, ...] = ()


@dataclass(frozen=True)
class FetchSent:
    """A Fetch partition entry the consumer sent: when it reached the proxy (seconds from the run's
    start), the broker it went to, its version, FetchOffset and CurrentLeaderEpoch (-1: none), and the
    partition's answer by name (None: no answer recorded)."""

    at: float
    broker: str
    version: int
    offset: int
    current: int
    answer: str | None = None


@dataclass(frozen=True)
class LeaderMove:
    """The partition's leader and epoch before and after the harness moved it, and when the move was
    seen done (seconds from the run's start)."""

    leader_before: int
    epoch_before: int
    leader_after: int
    epoch_after: int
    at: float


@dataclass(frozen=True)
class FetchEpochRun:
    """A consumer reading `topic`-0 through the proxy while the harness moves the partition's leader:
    every leader epoch of the partition it was told (Metadata answers, KIP-951 leader hints), every
    Fetch entry of the partition it sent, what was written and what it read and reported."""

    client: str
    move: LeaderMove | None  # None: the harness's move did not happen
    learned: tuple[EpochLearned, ...]
    fetches: tuple[FetchSent, ...]
    written: tuple[ClientRecord, ...]
    reads: tuple[ClientRecord, ...]
    errors: tuple[ClientEvent, ...]
    incomplete: str | None = None
    exchanges: tuple[ProxiedRequest, ...] = ()
    release: ClientRelease | None = None


@dataclass(frozen=True)
class Validated:
    """An OffsetsForLeaderEpoch partition the consumer sent: when (seconds from the run's start), its
    CurrentLeaderEpoch and the LeaderEpoch it asked about."""

    at: float
    current: int
    leader_epoch: int


@dataclass(frozen=True)
class ResetAheadRun:
    """A consumer of a fresh group resetting `topic`-0 by `reset` while the proxy holds every Metadata
    answer for the partition one epoch behind (`held` answers edited) until `released` (seconds from
    the run's start; None: never), ListOffsets answering honestly.

    `epoch` the partition's leader epoch after the harness's leader move (every record was written
    at it); `list_offsets` its ListOffsets answers; `learned`, `fetches` and `validations` the epochs
    it was told and what it sent for the partition; `written` every record of the partition (the last ones after the
    reset, for a consumer reset to the end); `reads` and `errors` what it read and reported."""

    client: str
    reset: str
    epoch: int
    held: int
    released: float | None
    list_offsets: tuple[ListOffsetsAnswer, ...]
    learned: tuple[EpochLearned, ...]
    fetches: tuple[FetchSent, ...]
    validations: tuple[Validated, ...]
    written: tuple[ClientRecord, ...]
    reads: tuple[ClientRecord, ...]
    errors: tuple[ClientEvent, ...]
    list_offsets_at: tuple[float, ...] = ()  # when each ListOffsets answer was passed on, in order
    incomplete: str | None = None
    exchanges: tuple[ProxiedRequest, ...] = ()
    release: ClientRelease | None = None
