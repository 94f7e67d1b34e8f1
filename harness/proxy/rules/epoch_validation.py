"""A consumer's CurrentLeaderEpoch validated wrongly (KIP-320): -1 (no epoch) fenced, any epoch
ignored, or the current one taken for a newer one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.protocol.errors import UNKNOWN_LEADER_EPOCH
from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import (
    FENCED_LEADER_EPOCH,
    FETCH,
    LIST_OFFSETS,
    NO_EPOCH,
    OFFSET_FOR_LEADER_EPOCH,
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


@dataclass(eq=False)
class StaleEpochUntilWritten(Rule):
    """A consumer's OffsetsForLeaderEpoch (v2+) whose CurrentLeaderEpoch is an epoch no record was
    written in yet (reached by a leader move with no write since) is answered UNKNOWN_LEADER_EPOCH, as
    AutoMQ's snapshot-read partitions answered until AutoMQ/automq#2911 ("fix epoch missing update when
    there isn't new record"): such a partition took a new leader epoch only with new records, so after
    a reassignment with no write it held the epoch before and took the current one for a newer one.

    Whether the current epoch E holds a record is the leader's own answer: the proxy adds to the
    request two entries of the partition, asking where epoch E-1 ends (the start of the next epoch the
    leader knows, E's) and where E ends (the log end); equal ends mean E starts at the log end. The
    added entries are taken out of the answer. Requests of replicas, at an epoch of 0 or none, and
    partitions answered with an error are left as the broker answered them."""

    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == OFFSET_FOR_LEADER_EPOCH and version >= 2

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == OFFSET_FOR_LEADER_EPOCH and version >= 2

    @staticmethod
    def _probed(request: dict[str, Any], topic: dict[str, Any]) -> list[dict[str, Any]]:
        """The partitions of `topic` (in a consumer's `request`) the rule asks about: at an epoch above 0."""
        if replica_of(request) != -1:
            return []
        return [p for p in topic.get("Partitions") or () if p.get("CurrentLeaderEpoch", NO_EPOCH) > 0]

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        changed = False
        for t in body.get("Topics") or ():
            probes = [{"Partition": p["Partition"], "CurrentLeaderEpoch": p["CurrentLeaderEpoch"], "LeaderEpoch": e}
                      for p in self._probed(body, t)
                      for e in (p["CurrentLeaderEpoch"] - 1, p["CurrentLeaderEpoch"])]
            if probes:
                t["Partitions"] = [*t["Partitions"], *probes]
                changed = True
        return changed

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        asked = {t.get("Topic"): t for t in (request or {}).get("Topics") or ()}
        changed = refused = False
        for t in body.get("Topics") or ():
            q = asked.get(t.get("Topic"))
            probed = self._probed(request or {}, q) if q is not None else []
            parts = t.get("Partitions") or []
            mine = len(parts) - 2 * len(probed)
            if not probed or mine < 0:
                continue
            answers, ends = parts[:mine], parts[mine:]
            t["Partitions"] = answers
            changed = True
            unwritten = {p["Partition"] for p, below, at in zip(probed, ends[::2], ends[1::2], strict=True)
                         if not below.get("ErrorCode") and not at.get("ErrorCode")
                         and below["EndOffset"] == at["EndOffset"] >= 0}
            for a in answers:
                if a.get("Partition") in unwritten and not a.get("ErrorCode"):
                    a.update(ErrorCode=UNKNOWN_LEADER_EPOCH, LeaderEpoch=NO_EPOCH, EndOffset=-1)
                    refused = True
        if refused:
            self.take()
        return changed

    def describe(self) -> str:
        return (f"StaleEpochUntilWritten(OffsetForLeaderEpoch v2+ at an epoch with no record: UNKNOWN_LEADER_EPOCH, "
                f"{self.fired} answers edited)")
