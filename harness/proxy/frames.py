"""The few bytes of a frame the proxy reads on every exchange: the request header, and Produce's acks.

Everything else in a frame stays opaque unless a rule or the rewriter asks for the whole body
(see `harness.proxy.connection`), which `request_body` reads as a broker reads it. A request header
of any version starts with the same four fixed fields (api key, api version, correlation id,
nullable int16 client id); flexible headers only append tagged fields after them, so no version
table is needed here.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from harness.protocol.codec import decode
from harness.protocol.spec import ApiSpec
from harness.protocol.types import read_uvarint

SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhih")
_INT16 = struct.Struct(">h")
PRODUCE = 0
# Produce switched its TransactionalId to a compact string at v9 (its first flexible version).
_PRODUCE_FLEXIBLE_FROM = 9


class FrameError(ValueError):
    """A frame too short or malformed for the part the proxy has to read."""


@dataclass(frozen=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def parse_request_header(frame: bytes) -> RequestHeader:
    """The fixed part of a request header, from a frame without its size prefix."""
    if len(frame) < _HEADER.size:
        raise FrameError(f"request frame of {len(frame)} bytes is shorter than a request header")
    key, version, correlation, n = _HEADER.unpack_from(frame, 0)
    if n < 0:
        return RequestHeader(key, version, correlation, None)
    end = _HEADER.size + n
    if end > len(frame):
        raise FrameError(f"client id of {n} bytes runs past the end of a {len(frame)}-byte frame")
    client_id = frame[_HEADER.size:end].decode("utf-8", errors="replace")
    return RequestHeader(key, version, correlation, client_id)


def response_correlation_id(frame: bytes) -> int:
    """Every response header, of any version, starts with the correlation id."""
    if len(frame) < 4:
        raise FrameError(f"response frame of {len(frame)} bytes has no correlation id")
    return SIZE.unpack_from(frame, 0)[0]


def header_length(frame: bytes, flexible: bool) -> int:
    """Bytes of the request header, tagged fields included (flexible headers are v2)."""
    n = _INT16.unpack_from(frame, _HEADER.size - 2)[0]
    pos = _HEADER.size + max(n, 0)
    if flexible:
        count, pos = read_uvarint(frame, pos)
        for _ in range(count):
            _, pos = read_uvarint(frame, pos)
            size, pos = read_uvarint(frame, pos)
            pos += size
    if pos > len(frame):
        raise FrameError(f"request header runs past the end of a {len(frame)}-byte frame")
    return pos


def produce_expects_response(frame: bytes, header: RequestHeader) -> bool:
    """False for Produce with acks=0, the one request a broker never answers.

    Produce has had TransactionalId (v3+) then Acks first in its body since v3, and 4.x brokers
    accept nothing older.
    """
    if header.api_key != PRODUCE or header.api_version < 3:
        return True
    flexible = header.api_version >= _PRODUCE_FLEXIBLE_FROM
    pos = header_length(frame, flexible)
    if flexible:
        n, pos = read_uvarint(frame, pos)
        pos += max(n - 1, 0)
    else:
        n = _INT16.unpack_from(frame, pos)[0]
        pos += 2 + max(n, 0)
    if pos + 2 > len(frame):
        raise FrameError("Produce request ends before its acks field")
    return _INT16.unpack_from(frame, pos)[0] != 0


def request_body(api: ApiSpec, version: int, frame: bytes, start: int) -> dict[str, Any]:
    """A request's body, from `start` (after its header), read as the broker reads it: bytes left after
    the message are not an error. librdkafka's all-topics Metadata from v9 leaves three bytes of its
    array count's placeholder on the wire (confluentinc/librdkafka#5049), which Apache Kafka reads past;
    a strict read made the proxy note an error, and a check that staged a Metadata rule an ERROR."""
    return decode(api.request, version, frame, offset=start, allow_trailing=True)
