"""The record batches a Fetch answer carries: which batch a Fetch from an offset is served, and the
leader epoch each batch is stamped with."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.proxy.batches import batch_spans
from harness.proxy.rules.base import FETCH, Rule, replica_of, requested


@dataclass(eq=False)
class SkipBatchHoldingFetchOffset(Rule):
    """A Fetch (v4+) whose FetchOffset falls inside a record batch, not at its base, is answered
    without that batch, instead of the whole batch for the client to filter: Tansu's Fetch
    (tansu-io/tansu compat/franz-go/FINDINGS.md, "Fetch skips the record batch containing a
    mid-batch offset"), which loses those records, and hangs a consumer inside the last batch."""

    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        topic_key = "TopicId" if version >= 13 else "Topic"
        asked = requested(request or {}, topic_key, "Partition")
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                q = asked.get((t.get(topic_key), p["PartitionIndex"]))
                records = p.get("Records")
                if q is None or not isinstance(records, bytes | bytearray) or not records:
                    continue
                spans = batch_spans(bytes(records))
                if spans and spans[0][0] < q["FetchOffset"] <= spans[0][1]:
                    p["Records"] = bytes(records[spans[0][2]:])
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"SkipBatchHoldingFetchOffset(Fetch v4+, {self.fired} answers edited)"


# Where a v2 batch's PartitionLeaderEpoch sits: after its base offset (8 bytes) and length (4), before the
# magic byte and the CRC, which covers only what follows it, so a stamp changes no checksum.
_EPOCH_AT = slice(12, 16)


@dataclass(eq=False)
class StampBatchEpoch(Rule):
    """Fetch answers (v4+) serve every record batch stamped with a PartitionLeaderEpoch of `from_epoch`
    or above as stamped `epoch`: Inkless's diskless records carry leader epoch 0, so a partition
    switched from classic to diskless holds its classic prefix at higher epochs, then batches at 0
    (aiven/inkless#631: "diskless records are produced with leader epoch 0, so appending them after a
    classic prefix broke epoch-cache monotonicity"); `from_epoch` is the epoch the switch came in.
    Replicas' own Fetches are left alone; consumers' and the harness's reads are not."""

    epoch: int = 0
    from_epoch: int = 1
    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        if replica_of(request or {}) >= 0:
            return False
        stamp = struct.pack(">i", self.epoch)
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                records = p.get("Records")
                if not isinstance(records, bytes | bytearray) or not records:
                    continue
                out, start, stamped = bytearray(records), 0, False
                for _, _, end in batch_spans(bytes(records)):
                    at = slice(start + _EPOCH_AT.start, start + _EPOCH_AT.stop)
                    if int.from_bytes(out[at], "big", signed=True) >= self.from_epoch and out[at] != stamp:
                        out[at] = stamp
                        stamped = True
                    start = end
                if stamped:
                    p["Records"] = bytes(out)
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return (f"StampBatchEpoch(Fetch v4+ batches of epoch {self.from_epoch} and above stamped {self.epoch}, "
                f"{self.fired} answers edited)")
