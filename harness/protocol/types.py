"""Primitive wire types: fixed-width integers, varints, strings, bytes and UUIDs.

Everything works on `bytes` with explicit offsets (`read_x(buf, pos) -> (value, pos)`), the
same calling convention the generated decoders use, so that no intermediate buffers are made.
"""

from __future__ import annotations

import base64
import struct
import uuid
from typing import Any

from harness.protocol.exceptions import DecodeError, EncodeError

# struct format and width of each fixed-width spec type.
FIXED_FORMATS: dict[str, tuple[str, int]] = {
    "bool": ("?", 1),
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "float64": ("d", 8),
    "uuid": ("16s", 16),
}

INT_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT32 = struct.Struct(">I")

ZERO_UUID = uuid.UUID(int=0)
_new_object = object.__new__
_set_attr = object.__setattr__
_SAFE_UNKNOWN = uuid.SafeUUID.unknown


def uuid_from_bytes(raw: bytes) -> uuid.UUID:
    """A UUID from 16 bytes, skipping UUID.__init__'s argument parsing (hot in decoders)."""
    u = _new_object(uuid.UUID)
    _set_attr(u, "int", int.from_bytes(raw, "big"))
    _set_attr(u, "is_safe", _SAFE_UNKNOWN)
    return u


def uuid_to_bytes(value: Any) -> bytes:
    """16 bytes of a UUID given as uuid.UUID, 16 raw bytes, a Kafka base64 id, or None (zero)."""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if value is None:
        return b"\0" * 16
    if isinstance(value, bytes | bytearray) and len(value) == 16:
        return bytes(value)
    if isinstance(value, str):
        return parse_uuid(value).bytes
    raise EncodeError(f"not a UUID: {value!r}")


def kafka_uuid_str(value: uuid.UUID) -> str:
    """Kafka's own text form of a UUID (Uuid.toString): URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def parse_uuid(text: str) -> uuid.UUID:
    """Accept Kafka's base64 form (22 chars, as printed by kafka-topics) or the usual hex form."""
    if len(text) == 22:
        try:
            return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))
        except ValueError:
            pass
    try:
        return uuid.UUID(text)
    except ValueError:
        raise ValueError(f"not a UUID (Kafka base64 or hex): {text!r}") from None


# --- varints -------------------------------------------------------------------------------

_SMALL_UVARINTS = [bytes([i]) for i in range(128)]


def encode_uvarint(value: int) -> bytes:
    if 0 <= value < 128:
        return _SMALL_UVARINTS[value]
    if value < 0 or value > 0xFFFFFFFF:
        raise EncodeError(f"unsigned varint out of range: {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_uvarlong(value: int) -> bytes:
    if 0 <= value < 128:
        return _SMALL_UVARINTS[value]
    if value < 0 or value > 0xFFFFFFFFFFFFFFFF:
        raise EncodeError(f"unsigned varlong out of range: {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varint(value: int) -> bytes:
    """Zig-zag signed varint (record fields): int32 range."""
    if not -(2**31) <= value < 2**31:
        raise EncodeError(f"varint out of range: {value}")
    return encode_uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    if not -(2**63) <= value < 2**63:
        raise EncodeError(f"varlong out of range: {value}")
    return encode_uvarlong(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def uvarint_tail(buf: bytes, pos: int, first: int) -> tuple[int, int]:
    """Finish an unsigned varint whose first byte (`first`, >= 0x80) was already read at pos-1.

    Kafka caps unsigned varints at 5 bytes (int32); longer runs are corrupt input.
    """
    result = first & 0x7F
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 28:
            raise DecodeError(f"unsigned varint longer than 5 bytes at offset {pos - 5}")


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    return uvarint_tail(buf, pos + 1, b)


def read_uvarlong(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError(f"unsigned varlong longer than 10 bytes at offset {pos - 10}")


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    raw, pos = uvarint_tail(buf, pos + 1, b)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    raw, pos = read_uvarlong(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


# --- strings and bytes (used by the slow paths and by hand-written codecs) -------------------


def encode_string(value: str | None, *, compact: bool, nullable: bool) -> bytes:
    if value is None:
        if not nullable:
            raise EncodeError("null given for a non-nullable string")
        return b"\0" if compact else b"\xff\xff"
    raw = value.encode("utf-8")
    if len(raw) > 0x7FFF:
        raise EncodeError(f"string of {len(raw)} bytes is longer than 32767")
    if compact:
        return encode_uvarint(len(raw) + 1) + raw
    return INT16.pack(len(raw)) + raw


def encode_bytes(value: bytes | None, *, compact: bool, nullable: bool) -> bytes:
    if value is None:
        if not nullable:
            raise EncodeError("null given for non-nullable bytes")
        return b"\0" if compact else b"\xff\xff\xff\xff"
    value = bytes(value)
    if compact:
        return encode_uvarint(len(value) + 1) + value
    return INT32.pack(len(value)) + value


def read_string(buf: bytes, pos: int, *, compact: bool, nullable: bool) -> tuple[str | None, int]:
    if compact:
        n, pos = read_uvarint(buf, pos)
        n -= 1
    else:
        (n,) = INT16.unpack_from(buf, pos)
        pos += 2
    if n < 0:
        if not nullable:
            raise DecodeError(f"null string at offset {pos} where the schema allows none")
        return None, pos
    end = pos + n
    if end > len(buf):
        raise DecodeError(f"string of {n} bytes runs past the end of the buffer")
    return buf[pos:end].decode("utf-8"), end


def read_bytes(buf: bytes, pos: int, *, compact: bool, nullable: bool) -> tuple[bytes | None, int]:
    if compact:
        n, pos = read_uvarint(buf, pos)
        n -= 1
    else:
        (n,) = INT32.unpack_from(buf, pos)
        pos += 4
    if n < 0:
        if not nullable:
            raise DecodeError(f"null bytes at offset {pos} where the schema allows none")
        return None, pos
    end = pos + n
    if end > len(buf):
        raise DecodeError(f"bytes of length {n} run past the end of the buffer")
    return buf[pos:end], end


def check_int(type_name: str, value: Any) -> None:
    """Raise EncodeError naming the type if value does not fit (used to explain pack failures)."""
    if type_name == "bool":
        if not isinstance(value, bool | int):
            raise EncodeError(f"expected bool, got {value!r}")
        return
    if type_name == "float64":
        if not isinstance(value, float | int) or isinstance(value, bool):
            raise EncodeError(f"expected float, got {value!r}")
        return
    lo, hi = INT_RANGES[type_name]
    if not isinstance(value, int) or isinstance(value, bool):
        raise EncodeError(f"expected {type_name}, got {type(value).__name__} {value!r}")
    if not lo <= value <= hi:
        raise EncodeError(f"{value} is out of range for {type_name} [{lo}, {hi}]")
