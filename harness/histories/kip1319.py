"""The histories of the KIP-1319 situations: what a TxnOffsetCommit left, on the broker and in a client.

The scenarios (harness.scenarios.kip1319, kip1319_clients) return these; the checks
(harness.checks.kip1319) judge them; recordings (tests/checks/data/kip1319-*.json) load into them
through the codec.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from harness.histories.observations import ClientEvent, FetchedOffset, ObservedExchange, OffsetCommit


@dataclass(frozen=True)
class Advertised:
    """The version range one broker advertises for an API in ApiVersions (None: not at all)."""

    broker: str
    api: str
    versions: tuple[int, int] | None

    def supports(self, version: int) -> bool:
        return self.versions is not None and self.versions[0] <= version <= self.versions[1]

    def describe(self) -> str:
        found = self.versions
        return f"{self.broker} advertises {self.api} v{found[0]}-{found[1]}" if found else (
            f"{self.broker} does not advertise {self.api}")


@dataclass(frozen=True)
class SupportedFeature:
    """A feature the broker's software supports (ApiVersions SupportedFeatures)."""

    name: str
    min_version: int
    max_version: int


@dataclass(frozen=True)
class FinalizedFeature:
    """A feature level the cluster finalized (ApiVersions FinalizedFeatures)."""

    name: str
    min_level: int
    max_level: int


@dataclass(frozen=True)
class Features:
    """The features one broker lists in ApiVersions: what its software supports, what is finalized."""

    broker: str
    supported: tuple[SupportedFeature, ...]
    finalized: tuple[FinalizedFeature, ...]

    def max_supported(self, name: str) -> int | None:
        return next((f.max_version for f in self.supported if f.name == name), None)

    def describe(self) -> str:
        return f"{self.broker} supports features {sorted(f.name for f in self.supported)}"


@dataclass(frozen=True)
class TopicFact:
    """A topic a request names, as the scenario made it: its name (None: a TopicId made up), whether
    it exists, whether the requesting user may read it, and how many partitions it has."""

    name: str | None
    topic_id: uuid.UUID
    partitions: int
    exists: bool = True
    authorized: bool = True


@dataclass(frozen=True)
class TxnCommit:
    """One TxnOffsetCommit in a transaction, the topics it names, and what was read back.

    `asked`: the offsets the commit carries, one per partition. `retried`: the answers it replaced.
    `fetched`: OffsetFetch after the
    transaction ended (empty when not read back). `context`: what else explains the answer (the ACLs
    of an authorization check)."""

    group: str
    topics: tuple[TopicFact, ...]
    exchange: ObservedExchange
    committed: bool  # EndTxn(commit) rather than abort
    asked: tuple[OffsetCommit, ...] = ()
    fetched: tuple[FetchedOffset, ...] = ()
    context: str = ""
    # Earlier answers to the same commit with a partition error a client retries (KIP-1319's
    # UNKNOWN_TOPIC_ID for a topic that exists), each replaced by sending it again: `exchange` is the last.
    retried: tuple[ObservedExchange, ...] = ()


@dataclass(frozen=True)
class GroupErrorAnswers:
    """The same commit (group, member, generation or member epoch, one partition) at v6 by TopicId
    and at v5 by name, each in a transaction of its own that is aborted; `older` the same at v3 and
    v4 where the coordinator speaks them (the first versions with group membership), keyed "v3", "v4"."""

    group: str
    member_id: str
    generation_or_epoch: int
    v6: ObservedExchange
    v5: ObservedExchange
    older: dict[str, ObservedExchange] = field(default_factory=dict)

    def all(self) -> list[tuple[str, ObservedExchange]]:
        """Every exchange by its version's name, v6 first."""
        return [("v6", self.v6), ("v5", self.v5), *sorted(self.older.items())]


@dataclass(frozen=True)
class StaleEpochAnswers:
    """A consumer-protocol group member's commits with its previous epoch (`stale`) and its current
    one (`current`), each at v6 and v5; `heartbeats` are the exchanges that moved its epoch."""

    group: str
    member_id: str
    member_epoch: int
    heartbeats: tuple[ObservedExchange, ...]
    stale: GroupErrorAnswers
    current: GroupErrorAnswers


@dataclass(frozen=True)
class OffsetCommitValue:
    """An OffsetCommitValue record of __consumer_offsets, decoded with the coordinator's schema;
    `topic_id` None: the schema version has no such field."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    topic_id: uuid.UUID | None = None


@dataclass(frozen=True)
class PersistedOffset:
    """The latest OffsetCommit record of one partition: where it sits in __consumer_offsets, its
    value's schema version, and its value (None: a tombstone)."""

    partition: int
    offset_record: int
    value_version: int | None
    value: OffsetCommitValue | None


@dataclass(frozen=True)
class PersistedCommit:
    """A committed TxnOffsetCommit and the OffsetCommitValue records it left in `__consumer_offsets`.
    `unreadable`: why nothing could be read (a target that keeps group state elsewhere), else None."""

    commit: TxnCommit
    topic: str
    topic_id: uuid.UUID
    persisted: tuple[PersistedOffset, ...]
    unreadable: str | None = None


@dataclass(frozen=True)
class Injected:
    """The proxy's fault in a client run: the rule, the error code it writes (None: it writes none,
    e.g. a capped version), how often it acted and how often it was meant to (`limit`, None: on
    every matching exchange), and the one topic it answers (`topic_id`, None: every topic)."""

    rule: str
    error: int | None
    fired: int
    limit: int | None = None
    topic_id: uuid.UUID | None = None


@dataclass(frozen=True)
class ClientRun:
    """One client run through the proxy and what it left.

    `commits`: every TxnOffsetCommit exchange, in order. `copier`: the driver is a consume-transform-
    produce loop that ends "copied" and redoes an aborted transaction, not one transaction that ends
    "committed" or "aborted". `asked`: the offsets the client was asked to
    commit (leader epoch None: any). `fetched`: OffsetFetch of the group afterwards. `written`: what
    the run's transactions write to the output partition; `visible`: what a read_committed consumer
    sees there. `events`: the driver's events; `exit_code` its exit. `proxy` and `driver` describe
    both for a failure message."""

    client: str
    broker: Advertised  # what the broker advertises for TxnOffsetCommit
    group: str
    exit_code: int | None
    copier: bool  # a consume-transform-produce loop (it redoes an aborted transaction), not one transaction
    events: tuple[ClientEvent, ...]
    commits: tuple[ObservedExchange, ...]
    injected: Injected | None
    asked: tuple[OffsetCommit, ...]
    fetched: tuple[FetchedOffset, ...]
    written: tuple[bytes, ...]
    visible: tuple[bytes, ...]
    api_versions: tuple[tuple[str, int], ...]  # every (API, version) the client used
    proxy: str  # the proxy's rules, errors and recorded summary
    driver: str  # the driver's exit, last events and output tail
    # The read-back's last answer where the group's offsets never settled (a transaction on them the
    # target kept open): `fetched` is then empty, and this is the evidence.
    unsettled: str = ""

    def named(self, *events: str) -> list[ClientEvent]:
        """The driver's events of these names, in order."""
        return [e for e in self.events if e.event in events]

    @property
    def completed(self) -> str:
        """The outcome the driver reports when it did all it was asked."""
        return "copied" if self.copier else "committed"

    def outcome(self) -> str | None:
        """What the driver's last `done` event reported (committed, aborted, copied), None without one."""
        done = self.named("done")
        outcome = done[-1].get("outcome") if done else None
        return None if outcome is None else str(outcome)


@dataclass(frozen=True)
class UnknownNameAnswers:
    """TxnOffsetCommit at each version from the coordinator's lowest to v5, keyed "v0".."v5", each
    naming partition 0 of `missing` (never created) and of `known`."""

    group: str
    missing: str
    known: str
    exchanges: dict[str, ObservedExchange] = field(default_factory=dict)


@dataclass(frozen=True)
class ClassicGenerationAnswers:
    """A classic group member's commits with its previous generation (`stale`) and its current one
    (`current`), each at v6 and v5 (and v3, v4); `joins` are the exchanges that made the generations."""

    group: str
    member_id: str
    generation: int
    joins: tuple[ObservedExchange, ...]
    stale: GroupErrorAnswers
    current: GroupErrorAnswers
