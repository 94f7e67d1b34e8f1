"""ListOffsets answers (KIP-320, KIP-79): the leader epoch a lookup answers with (the current one, or
none), and the offset a lookup that finds no record answers with."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import (
    EARLIEST_TIMESTAMP,
    FETCH,
    LATEST_TIMESTAMP,
    LIST_OFFSETS,
    METADATA,
    NO_EPOCH,
    PRODUCE,
    READ_COMMITTED,
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


@dataclass(frozen=True)
class LogBounds:
    """A partition's log as the broker last gave it to a client: its start, high watermark and last
    stable offset (None where no answer has given it since the last write)."""

    start: int | None = None
    end: int | None = None
    stable: int | None = None


@dataclass(eq=False)
class _KnowsLogBounds(KnowsCurrentEpochs):
    """A rule that needs a partition's log bounds, as the broker's own answers to clients gave them:
    ListOffsets EARLIEST (the log start) and LATEST (the high watermark, or the last stable offset at
    read_committed), and Fetch answers (HighWatermark, LastStableOffset, LogStartOffset). A write
    answered since (Produce) forgets the end until an answer gives it again, so that a bound is never
    older than the last write the proxy saw. Subclasses edit ListOffsets answers in `edit_lookups`."""

    _bounds: dict[tuple[str, int], LogBounds] = field(default_factory=dict, init=False, repr=False)
    _names: dict[Any, str] = field(default_factory=dict, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return super().acts_on_response(api_key, version) or api_key in (LIST_OFFSETS, FETCH, PRODUCE)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        if api.key == METADATA:
            for t in body.get("Topics") or ():
                if t.get("TopicId") is not None and t.get("Name") is not None:
                    self._names[t["TopicId"]] = t["Name"]
        return super().edit_answer(api, version, request, body)

    def _topic(self, t: dict[str, Any], name_key: str) -> str | None:
        return t.get(name_key) if t.get(name_key) is not None else self._names.get(t.get("TopicId"))

    def _learn(self, key: tuple[str, int], **bounds: int | None) -> None:
        with self._lock:
            self._bounds[key] = replace(self._bounds.get(key, LogBounds()), **bounds)

    def bounds(self, topic: str, partition: int) -> LogBounds:
        return self._bounds.get((topic, partition), LogBounds())

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        if api.key == FETCH:
            for t in body.get("Responses") or ():
                topic = self._topic(t, "Topic")
                for p in t.get("Partitions") or ():
                    if topic is not None and not p.get("ErrorCode") and p.get("HighWatermark", -1) >= 0:
                        stable = p.get("LastStableOffset", -1)
                        start = p.get("LogStartOffset", -1)
                        self._learn((topic, p["PartitionIndex"]), end=p["HighWatermark"],
                                    stable=stable if stable >= 0 else p["HighWatermark"],
                                    **({"start": start} if start >= 0 else {}))
            return False
        if api.key == PRODUCE:
            for t in body.get("Responses") or ():
                topic = self._topic(t, "Name")
                for p in t.get("PartitionResponses") or ():
                    if topic is not None and not p.get("ErrorCode"):
                        self._learn((topic, p["Index"]), end=None, stable=None)
            return False
        asked = requested(request, "Name", "PartitionIndex")
        committed = request.get("IsolationLevel") == READ_COMMITTED
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                ts = asked.get((t.get("Name"), p["PartitionIndex"]), {}).get("Timestamp")
                if p.get("ErrorCode") or p.get("Offset", -1) < 0 or ts not in (EARLIEST_TIMESTAMP, LATEST_TIMESTAMP):
                    continue
                key = (t["Name"], p["PartitionIndex"])
                if ts == EARLIEST_TIMESTAMP:
                    self._learn(key, start=p["Offset"])
                elif committed:
                    self._learn(key, stable=p["Offset"])
                else:
                    self._learn(key, end=p["Offset"])
        return self.edit_lookups(version, request, body)

    def edit_lookups(self, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        return False


def _found_nothing(asked: dict[tuple[Any, int], dict[str, Any]], t: dict[str, Any], p: dict[str, Any]) -> bool:
    """A lookup by time (a timestamp of 0 or later) answered without an error and with no offset."""
    ts = asked.get((t.get("Name"), p["PartitionIndex"]), {}).get("Timestamp", -1)
    return ts >= 0 and not p.get("ErrorCode") and p.get("Offset", -1) < 0


@dataclass(eq=False)
class CurrentEpochOnEmptyPartition(_KnowsLogBounds):
    """ListOffsets v4+ answers a lookup by time on an empty partition (its high watermark, or last
    stable offset at read_committed, at or below its log start) with offset -1 and the partition's
    current leader epoch, not -1: the third path of Redpanda's CORE-12505, its "empty partition"
    branch (`make_partition(..., offset(-1), kafka_partition->leader_epoch())`), left at the current
    epoch while the flag redpanda-data/redpanda#30347 adds (`enable_listoffsets_historical_leader_epoch`,
    default off) is off; with it on, -1.
    Where the proxy has not seen the partition's bounds since its last write, the answer is left alone."""

    def edit_lookups(self, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        if version < 4:
            return False  # no LeaderEpoch in the answer
        asked = requested(request, "Name", "PartitionIndex")
        committed = request.get("IsolationLevel") == READ_COMMITTED
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                if not _found_nothing(asked, t, p):
                    continue
                b = self.bounds(t["Name"], p["PartitionIndex"])
                end = b.stable if committed else b.end
                if b.start is None or end is None or end > b.start:
                    continue
                q = asked[(t["Name"], p["PartitionIndex"])]
                current = self.current_epoch(t["Name"], p["PartitionIndex"], q.get("CurrentLeaderEpoch", NO_EPOCH))
                if current >= 0 and p.get("LeaderEpoch") != current:
                    p["LeaderEpoch"] = current
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return (f"CurrentEpochOnEmptyPartition(ListOffsets v4+ by time on an empty partition, "
                f"{self.fired} answers edited)")


@dataclass(eq=False)
class NoOffsetAnsweredAtStableOffset(_KnowsLogBounds):
    """ListOffsets answers a lookup by time that finds no record (a time after every record's) with
    the partition's last stable offset, timestamp -1 and (v4+) the current leader epoch, not offset
    -1: Redpanda's answer until redpanda-data/redpanda#4322 ("ListOffsets returns -1 if no offset
    found", fixing #4308: offsetsForTimes threw "Invalid negative timestamp" on an offset with
    timestamp -1). The last stable offset is the one the broker last gave a client for the partition
    (a Fetch answer's LastStableOffset, a read_committed LATEST; the high watermark where no
    transaction is open); where none was seen since the last write, the answer is left alone."""

    def edit_lookups(self, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        asked = requested(request, "Name", "PartitionIndex")
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                if not _found_nothing(asked, t, p):
                    continue
                b = self.bounds(t["Name"], p["PartitionIndex"])
                stable = b.stable if b.stable is not None else b.end
                if stable is None or stable < 0:
                    continue
                p["Offset"], p["Timestamp"] = stable, -1
                if version >= 4:
                    q = asked[(t["Name"], p["PartitionIndex"])]
                    p["LeaderEpoch"] = self.current_epoch(t["Name"], p["PartitionIndex"],
                                                          q.get("CurrentLeaderEpoch", NO_EPOCH))
                changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"NoOffsetAnsweredAtStableOffset(ListOffsets by time finding nothing, {self.fired} answers edited)"
