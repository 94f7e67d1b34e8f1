"""Rules that make a broker serve a log other than the one it acknowledged: the faults behind Jepsen's
anomaly classes of Kafka histories (harness.integrity.anomaly_checks), each made by one edit of a
Fetch answer (or request), so that a real client's history shows it to the anomaly checker.

They act on every partition of every matching Fetch answer, for as long as they are in force (a
scene puts one topic behind its own proxy). Record batches are re-encoded where a record changes
(length and CRC-32C recomputed: a client that checks CRCs sees a well-formed batch); batches must
be uncompressed, which the scenes' producers make them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import crc32c

from harness.protocol.codec import encode
from harness.protocol.records import COMPRESSION_NONE, RecordBatch, encode_batches, parse_batches
from harness.protocol.spec import ApiSpec
from harness.proxy.frames import request_body
from harness.proxy.rules import FETCH, HeldRequest, Rule

PRODUCE = 0
OFFSET_OUT_OF_RANGE = 1
READ_UNCOMMITTED = 0
READ_COMMITTED = 1


def _fetch_partitions(request: dict[str, Any] | None, body: dict[str, Any],
                      version: int) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each answered partition with the request's partition it answers (None where not found)."""
    topic_key = "TopicId" if version >= 13 else "Topic"
    asked = {(t.get(topic_key), p.get("Partition")): p
             for t in (request or {}).get("Topics") or () for p in t.get("Partitions") or ()}
    return [(p, asked.get((t.get(topic_key), p["PartitionIndex"])))
            for t in body.get("Responses") or () for p in t.get("Partitions") or ()]


def _batches(records: Any) -> list[RecordBatch]:
    if not isinstance(records, bytes | bytearray) or not records:
        return []
    batches = parse_batches(bytes(records))
    if any(b.attributes & 0x07 != COMPRESSION_NONE for b in batches):
        raise ValueError("a record fault needs uncompressed batches (compression.type=none)")
    return batches


@dataclass(eq=False)
class _FetchAnswerEdit(Rule):
    """Base of the rules that edit Fetch answers v4+ (the record batch format v2 with its last
    stable offset): each needs the decoded answer of every such Fetch."""

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4


@dataclass(eq=False)
class DropRecords(_FetchAnswerEdit):
    """Fetch answers (v4+) served without the records at `offsets`, as a log that lost them after
    acknowledging them: a batch keeps its other records, one left empty is left out. `answered`
    lists (FetchOffset, offsets left out) for each answer it edited."""

    offsets: frozenset[int] = frozenset()
    needs_request: bool = field(default=True, init=False, repr=False)
    answered: list[tuple[int, tuple[int, ...]]] = field(default_factory=list, init=False, repr=False)

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        changed = False
        for p, q in _fetch_partitions(request, body, version):
            batches = _batches(p.get("Records"))
            gone = tuple(r.offset for b in batches for r in b.records if r.offset in self.offsets)
            if not gone:
                continue
            kept = []
            for b in batches:
                b.records = [r for r in b.records if r.offset not in self.offsets]
                if b.records:
                    kept.append(b)
            p["Records"] = encode_batches(kept)
            at = -1 if q is None else q["FetchOffset"]
            with self._lock:
                self.answered.append((at, tuple(int(o) for o in gone if o is not None)))
            changed = True
        return changed and self.take()

    def left_out_at(self, fetch_offset: int) -> bool:
        """Whether an answer to a Fetch at `fetch_offset` was served without a record."""
        with self._lock:
            return any(at == fetch_offset for at, _ in self.answered)

    def describe(self) -> str:
        return f"DropRecords(Fetch v4+ without offsets {sorted(self.offsets)}, {self.fired} answers edited)"


@dataclass(eq=False)
class ReplaceValue(_FetchAnswerEdit):
    """Fetch answers (v4+) serve the record at `offset` with `value`, as a replica whose log diverged
    there (a truncation nobody detected) would."""

    offset: int = 0
    value: bytes = b""

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        changed = False
        for p, _ in _fetch_partitions(request, body, version):
            batches = _batches(p.get("Records"))
            hit = [r for b in batches for r in b.records if r.offset == self.offset]
            if not hit:
                continue
            for r in hit:
                r.value = self.value
            p["Records"] = encode_batches(batches)
            changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"ReplaceValue(Fetch v4+ serves offset {self.offset} as {self.value!r}, {self.fired} answers edited)"


@dataclass(eq=False)
class OutOfRangeFrom(_FetchAnswerEdit):
    """The first `count` Fetch partitions (v4+) asked at FetchOffset `offset` or beyond are answered
    OFFSET_OUT_OF_RANGE with no records, as a broker that took a valid position for one outside its
    log: a consumer resets (auto.offset.reset) and, reset to the earliest offset, reads again what it
    read before."""

    offset: int = 0
    count: int | None = 1
    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return super().acts_on_response(api_key, version) and not self.spent

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        changed = False
        for p, q in _fetch_partitions(request, body, version):
            if q is None or q["FetchOffset"] < self.offset or p.get("ErrorCode") or not self.take():
                continue
            p.update(ErrorCode=OFFSET_OUT_OF_RANGE, Records=b"")
            if "AbortedTransactions" in p:
                p["AbortedTransactions"] = None
            changed = True
        return changed

    def describe(self) -> str:
        return f"OutOfRangeFrom(Fetch v4+ at offset {self.offset} or beyond, {self.scope()})"


@dataclass(eq=False)
class ServeUncommitted(_FetchAnswerEdit):
    """A read_committed Fetch (v4+, IsolationLevel 1) is served as a read_uncommitted one: the broker
    sees IsolationLevel 0, so it answers records up to the high watermark, those of open
    transactions included, and the answer's LastStableOffset is set to the high watermark, so that a
    read_committed consumer takes them as committed. What a broker without a last stable offset
    does (the KIP-98 read_committed promise broken)."""

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if body.get("IsolationLevel") != READ_COMMITTED:
            return False
        body["IsolationLevel"] = READ_UNCOMMITTED
        return self.take()

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                if p.get("ErrorCode") or p.get("HighWatermark", -1) < 0:
                    continue
                if p.get("LastStableOffset") != p["HighWatermark"]:
                    p["LastStableOffset"] = p["HighWatermark"]
                    changed = True
        return changed

    def describe(self) -> str:
        return f"ServeUncommitted(read_committed Fetch v4+ served read_uncommitted, {self.fired} requests edited)"


@dataclass(eq=False)
class RepeatBatch(_FetchAnswerEdit):
    """Fetch answers (v4+) serve the batch holding `offset` twice in a row, as a broker whose read of
    its log returned one segment's batch again: a client that takes each record of an answer in
    order hands the record at `offset` out again, right after itself."""

    offset: int = 0

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        changed = False
        for p, _ in _fetch_partitions(request, body, version):
            batches = _batches(p.get("Records"))
            at = next((i for i, b in enumerate(batches) if b.base_offset <= self.offset <= b.last_offset), None)
            if at is None:
                continue
            p["Records"] = encode_batches([*batches[:at + 1], batches[at], *batches[at + 1:]])
            changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"RepeatBatch(Fetch v4+ serves the batch of offset {self.offset} twice, {self.fired} answers edited)"


MISDIRECTED = 1_000_000  # a partition index no topic of a scene has


@dataclass(eq=False)
class MisdirectProduce(Rule):
    """The first `count` Produce requests are sent on to the broker for a partition that does not
    exist (so nothing is appended, and the broker refuses them with a retriable error), and the
    answer is given back for the partition the client asked for: a producer that is not idempotent
    sends those records again after the ones it sent meanwhile, which land first."""

    count: int | None = 1

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == PRODUCE and not self.spent

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        parts = [p for t in body.get("TopicData") or () for p in t.get("PartitionData") or ()]
        if not parts or not self.take():
            return False
        for p in parts:
            p["Index"] = MISDIRECTED
        return True

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == PRODUCE

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        parts = [p for t in body.get("Responses") or () for p in t.get("PartitionResponses") or ()
                 if p["Index"] == MISDIRECTED]
        for p in parts:
            p["Index"] = 0
        return bool(parts)

    def describe(self) -> str:
        return f"MisdirectProduce(Produce sent on for partition {MISDIRECTED}, {self.scope()})"



# A v2 batch's base sequence, and its CRC-32C over the bytes from its attributes on.
_SEQUENCE_AT, _CRC_AT, _CRC_FROM = 53, 17, 21


@dataclass(frozen=True)
class ProducedBatch:
    """The batch a Produce request carries for one partition (Produce v3+ carries exactly one), as
    far as ordering goes: where it goes, whose it is, and its sequence numbers."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int


def _produce_body(api: ApiSpec, request: HeldRequest) -> dict[str, Any]:
    return request_body(api, request.version, request.frame, request.body_start)


def produced_batches(api: ApiSpec, request: HeldRequest) -> list[ProducedBatch]:
    """The batches of a Produce request, one per partition."""
    out = []
    for t in _produce_body(api, request).get("TopicData") or ():
        for p in t.get("PartitionData") or ():
            for b in parse_batches(bytes(p.get("Records") or b""), records=False):
                out.append(ProducedBatch(str(t.get("Name") or t.get("TopicId")), p["Index"], b.producer_id,
                                         b.producer_epoch, b.base_sequence, b.last_offset_delta + 1))
    return out


def with_base_sequence(api: ApiSpec, request: HeldRequest, sequence: int) -> HeldRequest:
    """`request` (one partition, one batch) with its batch's base sequence set to `sequence` and the
    batch's CRC-32C recomputed; every other byte of the batch as the client sent it."""
    body = _produce_body(api, request)
    (p,) = [p for t in body.get("TopicData") or () for p in t.get("PartitionData") or ()]
    batch = bytearray(p["Records"])
    batch[_SEQUENCE_AT:_SEQUENCE_AT + 4] = sequence.to_bytes(4, "big", signed=True)
    batch[_CRC_AT:_CRC_AT + 4] = crc32c.crc32c(bytes(batch[_CRC_FROM:])).to_bytes(4, "big")
    p["Records"] = bytes(batch)
    frame = request.frame[:request.body_start] + encode(api.request, request.version, body)
    return HeldRequest(request.version, request.correlation_id, request.body_start, frame)


@dataclass(eq=False)
class HoldProduce(Rule):
    """The first Produce request is held back until the next one arrives on its connection (the
    client sent it without waiting for the first's answer); then both go on to the broker.

    - `swap` False: in the order sent. The first one's answer can then reach the client only after
      the second request reached the broker: what a scene needs to be sure of, without a timer.
    - `swap` True: the second first, as a broker that appends pipelined requests out of order. Where
      both carry one idempotent batch of one producer for one partition, their base sequences are
      exchanged (the second takes the first's, the first follows it), so that the broker, which
      checks sequences, appends them in that order and acknowledges each at its true offset. Each
      answer goes back to the client in the order it asked (harness.proxy.connection): the first
      send is acknowledged above the second."""

    count: int | None = 1
    swap: bool = False
    renumbered: bool = field(default=False, init=False)

    def holds(self, api_key: int, version: int) -> bool:
        return api_key == PRODUCE and version >= 3 and not self.spent

    def release(self, api: ApiSpec, held: list[HeldRequest]) -> list[HeldRequest] | None:
        if len(held) < 2:
            return None
        if not self.take():
            return held
        first, second, *rest = held
        if not self.swap:
            return held
        a, b = produced_batches(api, first), produced_batches(api, second)
        if (len(a) == len(b) == 1 and a[0].base_sequence >= 0 and b[0].base_sequence == a[0].base_sequence + a[0].count
                and (a[0].topic, a[0].partition, a[0].producer_id, a[0].producer_epoch)
                == (b[0].topic, b[0].partition, b[0].producer_id, b[0].producer_epoch)):
            second = with_base_sequence(api, second, a[0].base_sequence)
            first = with_base_sequence(api, first, a[0].base_sequence + b[0].count)
            self.renumbered = True
        return [second, first, *rest]

    def describe(self) -> str:
        how = "the second sent on first" + (", sequences exchanged" if self.renumbered else "") if self.swap \
            else "both sent on in order"
        return f"HoldProduce(a Produce held until the next, {how}, {self.scope()})"
