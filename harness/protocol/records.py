"""RecordBatch v2 (magic 2), the only on-disk and on-wire record format of Kafka 4.x.

Layout (KIP-98), all big-endian:

    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 | crc uint32 |
    attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 |
    producerId int64 | producerEpoch int16 | baseSequence int32 | recordCount int32 | records...

The CRC is CRC-32C over everything from `attributes` to the end of the batch, so a broker can
stamp partitionLeaderEpoch (which is outside it) without recomputing it. Records inside use
zig-zag varints; with compression, everything after recordCount is one compressed stream.
"""

from __future__ import annotations

import gzip
import importlib
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import crc32c

from harness.protocol.exceptions import CompressionUnavailable, CorruptRecordError, DecodeError, EncodeError
from harness.protocol.types import encode_varint, encode_varlong, read_uvarlong, uvarint_tail

MAGIC = 2
HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
_LENGTH_OFFSET = 8
_CRC_OFFSET = 17
_ATTRIBUTES_OFFSET = 21
_AFTER_LENGTH = 12  # baseOffset + batchLength: batchLength counts the bytes after these

COMPRESSION_NONE, COMPRESSION_GZIP, COMPRESSION_SNAPPY, COMPRESSION_LZ4, COMPRESSION_ZSTD = range(5)
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
COMPRESSION_CODES = {name: code for code, name in COMPRESSION_NAMES.items()}

ATTR_COMPRESSION_MASK = 0x07
ATTR_TIMESTAMP_TYPE = 0x08  # 0 = CreateTime, 1 = LogAppendTime
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

# ControlRecordType in org.apache.kafka.common.record; the key is (version int16, type int16).
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
CONTROL_CODES = {name: code for code, name in CONTROL_TYPES.items()}
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_MARKER = struct.Struct(">hi")


@dataclass
class WireRecord:
    """One record. `offset` and `timestamp` are absolute; None on encode means "next in batch"."""

    value: bytes | None
    key: bytes | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int | None = None
    offset: int | None = None
    attributes: int = 0

    def control_type(self) -> str | None:
        """COMMIT, ABORT, ... for the record of a control batch (None if the key is not one)."""
        if self.key is None or len(self.key) < 4:
            return None
        _version, code = _CONTROL_KEY.unpack_from(self.key, 0)
        return CONTROL_TYPES.get(code, f"UNKNOWN({code})")


@dataclass
class RecordBatch:
    base_offset: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: list[WireRecord]
    batch_length: int = 0
    crc_valid: bool = True

    @property
    def compression(self) -> str:
        code = self.attributes & ATTR_COMPRESSION_MASK
        return COMPRESSION_NAMES.get(code, f"unknown({code})")

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.attributes & ATTR_TIMESTAMP_TYPE else "CreateTime"

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & ATTR_DELETE_HORIZON)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def size(self) -> int:
        return _AFTER_LENGTH + self.batch_length

    def control_type(self) -> str | None:
        """COMMIT or ABORT (or another control type) for a control batch, else None."""
        if not self.is_control or not self.records:
            return None
        return self.records[0].control_type()

    def coordinator_epoch(self) -> int | None:
        """The transaction coordinator epoch of a COMMIT/ABORT marker batch."""
        if self.control_type() not in ("COMMIT", "ABORT"):
            return None
        value = self.records[0].value
        if value is None or len(value) < 6:
            return None
        return int(_END_TXN_MARKER.unpack_from(value, 0)[1])

    def encode(self) -> bytes:
        """Re-encode this batch (length and CRC recomputed from the records)."""
        return encode_batch(
            self.records,
            base_offset=self.base_offset,
            partition_leader_epoch=self.partition_leader_epoch,
            attributes=self.attributes,
            base_timestamp=self.base_timestamp,
            max_timestamp=self.max_timestamp,
            last_offset_delta=self.last_offset_delta,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
        )


# --- compression -----------------------------------------------------------------------------


def _import(*names: str) -> Any:
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _unavailable(codec: str, package: str) -> CompressionUnavailable:
    return CompressionUnavailable(
        f"record batch uses {codec} compression, but no Python module for it is installed "
        f"(pip install {package}); only gzip and none work without extra packages"
    )


_XERIAL_MAGIC = b"\x82SNAPPY\x00"


def decompress(code: int, data: bytes) -> bytes:
    if code == COMPRESSION_GZIP:
        return gzip.decompress(data)
    if code == COMPRESSION_SNAPPY:
        snappy = _import("snappy", "cramjam")
        if snappy is None:
            raise _unavailable("snappy", "python-snappy")
        raw = snappy.decompress if hasattr(snappy, "decompress") else snappy.snappy.decompress_raw

        def block(b: bytes) -> bytes:
            return bytes(raw(b))

        # The Java client writes snappy-java's xerial framing: magic, two int32 versions, then
        # (int32 length, block) pairs. Older producers may send a bare block.
        if not data.startswith(_XERIAL_MAGIC):
            return block(data)
        pos, out = 16, []
        while pos < len(data):
            (n,) = struct.unpack_from(">i", data, pos)
            out.append(block(data[pos + 4 : pos + 4 + n]))
            pos += 4 + n
        return b"".join(out)
    if code == COMPRESSION_LZ4:
        lz4 = _import("lz4.frame")
        if lz4 is None:
            raise _unavailable("lz4", "lz4")
        return bytes(lz4.decompress(data))
    if code == COMPRESSION_ZSTD:
        zstd = _import("compression.zstd", "zstandard", "pyzstd")
        if zstd is None:
            raise _unavailable("zstd", "zstandard")
        if zstd.__name__ == "zstandard":
            # The Java client streams its frames, which then carry no content size; only the
            # streaming reader of `zstandard` accepts those.
            with zstd.ZstdDecompressor().stream_reader(data) as reader:
                return bytes(reader.read())
        return bytes(zstd.decompress(data))
    raise DecodeError(f"unknown compression codec {code} in a record batch")


def compress(code: int, data: bytes) -> bytes:
    if code == COMPRESSION_NONE:
        return data
    if code == COMPRESSION_GZIP:
        return gzip.compress(data)
    if code == COMPRESSION_SNAPPY:
        snappy = _import("snappy")
        if snappy is None:
            raise _unavailable("snappy", "python-snappy")
        block = snappy.compress(data)
        return _XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", len(block)) + block
    if code == COMPRESSION_LZ4:
        lz4 = _import("lz4.frame")
        if lz4 is None:
            raise _unavailable("lz4", "lz4")
        return bytes(lz4.compress(data))
    if code == COMPRESSION_ZSTD:
        zstd = _import("compression.zstd", "zstandard", "pyzstd")
        if zstd is None:
            raise _unavailable("zstd", "zstandard")
        if zstd.__name__ == "zstandard":
            return bytes(zstd.ZstdCompressor().compress(data))
        return bytes(zstd.compress(data))  # compression.zstd (3.14+) and pyzstd
    raise EncodeError(f"unknown compression codec {code}")


def available_compressions() -> list[str]:
    """Names of the codecs this Python can both read and write."""
    out = ["none", "gzip"]
    if _import("snappy") is not None:
        out.append("snappy")
    if _import("lz4.frame") is not None:
        out.append("lz4")
    if _import("compression.zstd", "zstandard", "pyzstd") is not None:
        out.append("zstd")
    return out


# --- decoding --------------------------------------------------------------------------------


def _records(buf: bytes, pos: int, count: int, base_offset: int, base_ts: int) -> list[WireRecord]:
    out: list[WireRecord] = []
    append = out.append
    for _ in range(count):
        # Each varint below is read inline for the one-byte case, the common one.
        n = buf[pos]
        pos += 1
        if n > 127:
            n, pos = uvarint_tail(buf, pos, n)
        end = pos + ((n >> 1) ^ -(n & 1))
        attributes = buf[pos]
        pos += 1
        n = buf[pos]
        if n > 127:
            n, pos = read_uvarlong(buf, pos)
        else:
            pos += 1
        ts_delta = (n >> 1) ^ -(n & 1)
        n = buf[pos]
        pos += 1
        if n > 127:
            n, pos = uvarint_tail(buf, pos, n)
        offset_delta = (n >> 1) ^ -(n & 1)
        n = buf[pos]
        pos += 1
        if n > 127:
            n, pos = uvarint_tail(buf, pos, n)
        n = (n >> 1) ^ -(n & 1)
        if n < 0:
            key = None
        else:
            key = buf[pos : pos + n]
            pos += n
        n = buf[pos]
        pos += 1
        if n > 127:
            n, pos = uvarint_tail(buf, pos, n)
        n = (n >> 1) ^ -(n & 1)
        if n < 0:
            value = None
        else:
            value = buf[pos : pos + n]
            pos += n
        n = buf[pos]
        pos += 1
        if n > 127:
            n, pos = uvarint_tail(buf, pos, n)
        headers: list[tuple[str, bytes | None]] = []
        for _ in range((n >> 1) ^ -(n & 1)):
            k, pos = _varbytes(buf, pos)
            v, pos = _varbytes(buf, pos)
            if k is None:
                raise DecodeError("record header with a null key")
            headers.append((k.decode("utf-8"), v))
        if pos != end:
            raise DecodeError(f"record length says it ends at {end}, its fields end at {pos}")
        append(WireRecord(value, key, headers, base_ts + ts_delta, base_offset + offset_delta, attributes))
    if pos > len(buf):
        raise DecodeError("records run past the end of the batch")
    return out


def _varbytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    n = buf[pos]
    pos += 1
    if n > 127:
        n, pos = uvarint_tail(buf, pos, n)
    n = (n >> 1) ^ -(n & 1)
    if n < 0:
        return None, pos
    return buf[pos : pos + n], pos + n


def parse_batch(data: bytes, offset: int = 0, *, verify_crc: bool = True, records: bool = True) -> RecordBatch:
    """Parse the one batch that starts at offset."""
    buf = data if type(data) is bytes else bytes(data)
    if len(buf) - offset < HEADER_SIZE:
        raise DecodeError(f"record batch header needs {HEADER_SIZE} bytes, {len(buf) - offset} left")
    (
        base_offset,
        batch_length,
        epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    ) = HEADER.unpack_from(buf, offset)
    if magic != MAGIC:
        raise DecodeError(
            f"record batch at offset {base_offset} has magic {magic}; only magic 2 (RecordBatch v2) "
            "exists in Kafka 4.x and is supported here"
        )
    end = offset + _AFTER_LENGTH + batch_length
    if batch_length < HEADER_SIZE - _AFTER_LENGTH or end > len(buf):
        raise DecodeError(f"record batch at offset {base_offset} has length {batch_length}, {len(buf) - offset} left")
    actual = crc32c.crc32c(buf[offset + _ATTRIBUTES_OFFSET : end])
    valid = actual == crc
    if verify_crc and not valid:
        raise CorruptRecordError(
            f"record batch at offset {base_offset}: CRC32C {actual:#010x} does not match the stored {crc:#010x}"
        )
    parsed: list[WireRecord] = []
    if records and count > 0:
        code = attributes & ATTR_COMPRESSION_MASK
        if code == COMPRESSION_NONE:
            # Slice so that a record cannot read into the next batch.
            body, pos = buf[offset + HEADER_SIZE : end], 0
        else:
            body, pos = decompress(code, buf[offset + HEADER_SIZE : end]), 0
        try:
            parsed = _records(body, pos, count, base_offset, base_ts)
        except IndexError as e:
            raise DecodeError(f"record batch at offset {base_offset}: records are truncated") from e
    return RecordBatch(
        base_offset,
        epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        parsed,
        batch_length,
        valid,
    )


def parse_batches(
    data: bytes | bytearray | memoryview | None,
    *,
    verify_crc: bool = True,
    records: bool = True,
    allow_partial: bool = True,
) -> list[RecordBatch]:
    """All batches in a records blob (a Fetch response's Records, a Produce request's).

    A fetch may end in a partial batch when it hit its byte limit; it is skipped, as the Java
    consumer does, unless allow_partial is False.
    """
    if data is None:
        return []
    buf = data if type(data) is bytes else bytes(data)
    out: list[RecordBatch] = []
    pos = 0
    n = len(buf)
    while pos < n:
        if n - pos < _AFTER_LENGTH:
            if allow_partial:
                break
            raise DecodeError(f"{n - pos} stray bytes after the last record batch")
        (length,) = struct.unpack_from(">i", buf, pos + _LENGTH_OFFSET)
        if pos + _AFTER_LENGTH + length > n:
            if allow_partial:
                break
            raise DecodeError(f"last record batch is partial: needs {length + _AFTER_LENGTH}, has {n - pos}")
        batch = parse_batch(buf, pos, verify_crc=verify_crc, records=records)
        out.append(batch)
        pos += batch.size
    return out


def count_entries(data: bytes | memoryview | None) -> int:
    """How many entries (record batches, or a down-converted message set's messages) `data` holds.

    Both formats start each entry with offset int64 and length int32, which is all this reads:
    Fetch below v4 (3.x serves it; 4.0 removed it, KIP-896) answers with magic 0 or 1 messages,
    which nothing else here decodes. A partial entry at the end (a Fetch may cut one) is not counted.
    """
    if not data:
        return 0
    buf = data if type(data) is bytes else bytes(data)
    count, pos = 0, 0
    while len(buf) - pos >= 12:
        (length,) = struct.unpack_from(">i", buf, pos + 8)
        if pos + 12 + length > len(buf):
            break
        count += 1
        pos += 12 + length
    return count


def iter_records(data: bytes | None, *, verify_crc: bool = True) -> Iterable[tuple[RecordBatch, WireRecord]]:
    for batch in parse_batches(data, verify_crc=verify_crc):
        for record in batch.records:
            yield batch, record


# --- encoding --------------------------------------------------------------------------------


def _encode_record(r: WireRecord, offset_delta: int, ts_delta: int) -> bytes:
    parts = [bytes([r.attributes & 0xFF]), encode_varlong(ts_delta), encode_varint(offset_delta)]
    for blob in (r.key, r.value):
        if blob is None:
            parts.append(b"\x01")  # zig-zag -1
        else:
            parts.append(encode_varint(len(blob)))
            parts.append(bytes(blob))
    parts.append(encode_varint(len(r.headers)))
    for hk, hv in r.headers:
        raw = hk.encode("utf-8")
        parts.append(encode_varint(len(raw)))
        parts.append(raw)
        if hv is None:
            parts.append(b"\x01")
        else:
            parts.append(encode_varint(len(hv)))
            parts.append(bytes(hv))
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def encode_batch(
    records: Sequence[WireRecord | bytes | tuple[bytes | None, bytes | None]],
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    compression: str | int = "none",
    transactional: bool = False,
    control: bool = False,
    log_append_time: bool = False,
    attributes: int | None = None,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
) -> bytes:
    """One RecordBatch v2. Records may be WireRecord objects, bare values, or (key, value) pairs.

    Offsets and timestamps not set on a WireRecord follow on from base_offset and base_timestamp
    (default: now). `attributes`, when given, overrides the flags built from the keywords.
    """
    recs = [_as_record(r) for r in records]
    now = int(time.time() * 1000)
    if base_timestamp is None:
        stamped = [r.timestamp for r in recs if r.timestamp is not None]
        base_timestamp = min(stamped) if stamped else now
    if attributes is None:
        code = COMPRESSION_CODES[compression] if isinstance(compression, str) else int(compression)
        attributes = code
        if log_append_time:
            attributes |= ATTR_TIMESTAMP_TYPE
        if transactional:
            attributes |= ATTR_TRANSACTIONAL
        if control:
            attributes |= ATTR_CONTROL
    code = attributes & ATTR_COMPRESSION_MASK
    encoded = []
    max_delta = 0
    max_ts = base_timestamp
    for i, r in enumerate(recs):
        offset_delta = i if r.offset is None else r.offset - base_offset
        ts = base_timestamp if r.timestamp is None else r.timestamp
        max_delta = max(max_delta, offset_delta)
        max_ts = max(max_ts, ts)
        encoded.append(_encode_record(r, offset_delta, ts - base_timestamp))
    body = compress(code, b"".join(encoded))
    if last_offset_delta is None:
        last_offset_delta = max_delta
    if max_timestamp is None:
        max_timestamp = max_ts
    after_crc = struct.pack(
        ">hiqqqhii",
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        len(recs),
    )
    crc = crc32c.crc32c(after_crc + body)
    batch_length = HEADER_SIZE - _AFTER_LENGTH + len(body)
    head = struct.pack(">qiibI", base_offset, batch_length, partition_leader_epoch, MAGIC, crc)
    return head + after_crc + body


def encode_batches(batches: Iterable[RecordBatch | bytes]) -> bytes:
    """Concatenate batches (RecordBatch objects are re-encoded) into one records blob."""
    return b"".join(b if isinstance(b, bytes | bytearray) else b.encode() for b in batches)


def control_batch(
    marker: str,
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int = 0,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    timestamp: int | None = None,
) -> bytes:
    """A transaction marker batch (COMMIT or ABORT), as a coordinator writes it."""
    code = CONTROL_CODES[marker.upper()]
    key = _CONTROL_KEY.pack(0, code)
    value = _END_TXN_MARKER.pack(0, coordinator_epoch)
    return encode_batch(
        [WireRecord(value, key, timestamp=timestamp)],
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        transactional=True,
        control=True,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
    )


def _as_record(r: WireRecord | bytes | tuple[bytes | None, bytes | None]) -> WireRecord:
    if isinstance(r, WireRecord):
        return r
    if isinstance(r, bytes | bytearray):
        return WireRecord(bytes(r))
    if isinstance(r, tuple) and len(r) == 2:
        return WireRecord(r[1], r[0])
    raise EncodeError(f"not a record: {r!r} (give WireRecord, bytes, or (key, value))")


def set_partition_leader_epoch(batch: bytes, epoch: int) -> bytes:
    """A copy of an encoded batch with another PartitionLeaderEpoch (outside the CRC, as Kafka does)."""
    return batch[:12] + struct.pack(">i", epoch) + batch[16:]


def describe_log(batches: Sequence[RecordBatch]) -> str:
    """`[0..4]@0 [5..9]@1 ...`: each batch's offsets and epoch, control batches marked."""
    parts = []
    for b in sorted(batches, key=lambda b: b.base_offset):
        mark = f" {b.control_type()}" if b.is_control else ""
        parts.append(f"[{b.base_offset}..{b.last_offset}]@{b.partition_leader_epoch}{mark}")
    return " ".join(parts) or "(empty log)"


def committed_data(batches: Sequence[RecordBatch]) -> list[RecordBatch]:
    """The data batches a read_committed consumer is handed: plain ones, and those of transactions
    whose COMMIT marker is in `batches` (an aborted or still open transaction's are left out)."""
    handed: list[RecordBatch] = []
    pending: dict[int, list[RecordBatch]] = {}
    for b in batches:
        if b.is_control:
            held = pending.pop(b.producer_id, [])
            if b.control_type() == "COMMIT":
                handed.extend(held)
        elif b.is_transactional:
            pending.setdefault(b.producer_id, []).append(b)
        else:
            handed.append(b)
    return sorted(handed, key=lambda b: b.base_offset)
