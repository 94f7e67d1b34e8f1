"""ListOffsets answers (KIP-320): the leader epoch a lookup answers with (the current one, or none)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    LIST_OFFSETS,
    NO_EPOCH,
    KnowsCurrentEpochs,
    Rule,
    requested,
)

LOOKUPS = ("earliest", "latest", "timestamp")


def _lookup(timestamp: int) -> str:
    if timestamp == EARLIEST_TIMESTAMP:
        return "earliest"
    if timestamp == LATEST_TIMESTAMP:
        return "latest"
    return "timestamp" if timestamp >= 0 else f"special {timestamp}"


@dataclass(eq=False)
class CurrentEpochInListOffsets(KnowsCurrentEpochs):
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
        asked = requested(request, "Name", "PartitionIndex")
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
class NoEpochInListOffsets(Rule):
    """ListOffsets v4+ answers every offset it returns with LeaderEpoch -1 (no epoch) instead of the
    epoch of that offset, as Inkless answered for its diskless topics until aiven/inkless#250 ("pass
    initial leader epoch": its FetchOffsetHandler had returned the offset with an empty epoch)."""

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == LIST_OFFSETS and version >= 4

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        found = [p for t in body.get("Topics") or () for p in t.get("Partitions") or ()
                 if not p.get("ErrorCode") and p.get("Offset", -1) >= 0 and p.get("LeaderEpoch", NO_EPOCH) != NO_EPOCH]
        for p in found:
            p["LeaderEpoch"] = NO_EPOCH
        return bool(found) and self.take()

    def describe(self) -> str:
        return f"NoEpochInListOffsets(ListOffsets v4+ offsets at epoch -1, {self.fired} answers edited)"
