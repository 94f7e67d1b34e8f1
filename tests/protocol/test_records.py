"""RecordBatch v2: round trips, CRC32C, compression, control batches, partial batches."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocol.exceptions import CompressionUnavailable, CorruptRecordError, DecodeError
from harness.protocol.records import (
    WireRecord,
    available_compressions,
    control_batch,
    encode_batch,
    parse_batch,
    parse_batches,
    set_partition_leader_epoch,
)

_BLOB = st.none() | st.binary(max_size=300)  # > 63 bytes exercises multi-byte varints
_RECORD = st.builds(
    WireRecord,
    value=_BLOB,
    key=_BLOB,
    headers=st.lists(st.tuples(st.text(max_size=5), _BLOB), max_size=3),
    timestamp=st.integers(0, 2**42),
)


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(
    records=st.lists(_RECORD, min_size=1, max_size=6),
    base_offset=st.integers(0, 2**40),
    epoch=st.integers(-1, 2**31 - 1),
    compression=st.sampled_from(["none", "gzip"]),
    transactional=st.booleans(),
)
def test_batch_round_trip(
    records: list[WireRecord], base_offset: int, epoch: int, compression: str, transactional: bool
) -> None:
    raw = encode_batch(
        records,
        base_offset=base_offset,
        partition_leader_epoch=epoch,
        compression=compression,
        transactional=transactional,
        producer_id=7 if transactional else -1,
        producer_epoch=1 if transactional else -1,
        base_sequence=0 if transactional else -1,
    )
    (batch,) = parse_batches(raw)
    assert batch.crc_valid and batch.compression == compression and batch.is_transactional == transactional
    assert batch.partition_leader_epoch == epoch and batch.base_offset == base_offset
    assert batch.last_offset == base_offset + len(records) - 1 and batch.next_offset == batch.last_offset + 1
    assert [(r.key, r.value, r.headers, r.timestamp) for r in batch.records] == [
        (r.key, r.value, r.headers, r.timestamp) for r in records
    ]
    assert [r.offset for r in batch.records] == list(range(base_offset, base_offset + len(records)))
    assert batch.max_timestamp == max(r.timestamp or 0 for r in records)
    if compression == "none":
        assert batch.encode() == raw


def test_crc_covers_records_but_not_the_leader_epoch() -> None:
    raw = encode_batch([b"value"], partition_leader_epoch=3)
    restamped = set_partition_leader_epoch(raw, 9)
    assert parse_batches(restamped)[0].partition_leader_epoch == 9  # still valid: epoch is outside the CRC
    corrupt = raw[:-1] + bytes([raw[-1] ^ 1])
    with pytest.raises(CorruptRecordError, match="CRC32C"):
        parse_batches(corrupt)
    assert not parse_batches(corrupt, verify_crc=False)[0].crc_valid


def test_control_batches() -> None:
    raw = control_batch("commit", producer_id=5, producer_epoch=2, coordinator_epoch=11, base_offset=40)
    (batch,) = parse_batches(raw)
    assert batch.is_control and batch.is_transactional
    assert batch.control_type() == "COMMIT" and batch.coordinator_epoch() == 11
    assert (batch.producer_id, batch.producer_epoch) == (5, 2)
    abort = parse_batches(control_batch("ABORT", producer_id=5, producer_epoch=2))[0]
    assert abort.control_type() == "ABORT"
    assert parse_batches(encode_batch([b"x"]))[0].control_type() is None


def test_partial_trailing_batch_is_skipped_like_the_java_consumer() -> None:
    one, two = encode_batch([b"a"], base_offset=0), encode_batch([b"b"], base_offset=1)
    blob = one + two[:-5]
    assert [b.base_offset for b in parse_batches(blob)] == [0]
    with pytest.raises(DecodeError, match="partial"):
        parse_batches(blob, allow_partial=False)
    assert parse_batches(None) == [] and parse_batches(b"") == []


def test_many_batches_and_header_only_parsing() -> None:
    blob = b"".join(encode_batch([b"x"] * 3, base_offset=i * 3) for i in range(100))
    batches = parse_batches(blob, records=False)
    assert len(batches) == 100 and batches[-1].last_offset == 299 and batches[0].records == []
    assert sum(len(b.records) for b in parse_batches(blob)) == 300


def test_legacy_magic_is_refused() -> None:
    raw = bytearray(encode_batch([b"x"]))
    raw[16] = 1  # magic
    with pytest.raises(DecodeError, match="magic 1"):
        parse_batch(bytes(raw))


def test_missing_compression_module_is_named() -> None:
    raw = bytearray(encode_batch([b"x"]))
    attributes_offset = 21
    struct.pack_into(">h", raw, attributes_offset, 3)  # lz4; the CRC no longer matters here
    if "lz4" in available_compressions():
        pytest.skip("lz4 is installed")
    with pytest.raises(CompressionUnavailable, match="lz4"):
        parse_batches(bytes(raw), verify_crc=False)
    with pytest.raises(CompressionUnavailable, match="pip install"):
        encode_batch([b"x"], compression="lz4")
    assert available_compressions()[:2] == ["none", "gzip"]


def test_records_given_as_values_or_pairs() -> None:
    (batch,) = parse_batches(encode_batch([b"v", (b"k", b"w"), WireRecord(None, b"tombstone")]))
    assert [(r.key, r.value) for r in batch.records] == [(None, b"v"), (b"k", b"w"), (b"tombstone", None)]


def test_a_down_converted_message_set_is_counted_not_decoded() -> None:
    """Fetch below v4 on 3.x answers magic 1 messages: the fencing check counts entries in it."""
    from harness.protocol.records import count_entries

    def message(offset: int) -> bytes:  # offset, size, then crc, magic 1, attributes, timestamp, key, value
        body = struct.pack(">IbbqI", 0, 1, 0, 0, 0xFFFFFFFF) + struct.pack(">i", 1) + b"v"
        return struct.pack(">qi", offset, len(body)) + body

    legacy = message(0) + message(1)
    assert count_entries(legacy) == 2
    assert count_entries(legacy + message(2)[:15]) == 2, "a partial entry at the end is not counted"
    assert count_entries(b"") == count_entries(None) == 0
