"""Fetch answers and transactions (KIP-98): the aborted transactions a consumer is told of (at which
isolation level, in which order), and where a read_committed answer stops (the last stable offset)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.protocol.records import parse_batch
from harness.protocol.spec import ApiSpec
from harness.proxy.batches import batch_spans
from harness.proxy.rules.base import FETCH, READ_COMMITTED, READ_UNCOMMITTED, Rule, replica_of


@dataclass(eq=False)
class HideAbortedTransactions(Rule):
    """A read_committed Fetch (v4+, IsolationLevel 1) is answered with only the first `keep` entries
    of each partition's AbortedTransactions, so a consumer takes the records of the other aborted
    transactions for committed ones. Tansu answered none (tansu-io/tansu compat/franz-go/FINDINGS.md,
    "Aborted transactional records are visible to read_committed consumers"); AutoMQ collected the
    aborted-transaction index of one segment only (AutoMQ/automq#754)."""

    keep: int = 0
    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        if (request or {}).get("IsolationLevel") != READ_COMMITTED:
            return False
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                aborted = p.get("AbortedTransactions") or []
                if len(aborted) > self.keep:
                    p["AbortedTransactions"] = aborted[:self.keep]
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"HideAbortedTransactions(read_committed Fetch keeps {self.keep} aborted, {self.fired} answers edited)"


# How far past the last stable offset a ReadPastStableOffset answer reaches, as its describe() says it.
UPTO = {"batch-at-stable-offset": "through the batch holding the LastStableOffset",
        "high-watermark": "up to the high watermark"}


def aborted_in(records: bytes, spans: list[tuple[int, int, int]]) -> list[dict[str, int]]:
    """The transactions the whole batches of `records` (their `spans`, harness.proxy.batches) show
    aborted, as a read_committed answer lists them (KIP-98): each producer id with the offset of its
    first batch after its previous marker, for every ABORT marker among them, in offset order."""
    opened: dict[int, int] = {}
    aborted = []
    start = 0
    for base, _, end in spans:
        header = parse_batch(records, start, verify_crc=False, records=False)
        if header.is_control:
            # A marker batch holds one uncompressed control record: read it for its type.
            marker = parse_batch(records, start, verify_crc=False).control_type()
            first = opened.pop(header.producer_id, None)
            if marker == "ABORT" and first is not None:
                aborted.append({"ProducerId": header.producer_id, "FirstOffset": first})
        elif header.is_transactional:
            opened.setdefault(header.producer_id, base)
        start = end
    return sorted(aborted, key=lambda t: t["FirstOffset"])


@dataclass(eq=False)
class ReadPastStableOffset(Rule):
    """A read_committed Fetch (v4+) is served past its last stable offset, the records of a transaction
    still open included, as by a broker whose read bound is wrong: `upto="batch-at-stable-offset"`
    serves the batches up to the one holding the LastStableOffset (Redpanda took the supremum for the
    maximum, an inclusive bound one past it: redpanda-data/redpanda#3036); `upto="high-watermark"`
    every batch below the high watermark (KoP, streamnative/kop#1856: "the consumer can read unstable
    messages in read_committed mode"). The answer keeps its LastStableOffset, which those brokers
    reported right.

    The broker is asked at read_uncommitted, so that it answers the batches past the stable offset
    (Apache Kafka reports the LastStableOffset at either level); the answer then lists the aborted
    transactions whose ABORT marker it carries (`aborted_in`). A transaction whose marker lies past a
    size-capped answer goes unlisted, where Kafka's index would list it: judge a Fetch that reads
    the whole partition. Replicas' and other read_uncommitted Fetches are left alone."""

    upto: str = "batch-at-stable-offset"
    needs_request: bool = field(default=True, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.upto not in UPTO:
            raise ValueError(f"ReadPastStableOffset.upto must be one of {', '.join(UPTO)}, not {self.upto!r}")

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if body.get("IsolationLevel") != READ_COMMITTED or replica_of(body) >= 0:
            return False
        body["IsolationLevel"] = READ_UNCOMMITTED
        return True

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        # `request` is what the client sent (the recording's), read_committed before the edit above.
        request = request or {}
        if request.get("IsolationLevel") != READ_COMMITTED or replica_of(request) >= 0:
            return False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                records, stable = p.get("Records"), p.get("LastStableOffset", -1)
                if p.get("ErrorCode") or stable < 0:
                    continue
                records = bytes(records) if isinstance(records, bytes | bytearray) else b""
                spans = batch_spans(records)
                if self.upto == "batch-at-stable-offset":
                    spans = [s for s in spans if s[0] <= stable]
                served = records[:spans[-1][2]] if spans else b""
                p["Records"] = served
                p["AbortedTransactions"] = aborted_in(served, spans)
        return self.take()

    def describe(self) -> str:
        return f"ReadPastStableOffset(read_committed Fetch v4+ served {UPTO[self.upto]}, {self.fired} answers edited)"


@dataclass(eq=False)
class AbortedTransactionsAtReadUncommitted(Rule):
    """A consumer's read_uncommitted Fetch (v4+, IsolationLevel 0) is answered with the aborted
    transactions of its range, as a read_committed answer lists them: Redpanda sent them at either
    level until redpanda-data/redpanda#18852 ("do not return aborted txs for read uncommitted
    requests"; Apache Kafka lists none there). The Fetch schema has the field at every level and
    KIP-98 does not say what a read_uncommitted answer holds, so no broker check may fail it; what
    broke was a client that filtered read_uncommitted records by the list (franz-go before v1.17.1,
    twmb/franz-go#758: "causes records to be skipped").

    The list is the transactions whose ABORT marker the answer carries (`aborted_in`), each from its
    first batch there; the records are served as the broker answered them. Replicas' Fetches and
    read_committed ones are left alone, and so is an answer that already lists some."""

    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        request = request or {}
        if request.get("IsolationLevel") != READ_UNCOMMITTED or replica_of(request) >= 0:
            return False
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                records = p.get("Records")
                if p.get("ErrorCode") or p.get("AbortedTransactions") or not isinstance(records, bytes | bytearray):
                    continue
                listed = aborted_in(bytes(records), batch_spans(bytes(records)))
                if listed:
                    p["AbortedTransactions"] = listed
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return (f"AbortedTransactionsAtReadUncommitted(read_uncommitted Fetch v4+ lists its aborted transactions, "
                f"{self.fired} answers edited)")


@dataclass(eq=False)
class AbortedTransactionsNewestFirst(Rule):
    """A read_committed Fetch (v4+) lists its aborted transactions newest first (descending
    FirstOffset), as Redpanda did when a partition's newest aborted ranges were still in memory and
    older ones in its on-disk snapshot: it listed the in-memory ones ahead (franz-go v1.21.4
    CHANGELOG: "a broker that returns a partition's aborted-transaction list out of offset order";
    twmb/franz-go b9b50cce). Neither KIP-98 nor the Fetch schema orders the list; the Java client,
    librdkafka and Sarama sort it, franz-go before v1.21.4 took each producer's first entry for its
    lowest and handed a read_committed consumer the records of the aborted transactions below it.
    An answer listing fewer than two is left as it is."""

    needs_request: bool = field(default=True, init=False, repr=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == FETCH and version >= 4

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        request = request or {}
        if request.get("IsolationLevel") != READ_COMMITTED or replica_of(request) >= 0:
            return False
        changed = False
        for t in body.get("Responses") or ():
            for p in t.get("Partitions") or ():
                aborted = p.get("AbortedTransactions") or []
                newest_first = sorted(aborted, key=lambda a: a["FirstOffset"], reverse=True)
                if len(aborted) > 1 and newest_first != aborted:
                    p["AbortedTransactions"] = newest_first
                    changed = True
        return changed and self.take()

    def describe(self) -> str:
        return (f"AbortedTransactionsNewestFirst(read_committed Fetch v4+ lists its aborted transactions newest "
                f"first, {self.fired} answers edited)")
