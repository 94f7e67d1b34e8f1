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

API_VERSIONS = 18
METADATA = 3
# Metadata responses carry TopicId from v10 on (KIP-516).
_METADATA_TOPIC_ID_FROM = 10


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

    def response_delay(self, api_key: int, version: int) -> float:
        return 0.0

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
