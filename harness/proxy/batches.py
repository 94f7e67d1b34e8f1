"""Record batches inside a Fetch answer's `Records` bytes, for rules that cut answers short or drop a
batch: where each whole v2 batch starts and ends, read from its header alone (no decompression)."""

from __future__ import annotations

# A v2 batch header: base offset (8 bytes), batch length (4; the bytes after it), partition leader
# epoch (4), magic (1), CRC (4), attributes (2), then the last offset delta (4) at 23..27.
_HEADER = 27


def batch_spans(records: bytes) -> list[tuple[int, int, int]]:
    """(base offset, last offset, end position) of each whole v2 record batch in a Records field."""
    spans, pos = [], 0
    while pos + _HEADER <= len(records):
        base = int.from_bytes(records[pos:pos + 8], "big", signed=True)
        end = pos + 12 + int.from_bytes(records[pos + 8:pos + 12], "big", signed=True)
        if end > len(records):
            break  # a partial batch at the end of a size-capped answer; clients drop it too
        spans.append((base, base + int.from_bytes(records[pos + 23:pos + 27], "big", signed=True), end))
        pos = end
    return spans
