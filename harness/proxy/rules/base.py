"""Faults and edits the proxy applies at runtime: objects that tests add, inspect and remove.

A rule names the API it acts on (by name, e.g. "TxnOffsetCommit"), optionally a version range,
and optionally how many times it may act (`count`; None is forever). `fired` says how often it
did, so a test can assert that an injected fault really happened. Rules that edit a response
work on the decoded body; the proxy only decodes a response when a rule (or the address
rewriter) asks for it.

This module holds the base classes, the API keys and the helpers the rule families share;
each family of rules has a module of its own in this package."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from harness.protocol.spec import ApiSpec, SpecSet

PRODUCE = 0
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
READ_UNCOMMITTED, READ_COMMITTED = 0, 1  # a Fetch's IsolationLevel (KIP-98)


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
class ResponseEdit(Rule):
    """A rule that edits the responses of its own API (and versions) until its budget is spent: once
    by default."""

    count: int | None = 1

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return self.matches(api_key, version) and not self.spent


@dataclass(eq=False)
class KnowsCurrentEpochs(Rule):
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


def blank_epochs(body: dict[str, Any], epoch_field: str) -> bool:
    """Set `epoch_field` of every partition of `body`'s topics to -1; whether any was set before."""
    parts = [p for t in body.get("Topics") or () for p in t.get("Partitions") or ()]
    changed = [p for p in parts if p.get(epoch_field, NO_EPOCH) != NO_EPOCH]
    for p in changed:
        p[epoch_field] = NO_EPOCH
    return bool(changed)


def requested(request: dict[str, Any], topic_key: str, partition_key: str) -> dict[tuple[Any, int], dict[str, Any]]:
    """The request's partitions by (topic name or id, partition index)."""
    return {(t.get(topic_key), p.get(partition_key)): p
            for t in request.get("Topics") or () for p in t.get("Partitions") or ()}


def replica_of(request: dict[str, Any]) -> int:
    """The ReplicaId a Fetch, ListOffsets or OffsetForLeaderEpoch request names (Fetch v15+ in its
    ReplicaState, KIP-903): -1 a consumer, -2 a debugging read (the harness's own), 0 and up a broker."""
    return (request.get("ReplicaState") or {}).get("ReplicaId", request.get("ReplicaId", -1))
