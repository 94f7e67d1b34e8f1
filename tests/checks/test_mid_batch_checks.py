"""The mid-batch Fetch check passes on a recorded 4.4.0 history and fails on copies altered as a
broker that skips, or errors on, the batch holding the offset would answer (Tansu's finding)."""

from __future__ import annotations

import pytest
from alterations import Alteration, alteration, altered, raw, typed

from harness.checks.mid_batch import assert_mid_batch_fetch_serves_the_holding_batch as check
from harness.histories.mid_batch import MidBatchFetches

REC, PROMISE = "fetch-mid-batch", "fetch.mid-batch-offset-serves-its-batch"


def _skip_first_batch(old: list, data: object) -> list:
    return old[1:]


ALTERATIONS: list[Alteration] = [
    alteration("holding-batch-skipped", PROMISE, REC, "fetches[0].answered", _skip_first_batch, check,
               "not the batch holding the offset"),
    alteration("holding-batch-skipped-at-the-highest-version", PROMISE, REC, "fetches[6].answered",
               _skip_first_batch, check, "not the batch holding the offset"),
    alteration("last-batch-answered-empty", PROMISE, REC, "fetches[-1].answered", [], check, "no batch"),
    alteration("offset-out-of-range-inside-the-log", PROMISE, REC, "fetches[1].error_code", 1, check,
               "OFFSET_OUT_OF_RANGE"),
]


def test_the_recorded_history_passes() -> None:
    seen = typed(MidBatchFetches, raw(REC))
    assert len(seen.fetches) >= 6 and all(f.offset > f.answered[0].base_offset for f in seen.fetches)
    check(seen)


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_history_fails_its_check(a: Alteration) -> None:
    with pytest.raises(a.raises) as caught:
        a.check(altered(a, MidBatchFetches))
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"
