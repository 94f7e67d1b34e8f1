"""OffsetsForLeaderEpoch answers (KIP-279, KIP-320): UNDEFINED, an epoch that ended early (a
divergence), and the documented wrong end offsets of Kafka-compatible brokers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import (
    EARLIEST_TIMESTAMP,
    LIST_OFFSETS,
    NO_EPOCH,
    OFFSET_FOR_LEADER_EPOCH,
    KnowsCurrentEpochs,
    ResponseEdit,
    replica_of,
    requested,
)


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


@dataclass(eq=False)
class FutureEpochEndsAtCurrent(KnowsCurrentEpochs):
    """OffsetsForLeaderEpoch answers an epoch above every one the leader knows with the current
    epoch and an end offset (the largest it answered for the partition), not UNDEFINED (-1, -1):
    Redpanda's answer for future epochs (redpanda-data/redpanda#11864)."""

    _ends: dict[tuple[str, int], int] = field(default_factory=dict, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return super().acts_on_response(api_key, version) or api_key == OFFSET_FOR_LEADER_EPOCH

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        asked = requested(request, "Topic", "Partition")
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
class WrongEpochEndOffsets(KnowsCurrentEpochs):
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
        asked = requested(request, "Topic", "Partition")
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
class EpochAnsweredAtLogEnd(KnowsCurrentEpochs):
    """OffsetsForLeaderEpoch answers every epoch asked, past, future and -1 alike, with that epoch and
    the log end offset, as Inkless answered for its diskless partitions: the control plane's latest
    offset, whatever the epoch (aiven/inkless#613, whose fix answers a switched partition's classic
    epochs from its local log and -1 with UNDEFINED; #631: diskless OffsetsForLeaderEpoch could not
    truncate a follower's stale tail). The broker is asked about the current epoch instead (the one
    the request validated, else the newest Metadata named), whose end is the log end, and the answer
    names the epoch that was asked. Partitions whose current epoch is not known yet are left alone,
    as are replicas' requests."""

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == OFFSET_FOR_LEADER_EPOCH

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if replica_of(body) >= 0:
            return False
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                current = self.current_epoch(t["Topic"], p["Partition"], p.get("CurrentLeaderEpoch", NO_EPOCH))
                if current >= 0 and p["LeaderEpoch"] != current:
                    p["LeaderEpoch"] = current
                    changed = True
        return changed

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return super().acts_on_response(api_key, version) or api_key == OFFSET_FOR_LEADER_EPOCH

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        if replica_of(request) >= 0:
            return False
        asked = requested(request, "Topic", "Partition")
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                q = asked.get((t["Topic"], p["Partition"]))
                if q is None or p.get("ErrorCode") or p["EndOffset"] < 0:
                    continue
                if self.current_epoch(t["Topic"], p["Partition"], q.get("CurrentLeaderEpoch", NO_EPOCH)) < 0:
                    continue  # sent on as asked (above): the broker's own answer
                if p["LeaderEpoch"] != q["LeaderEpoch"]:
                    p["LeaderEpoch"] = q["LeaderEpoch"]
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"EpochAnsweredAtLogEnd(OffsetForLeaderEpoch, every epoch at the log end, {self.fired} answers edited)"


@dataclass(eq=False)
class PastEpochAnsweredWithCurrent(KnowsCurrentEpochs):
    """OffsetsForLeaderEpoch answers a past epoch the leader knows with the current epoch as its
    LeaderEpoch (its end offset right), not the asked one: Redpanda's answer until
    redpanda-data/redpanda#12063, the second case of #11864 ("Requested epoch is in the past, but still
    present in the log ... we currently return leader_epoch=current_term"); its handler answered every
    partition with the partition's own term. Answers where Apache names another epoch than the asked
    one (a gap, -1, a future epoch) are left alone: the issue names only the epochs still in the log."""

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return super().acts_on_response(api_key, version) or api_key == OFFSET_FOR_LEADER_EPOCH

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        asked = requested(request, "Topic", "Partition")
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                q = asked.get((t["Topic"], p["Partition"]))
                if q is None or p.get("ErrorCode") or p["EndOffset"] < 0 or p["LeaderEpoch"] != q["LeaderEpoch"]:
                    continue
                current = self.current_epoch(t["Topic"], p["Partition"], q.get("CurrentLeaderEpoch", NO_EPOCH))
                if 0 <= p["LeaderEpoch"] < current:
                    p["LeaderEpoch"] = current
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"PastEpochAnsweredWithCurrent(OffsetForLeaderEpoch, {self.fired} answers edited)"


@dataclass(eq=False)
class EpochBelowLogStartUndefined(KnowsCurrentEpochs):
    """OffsetsForLeaderEpoch answers an epoch older than the epoch of the log's first record with end
    offset -1 (and, as its handler then answered every partition, the current epoch), not the asked
    epoch ending at the log start: Redpanda's answer without tiered storage until
    redpanda-data/redpanda#9264 ("we would previously return an offset -1 if the epoch queried fell
    below the start of our local log"; `get_leader_epoch_last_offset` gave nothing below the first
    local term). The epoch of the log start is the one the broker's last ListOffsets EARLIEST (v4+)
    answer gave for the partition; where none was seen, answers are left alone."""

    _first: dict[tuple[str, int], int] = field(default_factory=dict, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return (super().acts_on_response(api_key, version) or api_key == OFFSET_FOR_LEADER_EPOCH
                or (api_key == LIST_OFFSETS and version >= 4))

    def edit_known(self, api: ApiSpec, version: int, request: dict[str, Any], body: dict[str, Any]) -> bool:
        if api.key == LIST_OFFSETS:
            asked_times = requested(request, "Name", "PartitionIndex")
            for t in body.get("Topics") or ():
                for p in t.get("Partitions") or ():
                    q = asked_times.get((t.get("Name"), p["PartitionIndex"]), {})
                    if q.get("Timestamp") == EARLIEST_TIMESTAMP and not p.get("ErrorCode") \
                            and p.get("LeaderEpoch", NO_EPOCH) >= 0:
                        with self._lock:
                            self._first[(t["Name"], p["PartitionIndex"])] = p["LeaderEpoch"]
            return False
        asked = requested(request, "Topic", "Partition")
        changed = False
        for t in body.get("Topics") or ():
            for p in t.get("Partitions") or ():
                key = (t["Topic"], p["Partition"])
                q = asked.get(key)
                first = self._first.get(key)
                if q is None or first is None or p.get("ErrorCode") or not 0 <= q["LeaderEpoch"] < first:
                    continue
                p["LeaderEpoch"] = self.current_epoch(*key, q.get("CurrentLeaderEpoch", NO_EPOCH))
                p["EndOffset"] = -1
                changed = True
        return changed and self.take()

    def describe(self) -> str:
        return (f"EpochBelowLogStartUndefined(OffsetForLeaderEpoch below the log start's epoch, "
                f"{self.fired} answers edited)")
