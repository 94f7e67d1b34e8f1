"""Faults and edits the proxy applies at runtime: objects that tests add, inspect and remove.

A rule names the API it acts on (by name, e.g. "TxnOffsetCommit"), optionally a version range,
and optionally how many times it may act (`count`; None is forever). `fired` says how often it
did, so a test can assert that an injected fault really happened. Rules that edit a response
work on the decoded body; the proxy only decodes a response when a rule (or the address
rewriter) asks for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from harness.protocol.spec import ApiSpec, SpecSet
from harness.protocol.types import ZERO_UUID
from harness.proxy.batches import batch_spans

FETCH = 1
LIST_OFFSETS = 2
METADATA = 3
OFFSET_FETCH = 9
API_VERSIONS = 18
OFFSET_FOR_LEADER_EPOCH = 23
FENCED_LEADER_EPOCH = 74
NO_EPOCH = -1
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
# Metadata responses carry TopicId from v10 on (KIP-516).
_METADATA_TOPIC_ID_FROM = 10


@dataclass(frozen=True)
class HeldRequest:
    """A request a rule holds back on its connection (`Rule.holds`): its frame without the size
    prefix, where its body starts, and its version and correlation id (how the proxy knows it again)."""

    version: int
    correlation_id: int
    body_start: int
    frame: bytes


@dataclass(frozen=True)
class RequestAction:
    """What a rule asks of the proxy when a request arrives."""

    delay: float = 0.0
    close: bool = False


@dataclass(eq=False)
class Rule:
    """Base: matching and the act budget. Subclasses override the hooks they need."""

    api: str | None = None
    versions: tuple[int, int] | None = None
    count: int | None = None
    fired: int = field(default=0, init=False)
    api_key: int | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def bind(self, specs: SpecSet) -> None:
        """Resolve the API name once, when the rule is added (unknown names fail at once)."""
        if self.api is not None:
            self.api_key = specs.api(self.api).key

    def matches(self, api_key: int, version: int) -> bool:
        if self.api is not None and self.api_key is None:
            raise RuntimeError(f"{type(self).__name__}({self.api}) is not bound; add it with Proxy.add")
        if self.api_key is not None and api_key != self.api_key:
            return False
        return self.versions is None or self.versions[0] <= version <= self.versions[1]

    def take(self) -> bool:
        """Use one act of the budget; False when the budget is spent."""
        with self._lock:
            if self.count is not None and self.fired >= self.count:
                return False
            self.fired += 1
            return True

    @property
    def spent(self) -> bool:
        return self.count is not None and self.fired >= self.count

    # Hooks; the proxy calls them only for matching exchanges (see `acts_on_response`).
    def on_request(self, api_key: int, version: int) -> RequestAction | None:
        return None

    def acts_on_response(self, api_key: int, version: int) -> bool:
        """Whether this rule needs the decoded response of (api_key, version)."""
        return False

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        """Edit the decoded body in place; True when something changed."""
        return False

    # A rule that answers according to what was asked (the epoch a request carried, the lookup it
    # made) sets this; the proxy then decodes the request too and calls `edit_answer`.
    needs_request: bool = field(default=False, init=False, repr=False)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        """`edit_response`, with the decoded request where `needs_request` (None where it was not kept)."""
        return self.edit_response(api, version, body)

    def acts_on_request(self, api_key: int, version: int) -> bool:
        """Whether this rule edits the request of (api_key, version) before the broker sees it."""
        return False

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        """Edit the decoded request in place (the broker sees the edit, the recording the original);
        True when something changed."""
        return False

    def response_delay(self, api_key: int, version: int) -> float:
        return 0.0

    # A rule that holds requests back, to send them on later or in another order, says so here; the
    # proxy then gives it every such request with those it holds on that connection (`release`), and
    # answers the client in the order it asked, whatever order the broker answered in.
    def holds(self, api_key: int, version: int) -> bool:
        return False

    def release(self, api: ApiSpec, held: list[HeldRequest]) -> list[HeldRequest] | None:
        """Of the requests held on a connection (the newest last), those to send on now, all of them
        (maybe edited), in the order to send them; None to hold them on."""
        return held

    def scope(self) -> str:
        scope = self.api or "any API"
        if self.versions:
            scope += f" v{self.versions[0]}-{self.versions[1]}"
        budget = f"fired {self.fired}x" if self.count is None else f"{self.fired}/{self.count} used"
        return f"{scope}, {budget}"

    def describe(self) -> str:
        return f"{type(self).__name__}({self.scope()})"


@dataclass(eq=False)
class CapVersion(Rule):
    """Lower the max version the brokers advertise for `api` in ApiVersions responses."""

    max_version: int = 0

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == API_VERSIONS and not self.spent

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        changed = False
        for entry in body.get("ApiKeys") or ():
            if entry["ApiKey"] == self.api_key and entry["MaxVersion"] > self.max_version:
                entry["MaxVersion"] = max(self.max_version, entry["MinVersion"])
                changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"CapVersion({self.api} <= v{self.max_version}, {self.fired} ApiVersions responses edited)"


@dataclass(eq=False)
class StripTopicIds(Rule):
    """Answer Metadata with the zero topic ID, for `topics` (names) or for every topic."""

    topics: frozenset[str] | None = None

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == METADATA and version >= _METADATA_TOPIC_ID_FROM and not self.spent

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        changed = False
        for topic in body.get("Topics") or ():
            if self.topics is not None and topic.get("Name") not in self.topics:
                continue
            if topic.get("TopicId", ZERO_UUID) != ZERO_UUID:
                topic["TopicId"] = ZERO_UUID
                changed = True
        return changed and self.take()

    def describe(self) -> str:
        which = "all topics" if self.topics is None else ", ".join(sorted(self.topics))
        return f"StripTopicIds({which}, {self.fired} Metadata responses edited)"


@dataclass(eq=False)
class ResponseEdit(Rule):
    """A rule that edits the responses of its own API (and versions) until its budget is spent: once
    by default."""

    count: int | None = 1

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version) and not self.spent


@dataclass(eq=False)
class ReplaceErrors(ResponseEdit):
    """Set every ErrorCode of the first `count` matching responses to `error` (default count 1)."""

    error: int = 0

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if not self.take():
            return False
        _set_error_codes(body, self.error)
        return True

    def describe(self) -> str:
        return f"ReplaceErrors({self.scope()}, ErrorCode -> {self.error})"


@dataclass(eq=False)
class RefusePartitions(ResponseEdit):
    """Answer every partition of the first `count` matching Fetch or Produce responses that carry
    partitions with `error`, as a replica that refused the request's epoch would: a Fetch partition
    with no records, a Produce partition with no offset (the response's own ErrorCode stays NONE).
    The request itself reached the broker: a refused Produce was appended there all the same, which
    only an idempotent producer's retry can tell apart from a new write."""

    error: int = 0

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        responses = body.get("Responses") or []
        fetch = [p for t in responses for p in t.get("Partitions") or []]
        produce = [p for t in responses for p in t.get("PartitionResponses") or []]
        if not (fetch or produce) or not self.take():
            return False
        for p in fetch:
            # Empty, not null: a broker answers a refused partition with no records, and librdkafka
            # takes a null record set for a broken frame.
            p.update(ErrorCode=self.error, HighWatermark=-1, LastStableOffset=-1, LogStartOffset=-1, Records=b"")
            if "AbortedTransactions" in p:
                p["AbortedTransactions"] = None
        for p in produce:
            p.update(ErrorCode=self.error, BaseOffset=-1, LogAppendTimeMs=-1, LogStartOffset=-1)
        return True

    def describe(self) -> str:
        return f"RefusePartitions({self.scope()}, partitions -> {self.error})"


@dataclass(eq=False)
class ReplaceTopicErrors(ResponseEdit):
    """Set the ErrorCode of every partition of one topic (by TopicId, v6+ answers keyed by it) in the
    first `count` matching responses to `error`, leaving the other topics' answers as they are."""

    topic_id: Any = None
    error: int = 0

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        mine = [t for t in body.get("Topics") or [] if t.get("TopicId") == self.topic_id]
        if not mine or not self.take():
            return False
        for t in mine:
            for p in t.get("Partitions") or []:
                p["ErrorCode"] = self.error
        return True

    def describe(self) -> str:
        return f"ReplaceTopicErrors({self.scope()}, TopicId {self.topic_id} -> {self.error})"


@dataclass(eq=False)
class StaleLeaderEpoch(ResponseEdit):
    """In the first `count` Metadata answers that name `topic`, show each of its partitions' leader
    epoch `behind` lower than the broker said: a client whose metadata lags (the KIP-232 situation)."""

    api: str | None = "Metadata"
    versions: tuple[int, int] | None = (7, 0x7FFF)  # the versions that carry LeaderEpoch
    topic: str = ""
    behind: int = 1

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        mine = [t for t in body.get("Topics") or [] if t.get("Name") == self.topic]
        if not mine or not self.take():
            return False
        for t in mine:
            for p in t.get("Partitions") or []:
                p["LeaderEpoch"] = max(0, p["LeaderEpoch"] - self.behind)
        return True

    def describe(self) -> str:
        return f"StaleLeaderEpoch(Metadata of {self.topic} {self.behind} epoch(s) behind, {self.scope()})"


@dataclass(eq=False)
class StaleUntilCommitRead(StaleLeaderEpoch):
    """StaleLeaderEpoch until an OffsetFetch has been answered through the proxy: the client's metadata
    is behind when it reads its group's commit however long joining the group takes (a number of stale
    answers ran out before a slow join read it), and true from then on, as a refresh must find it."""

    read: bool = field(default=False, init=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == OFFSET_FETCH or (not self.read and super().acts_on_response(api_key, version))

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if api.key == OFFSET_FETCH:
            self.read = True
            return False
        return not self.read and super().edit_response(api, version, body)

    def describe(self) -> str:
        return (f"StaleUntilCommitRead(Metadata of {self.topic} {self.behind} epoch(s) behind until an OffsetFetch "
                f"is answered, {self.scope()})")


@dataclass(eq=False)
class UndefinedEpochEndOffset(ResponseEdit):
    """Answer every OffsetsForLeaderEpoch partition the broker answered without error with
    UNDEFINED_EPOCH_OFFSET (LeaderEpoch -1, EndOffset -1), as a leader whose epoch cache has no
    entry at or below the epoch asked about does (KIP-320 "Consumer Handling": the offset cannot
    be found precisely). Every matching answer, for as long as the rule is in force."""

    api: str | None = "OffsetForLeaderEpoch"
    count: int | None = None

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        parts = [p for t in body.get("Topics") or () for p in t.get("Partitions") or () if not p.get("ErrorCode")]
        if not parts or not self.take():
            return False
        for p in parts:
            p["LeaderEpoch"], p["EndOffset"] = NO_EPOCH, -1
        return True

    def describe(self) -> str:
        return f"UndefinedEpochEndOffset({self.scope()}, LeaderEpoch -1 EndOffset -1)"


@dataclass(eq=False)
class DivergedEpochEndOffset(ResponseEdit):
    """Answer every OffsetsForLeaderEpoch partition the broker answered without error, with an end
    offset above `end_offset`, with EndOffset `end_offset` (its LeaderEpoch kept): the epoch asked
    about ended there, so a consumer positioned beyond it that validates finds a divergence and
    moves (or reports it). Every matching answer, for as long as the rule is in force."""

    api: str | None = "OffsetForLeaderEpoch"
    count: int | None = None
    end_offset: int = 0

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        parts = [p for t in body.get("Topics") or () for p in t.get("Partitions") or ()
                 if not p.get("ErrorCode") and p.get("EndOffset", -1) > self.end_offset]
        if not parts or not self.take():
            return False
        for p in parts:
            p["EndOffset"] = self.end_offset
        return True

    def describe(self) -> str:
        return f"DivergedEpochEndOffset({self.scope()}, EndOffset -> {self.end_offset})"


# -- replays of documented broker bugs ----------------------------------------------------------
# Each makes an Apache Kafka broker answer as a buggy broker did (harness/replays.toml names the bug
# and its link); they act on every matching answer, for as long as they are in force.


@dataclass(eq=False)
class NoLeaderEpochInMetadata(Rule):
    """Metadata v7+ answers with every partition's LeaderEpoch -1: a broker without KIP-320 epochs
    (Azure Event Hubs' Standard tier, open-telemetry/opentelemetry-collector-contrib#42226)."""

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == METADATA and version >= 7

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        return _blank_epochs(body, "LeaderEpoch") and self.take()

    def describe(self) -> str:
        return f"NoLeaderEpochInMetadata(Metadata v7+, {self.fired} answers edited)"


@dataclass(eq=False)
class _KnowsCurrentEpochs(Rule):
    """A rule that needs each partition's current leader epoch: the one a request validated
    (CurrentLeaderEpoch, answered without error), else the newest Metadata named."""

    needs_request: bool = field(default=True, init=False, repr=False)
    _epochs: dict[tuple[str, int], int] = field(default_factory=dict, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == METADATA and version >= 7

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        if api.key == METADATA:
            for t in body.get("Topics") or ():
                for p in t.get("Partitions") or ():
                    self._saw(t.get("Name"), p["PartitionIndex"], p.get("LeaderEpoch", NO_EPOCH))
            return False
        return self.edit_known(api, version, request or {}, body)

    def _saw(self, topic: str | None, partition: int, epoch: int) -> None:
        if topic is not None and epoch >= 0:
            with self._lock:
                key = (topic, partition)
                self._epochs[key] = max(epoch, self._epochs.get(key, NO_EPOCH))

    def current_epoch(self, topic: str, partition: int, asked: int = NO_EPOCH) -> int:
        if asked >= 0:
            self._saw(topic, partition, asked)
            return asked
        return self._epochs.get((topic, partition), NO_EPOCH)

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        return False


def _blank_epochs(body: dict[str, Any], epoch_field: str) -> bool:
    """Set `epoch_field` of every partition of `body`'s topics to -1; whether any was set before."""
    parts = [p for t in body.get("Topics") or () for p in t.get("Partitions") or ()]
    changed = [p for p in parts if p.get(epoch_field, NO_EPOCH) != NO_EPOCH]
    for p in changed:
        p[epoch_field] = NO_EPOCH
    return bool(changed)


def _asked(request: dict[str, Any], topic_key: str, partition_key: str) -> dict[tuple[Any, int], dict[str, Any]]:
    """The request's partitions by (topic name or id, partition index)."""
    return {(t.get(topic_key), p.get(partition_key)): p
            for t in request.get("Topics") or () for p in t.get("Partitions") or ()}


LOOKUPS = ("earliest", "latest", "timestamp")


def _lookup(timestamp: int) -> str:
    if timestamp == EARLIEST_TIMESTAMP:
        return "earliest"
    if timestamp == LATEST_TIMESTAMP:
        return "latest"
    return "timestamp" if timestamp >= 0 else f"special {timestamp}"


@dataclass(eq=False)
class CurrentEpochInListOffsets(_KnowsCurrentEpochs):
    """ListOffsets v4+ answers the partition's current leader epoch instead of the epoch of the
    offset it returns, for the `lookups` named (earliest, latest, timestamp): franz-go's kfake did
    for all; Redpanda for earliest and timestamp lookups (redpanda-data/redpanda#30101). With
    `answers="none"`, the answers that return no offset (-1) carry the current epoch instead of -1,
    as kfake's did until twmb/franz-go#1434."""

    lookups: tuple[str, ...] = LOOKUPS
    answers: str = "found"

    def __post_init__(self) -> None:
        if self.answers not in ("found", "none"):
            raise ValueError(f"CurrentEpochInListOffsets.answers must be 'found' or 'none' (an offset), "
                             f"not {self.answers!r}")

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return super().acts_on_response(api_key, version) or (api_key == LIST_OFFSETS and version >= 4)

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        asked = _asked(request, "Name", "PartitionIndex")
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                q = asked.get((t.get("Name"), p["PartitionIndex"]), {})
                found = p.get("Offset", -1) >= 0
                if p.get("ErrorCode") or found != (self.answers == "found") or \
                        _lookup(q.get("Timestamp", 0)) not in self.lookups:
                    continue
                current = self.current_epoch(t["Name"], p["PartitionIndex"], q.get("CurrentLeaderEpoch", NO_EPOCH))
                if current >= 0 and p.get("LeaderEpoch") != current:
                    p["LeaderEpoch"] = current
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return (f"CurrentEpochInListOffsets({'/'.join(self.lookups)} lookups answering {self.answers} offset, "
                f"{self.fired} answers edited)")


@dataclass(eq=False)
class FutureEpochEndsAtCurrent(_KnowsCurrentEpochs):
    """OffsetsForLeaderEpoch answers an epoch above every one the leader knows with the current
    epoch and an end offset (the largest it answered for the partition), not UNDEFINED (-1, -1):
    Redpanda's answer for future epochs (redpanda-data/redpanda#11864)."""

    _ends: dict[tuple[str, int], int] = field(default_factory=dict, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return super().acts_on_response(api_key, version) or api_key == OFFSET_FOR_LEADER_EPOCH

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        asked = _asked(request, "Topic", "Partition")
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                key = (t["Topic"], p["Partition"])
                q = asked.get(key, {})
                if p.get("ErrorCode"):
                    continue
                if p["EndOffset"] >= 0:
                    with self._lock:
                        self._ends[key] = max(p["EndOffset"], self._ends.get(key, 0))
                    continue
                current = self.current_epoch(*key, q.get("CurrentLeaderEpoch", NO_EPOCH))
                if q.get("LeaderEpoch", NO_EPOCH) > current >= 0:
                    p["LeaderEpoch"], p["EndOffset"] = current, self._ends.get(key, 0)
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"FutureEpochEndsAtCurrent(OffsetForLeaderEpoch, {self.fired} answers edited)"


@dataclass(eq=False)
class CommittedEpochReadBack(Rule):
    """OffsetFetch v5+ answers every committed offset that has a leader epoch with `epoch` instead:
    -1 where the request named its topics (Redpanda dropped committed_leader_epoch there,
    redpanda-data/redpanda#9850; `named_topics_only`), -2147483648 after a coordinator's leader
    change (redpanda-data/redpanda#17260). With `of="without"`, the offsets committed without an
    epoch are answered with `epoch` instead of -1 (Azure Event Hubs, confluentinc/librdkafka#4384)."""

    epoch: int = NO_EPOCH
    named_topics_only: bool = False
    of: str = "with"
    needs_request: bool = field(default=True, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.of not in ("with", "without"):
            raise ValueError(f"CommittedEpochReadBack.of must be 'with' or 'without' (an epoch), not {self.of!r}")

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == OFFSET_FETCH and version >= 5

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        request = request or {}
        if version >= 8:
            named = {g.get("GroupId"): g.get("Topics") is not None for g in request.get("Groups") or ()}
            answered = [(named.get(g.get("GroupId"), False), g.get("Topics") or ()) for g in body.get("Groups") or ()]
        else:
            answered = [(request.get("Topics") is not None, body.get("Topics") or ())]
        changed = False
        for named_topics, topics in answered:
            if self.named_topics_only and not named_topics:
                continue
            for t in topics:
                for p in t.get("Partitions") or ():
                    has_epoch = p.get("CommittedLeaderEpoch", NO_EPOCH) >= 0
                    if p.get("CommittedOffset", -1) >= 0 and has_epoch == (self.of == "with"):
                        p["CommittedLeaderEpoch"] = self.epoch
                        changed = True
        return changed and self.take()

    def describe(self) -> str:
        which = "named topics" if self.named_topics_only else "every topic"
        return (f"CommittedEpochReadBack(OffsetFetch of {which}, commits {self.of} an epoch -> epoch {self.epoch}, "
                f"{self.fired} answers edited)")


@dataclass(eq=False)
class FenceUnsetCurrentEpoch(Rule):
    """A consumer's Fetch (v9+) or ListOffsets (v4+) partition whose CurrentLeaderEpoch is -1 ("no
    epoch": validation bypassed) is answered FENCED_LEADER_EPOCH, as franz-go's kfake did. Requests
    of replicas and of the debugging replica id (the harness's own log-end reads) are left alone:
    the bug was in answering clients."""

    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return (api_key == FETCH and version >= 9) or (api_key == LIST_OFFSETS and version >= 4)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        request = request or {}
        replica = (request.get("ReplicaState") or {}).get("ReplicaId", request.get("ReplicaId", -1))
        if replica != -1:
            return False
        if api.key == FETCH:
            topic_key = "TopicId" if version >= 13 else "Topic"
            asked = _asked(request, topic_key, "Partition")
            answered = [(t.get(topic_key), p) for t in body.get("Responses") or () for p in t.get("Partitions") or ()]
        else:
            asked = _asked(request, "Name", "PartitionIndex")
            answered = [(t.get("Name"), p) for t in body.get("Topics") or () for p in t.get("Partitions") or ()]
        changed = False
        for topic, p in answered:
            q = asked.get((topic, p["PartitionIndex"]))
            if q is None or q.get("CurrentLeaderEpoch", NO_EPOCH) != NO_EPOCH or p.get("ErrorCode"):
                continue
            p["ErrorCode"] = FENCED_LEADER_EPOCH
            if api.key == FETCH:
                p.update(HighWatermark=-1, LastStableOffset=-1, LogStartOffset=-1, Records=b"")
                if "AbortedTransactions" in p:
                    p["AbortedTransactions"] = None
            else:
                p.update(Timestamp=-1, Offset=-1, LeaderEpoch=NO_EPOCH)
            changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"FenceUnsetCurrentEpoch(Fetch v9+/ListOffsets v4+ at epoch -1, {self.fired} answers edited)"


@dataclass(eq=False)
class WrongEpochEndOffsets(_KnowsCurrentEpochs):
    """OffsetsForLeaderEpoch answers end offsets `behind` too low (never below 0), for the current
    epoch (`which="current"`: the answer of a replica whose log lags the leader's, or of a stale
    epoch cache) or for the epochs before it (`which="past"`). Redpanda answered from a replica that
    was not the leader (redpanda-data/redpanda#5435, #6301; fixed in #6400) and with offsets of the
    local log under tiered storage (#14402); AutoMQ from an expired epoch cache (AutoMQ/automq#2863)."""

    which: str = "current"
    behind: int = 1

    def __post_init__(self) -> None:
        if self.which not in ("current", "past"):
            raise ValueError(f"WrongEpochEndOffsets.which must be 'current' or 'past', not {self.which!r}")

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return super().acts_on_response(api_key, version) or api_key == OFFSET_FOR_LEADER_EPOCH

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        asked = _asked(request, "Topic", "Partition")
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                q = asked.get((t["Topic"], p["Partition"]), {})
                if p.get("ErrorCode") or p["EndOffset"] <= 0 or p["LeaderEpoch"] < 0:
                    continue
                current = self.current_epoch(t["Topic"], p["Partition"], q.get("CurrentLeaderEpoch", NO_EPOCH))
                if current < 0 or (p["LeaderEpoch"] == current) != (self.which == "current"):
                    continue
                p["EndOffset"] = max(0, p["EndOffset"] - self.behind)
                changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"WrongEpochEndOffsets({self.which} epochs {self.behind} behind, {self.fired} answers edited)"


@dataclass(eq=False)
class IgnoreCurrentLeaderEpoch(Rule):
    """The broker ignores a consumer's Fetch CurrentLeaderEpoch (v9+): the proxy sends it on as -1,
    so an older or newer epoch is served as if none was given, with records. Redpanda ignored it
    until redpanda-data/redpanda#17674 ("prevented consumers to correctly detect suffix truncation")."""

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 9

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        replica = (body.get("ReplicaState") or {}).get("ReplicaId", body.get("ReplicaId", -1))
        if replica != -1:
            return False  # the brokers' own replication stays as it is
        return _blank_epochs(body, "CurrentLeaderEpoch") and self.take()

    def describe(self) -> str:
        return f"IgnoreCurrentLeaderEpoch(Fetch v9+ sent on at epoch -1, {self.fired} requests edited)"


@dataclass(eq=False)
class HideAbortedTransactions(Rule):
    """A read_committed Fetch (v4+, IsolationLevel 1) is answered with only the first `keep` entries
    of each partition's AbortedTransactions, so a consumer takes the records of the other aborted
    transactions for committed ones. Tansu answered none (tansu-io/tansu compat/franz-go/FINDINGS.md,
    "Aborted transactional records are visible to read_committed consumers"); AutoMQ collected the
    aborted-transaction index of one segment only (AutoMQ/automq#754)."""

    keep: int = 0
    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        if (request or {}).get("IsolationLevel") != 1:
            return False
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                aborted = p.get("AbortedTransactions") or []
                if len(aborted) > self.keep:
                    p["AbortedTransactions"] = aborted[:self.keep]
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"HideAbortedTransactions(read_committed Fetch keeps {self.keep} aborted, {self.fired} answers edited)"


@dataclass(eq=False)
class SkipBatchHoldingFetchOffset(Rule):
    """A Fetch (v4+) whose FetchOffset falls inside a record batch, not at its base, is answered
    without that batch, instead of the whole batch for the client to filter: Tansu's Fetch
    (tansu-io/tansu compat/franz-go/FINDINGS.md, "Fetch skips the record batch containing a
    mid-batch offset"), which loses those records, and hangs a consumer inside the last batch."""

    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        topic_key = "TopicId" if version >= 13 else "Topic"
        asked = _asked(request or {}, topic_key, "Partition")
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                q = asked.get((t.get(topic_key), p["PartitionIndex"]))
                records = p.get("Records")
                if q is None or not isinstance(records, bytes | bytearray) or not records:
                    continue
                spans = batch_spans(bytes(records))
                if spans and spans[0][0] < q["FetchOffset"] <= spans[0][1]:
                    p["Records"] = bytes(records[spans[0][2]:])
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"SkipBatchHoldingFetchOffset(Fetch v4+, {self.fired} answers edited)"


def _set_error_codes(value: Any, error: int) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "ErrorCode":
                value[k] = error
            elif isinstance(v, dict | list):
                _set_error_codes(v, error)
    elif isinstance(value, list):
        for item in value:
            _set_error_codes(item, error)


@dataclass(eq=False)
class Delay(Rule):
    """Hold matching requests (before the broker sees them) or responses for `seconds`."""

    seconds: float = 0.0
    on: str = "response"

    def __post_init__(self) -> None:
        if self.on not in ("request", "response"):
            raise ValueError(f"Delay.on must be 'request' or 'response', not {self.on!r}")

    def on_request(self, api_key: int, version: int) -> RequestAction | None:
        if self.on == "request" and self.take():
            return RequestAction(delay=self.seconds)
        return None

    def response_delay(self, api_key: int, version: int) -> float:
        return self.seconds if self.on == "response" and self.take() else 0.0


@dataclass(eq=False)
class CloseConnection(Rule):
    """Close the client's connection when a matching request arrives; it never reaches the broker."""

    count: int | None = 1

    def on_request(self, api_key: int, version: int) -> RequestAction | None:
        return RequestAction(close=True) if self.take() else None
