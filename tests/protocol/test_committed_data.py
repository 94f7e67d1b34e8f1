"""`committed_data`: the data batches a read_committed consumer is handed, read off a hand-built log."""

from __future__ import annotations

from harness.protocol.records import committed_data, control_batch, encode_batch, parse_batches

COMMITTED, ABORTED, OPEN = 7, 8, 9  # producer ids


def _log() -> bytes:
    """offsets 0-1: plain; 2-3: producer 7's data, 4: its COMMIT; 5-6: producer 8's data, 7: producer
    9's data (never ended), 8: producer 8's ABORT."""
    return b"".join([
        encode_batch([b"plain-0", b"plain-1"], base_offset=0),
        encode_batch([b"c-0", b"c-1"], base_offset=2, transactional=True, producer_id=COMMITTED, producer_epoch=0),
        control_batch("COMMIT", producer_id=COMMITTED, producer_epoch=0, base_offset=4),
        encode_batch([b"a-0", b"a-1"], base_offset=5, transactional=True, producer_id=ABORTED, producer_epoch=0),
        encode_batch([b"o-0"], base_offset=7, transactional=True, producer_id=OPEN, producer_epoch=0),
        control_batch("ABORT", producer_id=ABORTED, producer_epoch=0, base_offset=8),
    ])


def test_only_plain_and_committed_data_is_handed() -> None:
    handed = committed_data(parse_batches(_log()))
    assert [(b.base_offset, b.last_offset) for b in handed] == [(0, 1), (2, 3)]


def test_a_log_that_ends_in_an_abort_ends_its_handed_data_before_it() -> None:
    batches = parse_batches(_log())
    assert batches[-1].control_type() == "ABORT"
    assert committed_data(batches)[-1].last_offset == 3
