"""The record every stage of the pipeline writes: a UTF-8 line the checker can verify field by field.

    <id>,<key>,<seq>,<crc>,<flag>,<stage>,<payload>

- `id`: unique across the run; an output record keeps the id of the input record it came from.
- `key`: also the Kafka key; every record of a key goes to the same partition number in every topic.
- `seq`: position of the record among its key's committed records (0, 1, 2, ...); -1 when the
  generator writes it inside a transaction it aborts.
- `crc`: CRC-32 of the payload bytes (Spark's `crc32` computes the same), written once by the
  generator and copied by every processor, so corruption anywhere on the way shows.
- `flag`: `C` when the writer meant to commit the transaction, `A` when it wrote the record into a
  transaction it was going to abort: a visible `A` is an aborted read, whoever wrote it.
- `stage`: who wrote this copy (`gen`, or the processor and the output it wrote to).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

# Not a regex metacharacter: Spark splits on it bytewise, without a regex or a String per field.
SEP = ","
SEP_BYTES = SEP.encode()
COMMIT = "C"
ABORT = "A"
FIELDS = ("id", "key", "seq", "crc", "flag", "stage", "payload")


@dataclass(frozen=True)
class PipelineRecord:
    id: int
    key: str
    seq: int
    crc: int
    flag: str
    stage: str
    payload: str

    def encode(self) -> bytes:
        return SEP.join(
            (str(self.id), self.key, str(self.seq), str(self.crc), self.flag, self.stage, self.payload)
        ).encode()

    def restage(self, stage: str, flag: str) -> PipelineRecord:
        """The copy a processor writes: same id, key, seq, checksum and payload; its own stage and flag."""
        return PipelineRecord(self.id, self.key, self.seq, self.crc, flag, stage, self.payload)


def payload_for(record_id: int) -> str:
    """A payload derived from the id, so any test can rebuild it; 24 characters, no separator."""
    return f"{(record_id * 2654435761) & 0xFFFFFFFF:08x}{record_id:016x}"


def crc(payload: str) -> int:
    return zlib.crc32(payload.encode())


def make(record_id: int, key: str, seq: int, flag: str = COMMIT, stage: str = "gen") -> PipelineRecord:
    payload = payload_for(record_id)
    return PipelineRecord(record_id, key, seq, crc(payload), flag, stage, payload)


def decode(value: bytes) -> PipelineRecord:
    """Parse a value; raises ValueError on anything that is not a well-formed record."""
    parts = value.decode().split(SEP, len(FIELDS) - 1)
    if len(parts) != len(FIELDS):
        raise ValueError(f"{len(parts)} fields in {value[:80]!r}")
    rid, key, seq, checksum, flag, stage, payload = parts
    return PipelineRecord(int(rid), key, int(seq), int(checksum), flag, stage, payload)


def rewrite_stage(value: bytes, stage: str, flag: str) -> bytes:
    """`decode(value).restage(stage, flag).encode()` without parsing the numbers: the processors' hot path."""
    parts = value.split(SEP_BYTES, 6)
    if len(parts) != len(FIELDS):
        raise ValueError(f"{len(parts)} fields in {value[:80]!r}")
    parts[4] = flag.encode()
    parts[5] = stage.encode()
    return SEP_BYTES.join(parts)


def record_id(value: bytes) -> int:
    return int(value[: value.index(SEP_BYTES)])
