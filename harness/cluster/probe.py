"""Cluster state read straight from a broker: partition leader epochs and replica log end offsets.

No Python client exposes the current leader epoch of a partition or the log end offset of a
follower, and the cluster interface promises both. Two fixed, non-flexible request versions are
enough: Metadata v8 (leader epoch since v7) and ListOffsets v4 with the debugging replica id -2,
which any replica answers with its own log end offset (KafkaApis serves it without the leader check).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from itertools import count

_correlation = count(1)
_CLIENT_ID = b"kcts-probe"
DEBUGGING_REPLICA_ID = -2
LATEST_TIMESTAMP = -1


@dataclass(frozen=True)
class PartitionMetadata:
    topic: str
    partition: int
    error_code: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class BrokerMetadata:
    broker_ids: tuple[int, ...]
    controller_id: int
    partitions: dict[tuple[str, int], PartitionMetadata]


class _Reader:
    def __init__(self, buf: bytes) -> None:
        self.buf, self.pos = buf, 0

    def take(self, fmt: str) -> int:
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def string(self) -> str | None:
        n = self.take(">h")
        if n < 0:
            return None
        s = self.buf[self.pos : self.pos + n].decode()
        self.pos += n
        return s

    def int32s(self) -> tuple[int, ...]:
        return tuple(self.take(">i") for _ in range(self.take(">i")))


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def _call(host: str, port: int, api_key: int, version: int, body: bytes, timeout: float) -> _Reader:
    corr = next(_correlation)
    header = struct.pack(">hhi", api_key, version, corr) + _string(_CLIENT_ID.decode())
    frame = header + body
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", _recv(sock, 4))[0]
        reader = _Reader(_recv(sock, size))
    got = reader.take(">i")
    if got != corr:
        raise ConnectionError(f"{host}:{port} answered correlation id {got}, expected {corr}")
    return reader


def _recv(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(left)
        if not chunk:
            raise ConnectionError("broker closed the connection mid-response")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def metadata(host: str, port: int, topics: list[str] | None = None, timeout: float = 5.0) -> BrokerMetadata:
    """Metadata v8 from one broker; `topics=None` asks for every topic."""
    if topics is None:
        body = struct.pack(">i", -1)
    else:
        body = struct.pack(">i", len(topics)) + b"".join(_string(t) for t in topics)
    body += struct.pack(">???", False, False, False)
    r = _call(host, port, 3, 8, body, timeout)
    r.take(">i")  # throttle
    brokers = []
    for _ in range(r.take(">i")):
        brokers.append(r.take(">i"))
        r.string()
        r.take(">i")
        r.string()
    r.string()  # cluster id
    controller = r.take(">i")
    partitions: dict[tuple[str, int], PartitionMetadata] = {}
    for _ in range(r.take(">i")):
        r.take(">h")
        name = r.string() or ""
        r.take(">?")
        for _ in range(r.take(">i")):
            err, index, leader, epoch = r.take(">h"), r.take(">i"), r.take(">i"), r.take(">i")
            replicas, isr = r.int32s(), r.int32s()
            r.int32s()  # offline
            partitions[(name, index)] = PartitionMetadata(name, index, err, leader, epoch, replicas, isr)
        r.take(">i")
    return BrokerMetadata(tuple(sorted(brokers)), controller, partitions)


def log_end_offset(host: str, port: int, topic: str, partition: int, timeout: float = 5.0) -> int:
    """The log end offset of the replica on this broker, leader or follower."""
    body = struct.pack(">ib", DEBUGGING_REPLICA_ID, 0)
    body += struct.pack(">i", 1) + _string(topic)
    body += struct.pack(">i", 1) + struct.pack(">iiq", partition, -1, LATEST_TIMESTAMP)
    r = _call(host, port, 2, 4, body, timeout)
    r.take(">i")
    r.take(">i")
    r.string()
    r.take(">i")
    r.take(">i")
    err = r.take(">h")
    r.take(">q")
    offset = r.take(">q")
    if err:
        raise LookupError(f"ListOffsets to {host}:{port} for {topic}-{partition} failed with error code {err}")
    return offset
