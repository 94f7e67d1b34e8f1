"""Rules that stage what a correct broker may do (harness/allowed.toml): answers the KIP texts and the
protocol allow, which Apache Kafka on one machine seldom gives. Each catalogue entry quotes its text.

Every rule keeps what the broker did and what it said in agreement. An answer that says the broker
did not act (a coordinator that is loading or has moved, a topic ID it cannot resolve) is given
only where the proxy also kept that work from the broker: the request reaches it emptied of that
work, or under a key it refuses before acting, and the answer is then written for what the client
asked. Read-only answers (OffsetFetch, FindCoordinator, ListOffsets, OffsetForLeaderEpoch, Fetch)
are edited as they come. A rule acts once per key (a group, a transaction, a partition, a topic
ID), the first time that key is seen, so that a client's retry meets the broker's own answer.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.protocol.types import ZERO_UUID
from harness.proxy.batches import batch_spans
from harness.proxy.rules import Rule
from harness.proxy.rules.base import replica_of

FETCH = 1
LIST_OFFSETS = 2
METADATA = 3
OFFSET_FOR_LEADER_EPOCH = 23

UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
GROUP_AUTHORIZATION_FAILED = 30
INVALID_REQUEST = 42
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
UNKNOWN_TOPIC_ID = 100
COORDINATOR_ERRORS = (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR)
NO_EPOCH = -1
ANY_VERSION = 0x7FFF


def _topic_key(topic: dict[str, Any]) -> Any:
    """A request or response topic's key: its TopicId where the version carries one, else its name."""
    return topic["TopicId"] if "TopicId" in topic else topic.get("Name", topic.get("Topic"))


def _answer_topic(asked: dict[str, Any], error: int) -> dict[str, Any]:
    """An OffsetCommit or TxnOffsetCommit response topic answering every partition `asked` with `error`
    (the encoder fills the fields a version adds)."""
    key = "TopicId" if "TopicId" in asked else "Name"
    return {key: asked[key], "Partitions": [{"PartitionIndex": p["PartitionIndex"], "ErrorCode": error}
                                            for p in asked["Partitions"]]}


@dataclass(eq=False)
class _OncePerKey(Rule):
    """A rule that acts on the first answer for each key (a group, a partition, a TopicId), so that a
    client's retry gets the broker's own answer."""

    _seen: set[Any] = field(default_factory=set, init=False, repr=False)

    def first(self, key: Any) -> bool:
        """Whether this is the first time `key` is seen (and the budget allows an act)."""
        with self._lock:
            if key in self._seen:
                return False
            self._seen.add(key)
        return self.take()


# -- KIP-1319: a topic ID the group coordinator cannot resolve yet ------------------------------------
@dataclass(eq=False)
class UnknownTopicIdFirst(_OncePerKey):
    """TxnOffsetCommit v6: the first request naming each TopicId is answered UNKNOWN_TOPIC_ID for every
    partition of that topic, as a coordinator whose metadata cache has not yet learned the topic would
    (KIP-1319, "Proposed Changes > Broker-Side > Topic ID resolution"); later ones go through untouched.

    The broker is never asked to commit that topic: the proxy sends it under a fresh random TopicId,
    which the broker resolves to nothing, so its own precedence holds (an authorization refusal of the
    whole request still comes first), and the answer is given back under the real TopicId."""

    api: str | None = "TxnOffsetCommit"
    versions: tuple[int, int] | None = (6, ANY_VERSION)
    needs_request: bool = field(default=True, init=False, repr=False)
    # The stand-in TopicId each first request was sent under, to the real one it hides.
    _stand_ins: dict[Any, Any] = field(default_factory=dict, init=False, repr=False)

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version)

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        changed = False
        for t in body.get("Topics") or ():
            topic_id = t.get("TopicId")
            if topic_id is None or not self.first(topic_id):
                continue
            stand_in = uuid.uuid4()
            with self._lock:
                self._stand_ins[stand_in] = topic_id
            t["TopicId"] = stand_in
            changed = True
        return changed

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        changed = False
        for t in body.get("Topics") or ():
            with self._lock:
                real = self._stand_ins.pop(t.get("TopicId"), None)
            if real is not None:
                t["TopicId"] = real
                changed = True
        return changed

    def describe(self) -> str:
        return f"UnknownTopicIdFirst({self.scope()}, first request per TopicId -> UNKNOWN_TOPIC_ID)"


# -- a coordinator that is loading, or has moved, once per group or transaction ------------------------
# How each API's request is kept from the broker: its partitions taken out (the broker answers for
# none, the proxy for each one asked), or its transactional id blanked ("" is refused with
# INVALID_REQUEST before any state is read: Apache Kafka's TransactionCoordinator), or nothing at all
# for reads.
_STRIPPED = {"OffsetCommit": "GroupId", "TxnOffsetCommit": "GroupId"}
_BLANKED = {"AddOffsetsToTxn": "TransactionalId", "EndTxn": "TransactionalId", "InitProducerId": "TransactionalId"}
_READS = ("OffsetFetch", "FindCoordinator")
# What the broker answers a request with a blank transactional id: refused, or refused authorization
# for "" (and for AddOffsetsToTxn the group's) on a cluster with ACLs. Nothing else answers as these.
_REFUSALS_OF_BLANK = (INVALID_REQUEST, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED)


@dataclass(eq=False)
class CoordinatorErrorOnce(_OncePerKey):
    """The first request of each group or transaction (its GroupId, TransactionalId or FindCoordinator
    key) to `api` is answered `error`: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or
    COORDINATOR_NOT_AVAILABLE, retriable errors every coordinator API lists (FindCoordinator: only
    COORDINATOR_NOT_AVAILABLE, its answer while the coordinator partition has no leader). Later
    requests of that key go through untouched.

    The broker does not act on the refused request: OffsetCommit and TxnOffsetCommit reach it with no
    partitions (the proxy answers each partition asked); AddOffsetsToTxn, EndTxn and InitProducerId
    reach it with a blank TransactionalId, which it refuses before reading any state; OffsetFetch and
    FindCoordinator are reads, their answers edited."""

    error: int = NOT_COORDINATOR
    needs_request: bool = field(default=True, init=False, repr=False)
    _blanked: dict[Any, int] = field(default_factory=dict, init=False, repr=False)  # key -> requests sent blank

    def __post_init__(self) -> None:
        known = (*_STRIPPED, *_BLANKED, *_READS)
        if self.api not in known:
            raise ValueError(f"CoordinatorErrorOnce.api must be one of {', '.join(known)}, not {self.api!r}")
        allowed = (COORDINATOR_NOT_AVAILABLE,) if self.api == "FindCoordinator" else COORDINATOR_ERRORS
        if self.error not in allowed:
            raise ValueError(f"CoordinatorErrorOnce: {self.api} answers only {allowed} of the coordinator "
                             f"errors, not {self.error}")

    # -- requests: the work kept from the broker -------------------------------------------------
    def acts_on_request(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version) and self.api not in _READS

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if self.api in _STRIPPED:
            if not any(t.get("Partitions") for t in body.get("Topics") or ()) or not self.first(body["GroupId"]):
                return False
            body["Topics"] = []
            return True
        key = body.get(_BLANKED[self.api])
        if not key or not self.first(key):  # an idempotent producer's InitProducerId has no coordinator
            return False
        with self._lock:
            self._blanked[key] = self._blanked.get(key, 0) + 1
        body[_BLANKED[self.api]] = ""
        return True

    # -- answers ---------------------------------------------------------------------------------
    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        request = request or {}
        if self.api in _STRIPPED:
            return self._answer_stripped(request, body)
        if self.api in _BLANKED:
            return self._answer_blanked(request, body)
        if self.api == "OffsetFetch":
            return self._answer_offset_fetch(request, body)
        return self._answer_find_coordinator(request, body)

    def _answer_stripped(self, request: dict[str, Any], body: dict[str, Any]) -> bool:
        asked = [t for t in request.get("Topics") or () if t.get("Partitions")]
        answered = {_topic_key(t) for t in body.get("Topics") or ()}
        # The request sent on with no partitions is the one answered for none of those asked.
        if not asked or any(_topic_key(t) in answered for t in asked):
            return False
        body["Topics"] = [_answer_topic(t, self.error) for t in asked]
        return True

    def _answer_blanked(self, request: dict[str, Any], body: dict[str, Any]) -> bool:
        key = request.get(_BLANKED[str(self.api)])
        with self._lock:
            owed = self._blanked.get(key, 0)
            mine = owed > 0 and body.get("ErrorCode") in _REFUSALS_OF_BLANK
            if mine:
                self._blanked[key] = owed - 1
        if not mine:
            return False
        body["ErrorCode"] = self.error
        if "ProducerId" in body:
            body["ProducerId"], body["ProducerEpoch"] = -1, -1
        return True

    def _answer_offset_fetch(self, request: dict[str, Any], body: dict[str, Any]) -> bool:
        if "Groups" in body:  # v8+: an error per group
            changed = False
            for g in body["Groups"]:
                if not g.get("ErrorCode") and self.first(g["GroupId"]):
                    g["ErrorCode"], g["Topics"] = self.error, []
                    changed = True
            return changed
        if body.get("ErrorCode") or not self.first(request.get("GroupId")):
            return False
        body["ErrorCode"], body["Topics"] = self.error, []
        return True

    def _answer_find_coordinator(self, request: dict[str, Any], body: dict[str, Any]) -> bool:
        key_type = request.get("KeyType", 0)
        entries = body.get("Coordinators")
        if entries is None:  # v0-3: one key, answered at the top level
            entries, keyed = [body], [request.get("Key")]
        else:
            keyed = [c.get("Key") for c in entries]
        changed = False
        for entry, key in zip(entries, keyed, strict=True):
            if entry.get("ErrorCode") or not self.first((key_type, key)):
                continue
            entry.update(ErrorCode=self.error, NodeId=-1, Host="", Port=-1)
            if "ErrorMessage" in entry:
                entry["ErrorMessage"] = "The coordinator is not available."
            changed = True
        return changed

    def describe(self) -> str:
        return f"CoordinatorErrorOnce({self.scope()}, first request per key -> {self.error})"


# -- a partition whose leader has just moved ----------------------------------------------------------
_LEADER_ERRORS = {
    "Fetch": (NOT_LEADER_OR_FOLLOWER,),
    "ListOffsets": (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE),
    "OffsetForLeaderEpoch": (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE),
}


@dataclass(eq=False)
class NotLeaderOnce(_OncePerKey):
    """The first answer of `api` (Fetch, ListOffsets or OffsetForLeaderEpoch) for each partition is
    `error` for that partition, as right after a leader move, from a broker that has not yet learned it
    leads; later answers for it go through untouched. Fetch answers NOT_LEADER_OR_FOLLOWER only (Apache
    Kafka's consumer takes LEADER_NOT_AVAILABLE there for a broken answer); ListOffsets and
    OffsetForLeaderEpoch either. The answer carries no data for the partition (no records, offset -1,
    epoch -1) and no KIP-951 leader hint (it is optional). Replicas' own requests are left alone."""

    error: int = NOT_LEADER_OR_FOLLOWER
    needs_request: bool = field(default=True, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.api not in _LEADER_ERRORS:
            raise ValueError(f"NotLeaderOnce.api must be one of {', '.join(_LEADER_ERRORS)}, not {self.api!r}")
        if self.error not in _LEADER_ERRORS[self.api]:
            raise ValueError(f"NotLeaderOnce: {self.api} is staged with {_LEADER_ERRORS[self.api]} only, "
                             f"not {self.error}")

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        if replica_of(request or {}) >= 0:
            return False
        topics = body.get("Responses") if api.key == FETCH else body.get("Topics")
        changed = False
        for t in topics or ():
            topic = t.get("TopicId") if api.key == FETCH and "TopicId" in t else t.get("Topic", t.get("Name"))
            for p in t.get("Partitions") or ():
                index = p.get("PartitionIndex", p.get("Partition"))
                if p.get("ErrorCode") or not self.first((topic, index)):
                    continue
                p["ErrorCode"] = self.error
                if api.key == FETCH:
                    p.update(HighWatermark=-1, LastStableOffset=-1, LogStartOffset=-1, Records=b"")
                    if "AbortedTransactions" in p:
                        p["AbortedTransactions"] = None
                elif api.key == LIST_OFFSETS:
                    p.update(Timestamp=-1, Offset=-1)
                    if "LeaderEpoch" in p:
                        p["LeaderEpoch"] = NO_EPOCH
                else:
                    p.update(LeaderEpoch=NO_EPOCH, EndOffset=-1)
                changed = True
        return changed

    def describe(self) -> str:
        return f"NotLeaderOnce({self.scope()}, first answer per partition -> {self.error})"


# -- KIP-219: a throttled client ----------------------------------------------------------------------
@dataclass(eq=False)
class Throttle(Rule):
    """Every `every`-th answer of `api` (every API where None) says ThrottleTimeMs `ms` (or more, where
    the broker said more): a client over its quota, told to wait (KIP-219: the broker answers at once
    with the throttle time set, and the client refrains from sending to it for that long). The proxy
    does not mute the connection as the broker would: a client that honours the field waits anyway."""

    ms: int = 100
    every: int = 1
    _answers: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.ms <= 0 or self.every <= 0:
            raise ValueError(f"Throttle needs ms > 0 and every > 0, not ms={self.ms}, every={self.every}")

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version)

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if "ThrottleTimeMs" not in body or body["ThrottleTimeMs"] >= self.ms:
            return False
        with self._lock:
            self._answers += 1
            due = self._answers % self.every == 0
        if not due or not self.take():
            return False
        body["ThrottleTimeMs"] = self.ms
        return True

    def describe(self) -> str:
        every = "every answer" if self.every == 1 else f"every {self.every}th answer"
        return f"Throttle({self.scope()}, {every} ThrottleTimeMs {self.ms})"


# -- short Fetch answers ------------------------------------------------------------------------------
@dataclass(eq=False)
class FetchFirstBatchOnly(Rule):
    """Every Fetch answer carries at most the first whole record batch of each partition (the rest of
    its Records dropped; HighWatermark, LastStableOffset and aborted transactions as the broker said):
    a broker that returns less than MaxBytes allows, as it may. The client fetches on from the end of
    that batch. Replicas' own fetches are left alone."""

    api: str | None = "Fetch"
    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        if replica_of(request or {}) >= 0:
            return False
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                records = p.get("Records")
                if not isinstance(records, bytes | bytearray) or not records:
                    continue
                spans = batch_spans(bytes(records))
                if len(spans) > 1 or (spans and spans[0][2] < len(records)):
                    p["Records"] = bytes(records[:spans[0][2]])
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"FetchFirstBatchOnly({self.scope()}, first batch of each partition)"


@dataclass(eq=False)
class FetchEmptyNowAndThen(Rule):
    """Every `every`-th Fetch answer that carries records is sent without them (HighWatermark,
    LastStableOffset and LogStartOffset as the broker said), after the request's MaxWaitMs (at most
    `max_wait_ms`): the answer of a broker whose read did not complete in time, as a remote-storage
    read that timed out is (KIP-1018); the client fetches the same offset again. Replicas' own fetches
    are left alone."""

    api: str | None = "Fetch"
    every: int = 4
    max_wait_ms: int = 500
    needs_request: bool = field(default=True, init=False, repr=False)
    _answers: int = field(default=0, init=False, repr=False)
    # The wait owed to the answer just emptied. The link asks `response_delay` right after
    # `edit_answer` for the same answer, on the proxy's one event-loop thread, with no await between
    # (harness.proxy.connection.Link._responses), so no other answer can take it.
    _owed: float = field(default=0.0, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.every <= 0 or self.max_wait_ms < 0:
            raise ValueError(f"FetchEmptyNowAndThen needs every > 0 and max_wait_ms >= 0, not every={self.every}, "
                             f"max_wait_ms={self.max_wait_ms}")

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        self._owed = 0.0
        if replica_of(request or {}) >= 0:
            return False
        parts = [p for t in body.get("Responses") or () for p in t.get("Partitions") or () if p.get("Records")]
        if not parts:
            return False
        with self._lock:
            self._answers += 1
            due = self._answers % self.every == 0
        if not due or not self.take():
            return False
        for p in parts:
            p["Records"] = b""  # empty, not null: librdkafka takes a null record set for a broken frame
        self._owed = min(max((request or {}).get("MaxWaitMs", 0), 0), self.max_wait_ms) / 1000
        return True

    def response_delay(self, api_key: int, version: int) -> float:
        owed, self._owed = self._owed, 0.0
        return owed

    def describe(self) -> str:
        return f"FetchEmptyNowAndThen({self.scope()}, every {self.every}th answer with records sent empty)"


# -- a new topic not yet in every broker's metadata ---------------------------------------------------
_MISSING_ERRORS = (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE)


@dataclass(eq=False)
class NewTopicMissing(Rule):
    """The first `answers` Metadata answers that name a topic (each new topic: a name with its TopicId)
    say it is not there yet: `error` (UNKNOWN_TOPIC_OR_PARTITION, or LEADER_NOT_AVAILABLE) with no
    partitions where the request named it, and no entry for it where the request asked for every
    topic; later answers go through untouched. A broker learns of a new topic from the controller on
    its own time (Apache Kafka's Admin.createTopics). Answers that already carry an error for the
    topic are left as they are and do not count."""

    api: str | None = "Metadata"
    error: int = UNKNOWN_TOPIC_OR_PARTITION
    answers: int = 1
    needs_request: bool = field(default=True, init=False, repr=False)
    _hidden: dict[Any, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.error not in _MISSING_ERRORS:
            raise ValueError(f"NewTopicMissing.error must be one of {_MISSING_ERRORS}, not {self.error}")
        if self.answers <= 0:
            raise ValueError(f"NewTopicMissing.answers must be > 0, not {self.answers}")

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version)

    def _hide(self, key: Any) -> bool:
        with self._lock:
            hidden = self._hidden.get(key, 0)
            if hidden >= self.answers:
                return False
            self._hidden[key] = hidden + 1
        return True

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        asked = (request or {}).get("Topics")
        if asked is not None and any(t.get("Name") is None for t in asked):
            return False  # a lookup by TopicId (v12+): its answer is keyed by that ID, not staged here
        kept, changed = [], False
        for t in body.get("Topics") or ():
            if t.get("ErrorCode") or t.get("Name") is None or not self._hide((t["Name"], t.get("TopicId"))):
                kept.append(t)
                continue
            changed = True
            if asked is None:
                continue  # a listing of every topic leaves out what the broker does not know yet
            t.update(ErrorCode=self.error, Partitions=[])
            if self.error == UNKNOWN_TOPIC_OR_PARTITION and "TopicId" in t:
                t["TopicId"] = ZERO_UUID
            kept.append(t)
        if changed:
            body["Topics"] = kept
        return changed and self.take()

    def describe(self) -> str:
        return f"NewTopicMissing({self.scope()}, first {self.answers} answer(s) per new topic -> {self.error})"
