"""Committed offsets read back: the leader epoch (KIP-320) and the metadata string an OffsetFetch answers
for a commit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import NO_EPOCH, OFFSET_FETCH, Rule


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
class CommittedMetadataDropped(Rule):
    """OffsetFetch answers every committed offset with an empty Metadata string, whatever was committed
    with it: Nisshi's open gap "OffsetCommit `metadata` is not round-tripped — committed metadata comes
    back empty from OffsetFetch" (nisshi-io/nisshi compat/librdkafka/FINDINGS.md; librdkafka tests 0099
    and 0140)."""

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == OFFSET_FETCH

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        groups = (body.get("Groups") or ()) if version >= 8 else (body,)
        parts = [p for g in groups for t in g.get("Topics") or () for p in t.get("Partitions") or ()
                 if p.get("CommittedOffset", -1) >= 0 and p.get("Metadata")]
        for p in parts:
            p["Metadata"] = ""
        return bool(parts) and self.take()

    def describe(self) -> str:
        return f"CommittedMetadataDropped(OffsetFetch Metadata read back empty, {self.fired} answers edited)"
