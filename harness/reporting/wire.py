"""Wire evidence: every raw-protocol exchange of a check, decoded, kept as `evidence/<check>.wire.json`.

The pytest plugin records each check (`recording(item)`: RawClient's recorder hook, see
harness.protocol.client) and `harness.reporting.results` writes the record for a check that did not
pass, beside its text evidence. The file is meant to be read: fields by their spec names, error
codes named, UUIDs in Kafka's base64 form, bytes as hex, record blobs summarized batch by batch.
What could be huge is cut, saying so: the middle exchanges of a chatty check, long arrays, long
byte strings, the records beyond the first batches; an answer repeated by a polled broker is shown once.
"""

from __future__ import annotations

import dataclasses
import json
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness import attach as attach_mod
from harness.protocol.client import Exchange, RawClient, set_recorder
from harness.protocol.codec import UNKNOWN_TAGS
from harness.protocol.errors import error_name
from harness.protocol.exceptions import ProtocolError
from harness.protocol.records import RecordBatch, WireRecord, parse_batches
from harness.protocol.spec import FieldSpec, StructSpec
from harness.protocol.types import kafka_uuid_str

# Exchanges kept of one check: the first ones (the scene being built) and the last ones (what came
# just before the failure); a wait that polls a broker for 30 s would otherwise push out the scene.
FIRST_EXCHANGES = 50
LAST_EXCHANGES = 150
MAX_ARRAY = 200  # elements shown of one array (Metadata of a long-lived cluster lists every topic)
MAX_BYTES = 128  # bytes shown of one bytes field, record key or value
MAX_RECORDS_PARSED = 1024 * 1024  # bytes of one records blob parsed into batches
MAX_BATCHES = 20
MAX_RECORDS = 5  # records shown of each batch

RECORDER_KEY = pytest.StashKey["WireRecorder"]()
_BATCH_HEAD = struct.Struct(">qi")  # a record batch starts with its base offset and the length of the rest


@dataclass(frozen=True)
class Recorded:
    """One exchange as the recorder saw it."""

    ended: float  # wall clock (time.time()) when it completed or failed
    broker: str  # host:port
    exchange: Exchange
    error: str | None  # "ExceptionType: message" when the exchange did not complete


class WireRecorder:
    """The exchanges of one check: the first `first` and the last `last`, and how many there were in all."""

    def __init__(self, first: int = FIRST_EXCHANGES, last: int = LAST_EXCHANGES) -> None:
        self._first: list[Recorded] = []
        self._first_limit = first
        self._last: deque[Recorded] = deque(maxlen=last)
        self._lock = threading.Lock()  # exchanges may come from a scenario's helper threads
        self.total = 0
        self.apis: set[tuple[str, int]] = set()  # every (API, version) exchanged, all of them

    def __call__(self, client: RawClient, ex: Exchange, error: BaseException | None) -> None:
        """RawClient's hook: keep the exchange itself; it is decoded to JSON only if the check fails."""
        seen = Recorded(time.time(), f"{client.host}:{client.port}", ex,
                        None if error is None else f"{type(error).__name__}: {error}")
        with self._lock:
            self.apis.add((ex.api.name, ex.version))
            if len(self._first) < self._first_limit:
                self._first.append(seen)
            else:
                self._last.append(seen)
            self.total += 1

    @property
    def exchanges(self) -> list[Recorded]:
        return [r for _, r in self.numbered()]

    def numbered(self) -> list[tuple[int, Recorded]]:
        """The kept exchanges with their place (from 1) among all the check made."""
        with self._lock:
            first, last, total = list(self._first), list(self._last), self.total
        return [*enumerate(first, 1), *enumerate(last, total - len(last) + 1)]

    def to_json(self, nodeid: str) -> dict[str, Any]:
        kept = self.numbered()
        total = kept[-1][0] if kept else 0
        out: dict[str, Any] = {"nodeid": nodeid, "exchanges_total": total, "exchanges_shown": len(kept)}
        if total > len(kept):
            first = self._first_limit
            out["note"] = (f"exchanges {first + 1} to {total - (len(kept) - first)} are left out; "
                           f"the first {first} and the last {len(kept) - first} are shown")
        if not total:
            out["note"] = ("the check made no raw-protocol request (its clients were confluent-kafka or Java); "
                           "see the text evidence")
        out["exchanges"] = []
        # A broker polled in a loop answers the same again and again: each answer is shown once.
        answered: dict[tuple[str, str, int, str], int] = {}
        for seq, r in kept:
            ex = exchange_json(r, seq)
            if isinstance(ex.get("response"), dict):
                key = (r.broker, r.exchange.api.name, r.exchange.version, json.dumps(ex["response"], sort_keys=True))
                if key in answered:
                    ex["response"] = f"the same as exchange {answered[key]}'s"
                else:
                    answered[key] = seq
            out["exchanges"].append(ex)
        return out

    def write(self, path: Path, nodeid: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(nodeid), indent=1, ensure_ascii=False))
        return path


@contextmanager
def recording(item: pytest.Item) -> Iterator[WireRecorder]:
    """Record every RawClient exchange while a check runs (setup, call and teardown), in `item.stash`
    for the results to write; the recorder is dropped afterwards (items live as long as the session)."""
    recorder = WireRecorder()
    item.stash[RECORDER_KEY] = recorder
    previous = set_recorder(recorder)
    try:
        yield recorder
    finally:
        set_recorder(previous)
        del item.stash[RECORDER_KEY]


def recorder_of(item: pytest.Item) -> WireRecorder | None:
    return item.stash.get(RECORDER_KEY, None)


def attach(path: Path) -> None:
    """Attach a wire evidence file to the check's Allure result: as a text to read, and as the JSON."""
    data = json.loads(path.read_text())
    attach_mod.text(f"wire exchanges, readable ({data.get('exchanges_shown', 0)} of "
                    f"{data.get('exchanges_total', 0)})", readable(data))
    attach_mod.file(path, "wire exchanges (decoded JSON)", "json")


def readable(data: Mapping[str, Any], width: int = 1500) -> str:
    """The exchanges of a wire evidence file as a text to read: first one line each (who was asked,
    which API, and the errors its answer carries), then one block each with what was asked and what
    was answered, every error code named (NOT_LEADER_OR_FOLLOWER(6), not 6) and every broker address
    that a Metadata answer tied to a node id shown as that broker ("broker 2 (127.0.0.1:40123)")."""
    exchanges = list(data.get("exchanges", []))
    brokers = _broker_names(exchanges)
    lines = [f"{data.get('nodeid', '')}: {data.get('exchanges_shown', 0)} of {data.get('exchanges_total', 0)} "
             "raw-protocol exchanges"]
    if data.get("note"):
        lines.append(str(data["note"]))
    if exchanges:
        lines += ["", "in short (errors each answer carries, NONE left out):"]
        lines += [f"  #{ex.get('seq'):<4} {brokers.get(ex.get('broker'), ex.get('broker', '')):<30} "
                  f"{ex.get('api')} v{ex.get('version')}: {_outcome(ex)}" for ex in exchanges]
    for ex in exchanges:
        lines += ["", f"#{ex.get('seq')} {ex.get('time', '')} {brokers.get(ex.get('broker'), ex.get('broker', ''))} "
                      f"{ex.get('api')} v{ex.get('version')} ({ex.get('elapsed_ms')} ms)",
                  f"  asked:    {_compact(ex.get('request', ex.get('request_frame')), width)}"]
        if ex.get("error"):
            lines.append(f"  failed:   {ex['error']}")
        else:
            lines.append(f"  answered: {_compact(_named(ex.get('response', ex.get('response_frame'))), width)}")
    return "\n".join(lines)


def _broker_names(exchanges: list[dict[str, Any]]) -> dict[str, str]:
    """host:port -> "broker N (host:port)", from the Brokers of every Metadata answer among `exchanges`."""
    names: dict[str, str] = {}
    for ex in exchanges:
        answer = ex.get("response")
        for b in answer.get("Brokers", []) if isinstance(answer, dict) else []:
            if isinstance(b, dict) and {"NodeId", "Host", "Port"} <= b.keys():
                address = f"{b['Host']}:{b['Port']}"
                names[address] = f"broker {b['NodeId']} ({address})"
    return names


def _outcome(ex: Mapping[str, Any]) -> str:
    """What an exchange ended with, in a few words: the transport error, or the named error codes of
    its answer with how often each occurs ("UNKNOWN_LEADER_EPOCH(74) x2"), or "no error"."""
    if ex.get("error"):
        return f"failed: {ex['error']}"
    answer = ex.get("response")
    if isinstance(answer, str):
        return answer  # "the same as exchange N's"
    if answer is None:
        return str(ex.get("note", "no answer decoded"))
    counts: dict[str, int] = {}

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k.endswith("ErrorCode") and isinstance(v, int) and v:
                    named = f"{error_name(v)}({v})"
                    counts[named] = counts.get(named, 0) + 1
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(answer)
    return ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts.items()) or "no error"


def _named(node: object) -> object:
    if isinstance(node, dict):
        # The JSON's "ErrorCode (name)" twin is dropped: the code itself is shown with its name.
        return {k: (f"{error_name(v)}({v})" if k.endswith("ErrorCode") and isinstance(v, int) else _named(v))
                for k, v in node.items() if not k.endswith("ErrorCode (name)")}
    if isinstance(node, list):
        return [_named(v) for v in node]
    return node


def _compact(value: object, width: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= width else text[: width - 20] + f" ... ({len(text)} chars)"


# --- decoding to JSON -------------------------------------------------------------------------


def exchange_json(r: Recorded, seq: int) -> dict[str, Any]:
    ex = r.exchange
    started = datetime.fromtimestamp(r.ended - ex.elapsed, UTC)
    out: dict[str, Any] = {
        "seq": seq,
        "time": started.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "elapsed_ms": round(ex.elapsed * 1000, 1),
        "broker": r.broker,
        "api": ex.api.name,
        "api_key": ex.api.key,
        "version": ex.version,
        "correlation_id": ex.correlation_id,
    }
    if ex.request:
        out["request"] = _struct(ex.api.request.struct, ex.request)
    else:  # a hand-made body (send_raw), or one with no fields: the frame is the evidence
        out["request_frame"] = hex_text(ex.request_bytes, limit=512)
    if ex.response:
        out["response"] = _struct(ex.api.response.struct, ex.response)
    elif ex.response_bytes:  # not decoded: sent raw, or the decoder refused it
        out["response_frame"] = hex_text(ex.response_bytes, limit=512)
    elif r.error is None:
        out["response"] = None
        out["note"] = "no response expected (Produce with acks=0)"
    out["response_bytes"] = len(ex.response_bytes)
    out["error"] = r.error
    return out


def hex_text(raw: bytes | bytearray | memoryview, limit: int = MAX_BYTES) -> str:
    """Bytes as hex, cut at `limit` bytes: "0x0a0b... (4096 bytes)"."""
    data = bytes(raw[:limit])
    return f"0x{data.hex()}" + (f"... ({len(raw)} bytes)" if len(raw) > limit else "")


def _struct(s: StructSpec | None, value: Any) -> Any:
    if not isinstance(value, Mapping):
        return plain(value)
    fields = {f.name: f for f in s.fields} if s is not None else {}
    out: dict[str, Any] = {}
    for key, v in value.items():
        if key == UNKNOWN_TAGS:
            out["unknown tagged fields"] = {str(tag): hex_text(raw) for tag, raw in sorted(v.items())}
            continue
        f = fields.get(key)
        out[str(key)] = plain(v) if f is None else _field(f, v)
        if f is not None and key.endswith("ErrorCode") and isinstance(v, int) and v:
            out[f"{key} (name)"] = error_name(v)
    return out


def _field(f: FieldSpec, v: Any) -> Any:
    if v is None:
        return None
    t = f.type
    if t.text == "records":
        return records_json(v)
    if t.is_array:
        return _capped([_struct(f.struct, item) if t.is_struct else plain(item) for item in v[:MAX_ARRAY]], len(v))
    if t.is_struct:
        return _struct(f.struct, v)
    return plain(v)


def _capped(shown: list[Any], total: int) -> list[Any]:
    if total > len(shown):
        shown.append(f"... {total - len(shown)} more (of {total})")
    return shown


def plain(v: Any) -> Any:
    """Any decoded value as JSON: bytes as hex, UUIDs as Kafka prints them, dataclasses as objects."""
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, bytes | bytearray | memoryview):
        return hex_text(v)
    if isinstance(v, uuid.UUID):
        return f"{kafka_uuid_str(v)} ({v})"
    if isinstance(v, RecordBatch):
        return _batch(v)
    if isinstance(v, WireRecord):
        return _record(v)
    if isinstance(v, Mapping):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple | set | frozenset):
        items = list(v)
        return _capped([plain(x) for x in items[:MAX_ARRAY]], len(items))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    return repr(v)


def records_json(v: Any) -> Any:
    """A records blob (or batches already parsed) as its first batches and their first records."""
    if v is None:
        return None
    out: dict[str, Any] = {}
    if isinstance(v, list):
        batches, count = v, len(v)
    else:
        raw = bytes(v[:MAX_RECORDS_PARSED])
        out["bytes"] = len(v)
        try:
            batches = parse_batches(raw, verify_crc=False)
        except ProtocolError as e:
            return {**out, "unparsed": str(e), "hex": hex_text(raw)}
        count = _count_batches(v)
        if count > len(batches):
            out["note"] = f"only the batches in the first {MAX_RECORDS_PARSED} bytes were parsed"
    out["batches"] = count
    out["shown"] = _capped([_batch(b) for b in batches[:MAX_BATCHES]], count)
    return out


def _count_batches(blob: bytes | bytearray | memoryview) -> int:
    """Whole batches in a blob, from their length fields alone (cheap however big the blob is)."""
    count, pos, n = 0, 0, len(blob)
    while pos + _BATCH_HEAD.size <= n:
        _base_offset, length = _BATCH_HEAD.unpack_from(blob, pos)
        pos += _BATCH_HEAD.size + length
        if length < 0 or pos > n:
            break
        count += 1
    return count


def _batch(b: RecordBatch) -> dict[str, Any]:
    return {
        "base_offset": b.base_offset,
        "last_offset": b.last_offset,
        "partition_leader_epoch": b.partition_leader_epoch,
        "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch,
        "base_sequence": b.base_sequence,
        "transactional": b.is_transactional,
        "control": b.control_type() if b.is_control else None,
        "compression": b.compression,
        "crc_valid": b.crc_valid,
        "records": len(b.records),
        "first_records": _capped([_record(r) for r in b.records[:MAX_RECORDS]], len(b.records)),
    }


def _record(r: WireRecord) -> dict[str, Any]:
    return {
        "offset": r.offset,
        "timestamp": r.timestamp,
        "key": None if r.key is None else hex_text(r.key),
        "value": None if r.value is None else hex_text(r.value),
        "headers": [[k, None if v is None else hex_text(v)] for k, v in r.headers],
    }
