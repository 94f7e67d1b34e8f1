"""A consumer's CurrentLeaderEpoch validated wrongly (KIP-320): -1 (no epoch) fenced, or any epoch
ignored."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import (
    FENCED_LEADER_EPOCH,
    FETCH,
    LIST_OFFSETS,
    NO_EPOCH,
    Rule,
    blank_epochs,
    replica_of,
    requested,
)


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
        if replica_of(request) != -1:
            return False
        if api.key == FETCH:
            topic_key = "TopicId" if version >= 13 else "Topic"
            asked = requested(request, topic_key, "Partition")
            answered = [(t.get(topic_key), p) for t in body.get("Responses") or () for p in t.get("Partitions") or ()]
        else:
            asked = requested(request, "Name", "PartitionIndex")
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
class IgnoreCurrentLeaderEpoch(Rule):
    """The broker ignores a consumer's Fetch CurrentLeaderEpoch (v9+): the proxy sends it on as -1,
    so an older or newer epoch is served as if none was given, with records. Redpanda ignored it
    until redpanda-data/redpanda#17674 ("prevented consumers to correctly detect suffix truncation")."""

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 9

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if replica_of(body) != -1:
            return False  # the brokers' own replication stays as it is
        return blank_epochs(body, "CurrentLeaderEpoch") and self.take()

    def describe(self) -> str:
        return f"IgnoreCurrentLeaderEpoch(Fetch v9+ sent on at epoch -1, {self.fired} requests edited)"
