"""Errors and refusals: answers whose error codes are replaced, whole or by topic, and Fetch or
Produce partitions refused as a replica that refused the request's epoch refuses them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import ResponseEdit


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
