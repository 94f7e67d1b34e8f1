"""Primitive wire types: varints at their edges, strings, bytes, UUID forms."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocol.exceptions import DecodeError, EncodeError
from harness.protocol.types import (
    encode_bytes,
    encode_string,
    encode_uvarint,
    encode_varint,
    encode_varlong,
    kafka_uuid_str,
    parse_uuid,
    read_bytes,
    read_string,
    read_uvarint,
    read_varint,
    read_varlong,
    uuid_from_bytes,
)


@pytest.mark.parametrize(
    ("value", "raw"),
    [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (2**32 - 1, "ffffffff0f")],
)
def test_unsigned_varint_vectors(value: int, raw: str) -> None:
    assert encode_uvarint(value).hex() == raw
    assert read_uvarint(bytes.fromhex(raw), 0) == (value, len(raw) // 2)


@pytest.mark.parametrize(("value", "raw"), [(0, "00"), (-1, "01"), (1, "02"), (-64, "7f"), (64, "8001")])
def test_zigzag_varint_vectors(value: int, raw: str) -> None:
    assert encode_varint(value).hex() == raw
    assert read_varint(bytes.fromhex(raw), 0) == (value, len(raw) // 2)


@settings(max_examples=200, derandomize=True, database=None)
@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value: int) -> None:
    raw = encode_varlong(value)
    assert read_varlong(raw, 0) == (value, len(raw))


def test_varint_limits() -> None:
    with pytest.raises(EncodeError):
        encode_uvarint(-1)
    with pytest.raises(EncodeError):
        encode_varint(2**31)
    with pytest.raises(DecodeError, match="longer than 5 bytes"):
        read_uvarint(b"\xff" * 6, 0)


def test_strings_and_bytes() -> None:
    for compact in (True, False):
        raw = encode_string("héllo", compact=compact, nullable=False)
        assert read_string(raw, 0, compact=compact, nullable=False) == ("héllo", len(raw))
        null = encode_string(None, compact=compact, nullable=True)
        assert read_string(null, 0, compact=compact, nullable=True) == (None, len(null))
        with pytest.raises(DecodeError):
            read_string(null, 0, compact=compact, nullable=False)
        blob = encode_bytes(b"\x00\x01", compact=compact, nullable=False)
        assert read_bytes(blob, 0, compact=compact, nullable=False) == (b"\x00\x01", len(blob))
    with pytest.raises(EncodeError, match="32767"):
        encode_string("x" * 40000, compact=True, nullable=False)


def test_uuid_forms() -> None:
    u = uuid.UUID("5b2a6d3c-1f4e-4a8b-9c0d-2e3f4a5b6c7d")
    text = kafka_uuid_str(u)
    assert len(text) == 22 and "=" not in text
    assert parse_uuid(text) == u and parse_uuid(str(u)) == u
    fast = uuid_from_bytes(u.bytes)
    assert fast == u and hash(fast) == hash(u) and str(fast) == str(u)
    with pytest.raises(ValueError, match="not a UUID"):
        parse_uuid("nope")
