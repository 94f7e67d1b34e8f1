"""Judging Fetches positioned inside a record batch (harness.scenarios.mid_batch)."""

from __future__ import annotations

from harness.histories.mid_batch import MidBatchFetches
from harness.protocol import errors


def assert_mid_batch_fetch_serves_the_holding_batch(seen: MidBatchFetches) -> None:
    """Each Fetch from an offset inside a batch is answered without error, and its first batch is
    the one holding that offset: the records from the offset on are all there, none skipped."""
    problems = []
    for f in seen.fetches:
        if f.error_code:
            problems.append(f"v{f.version} at {f.offset}: {errors.describe(f.error_code)}")
        elif not f.answered:
            problems.append(f"v{f.version} at {f.offset}: no batch (high watermark {f.high_watermark})")
        elif not f.answered[0].base_offset <= f.offset <= f.answered[0].last_offset:
            first = f.answered[0]
            problems.append(f"v{f.version} at {f.offset}: first batch {first.base_offset}-{first.last_offset}, "
                            "not the batch holding the offset")
    assert not problems, (
        f"Fetches positioned inside a batch of {seen.topic} lost records: " + "; ".join(problems)
        + f"; the log's batches: {[(s.base_offset, s.last_offset) for s in seen.log]}")
