"""Verdict classification: each outcome lands in exactly one matrix cell."""

import pytest

from harness.verdicts import KNOWN_CLIENT_GAP, NOT_SUPPORTED, TARGET_REFUSED, classify


@pytest.mark.parametrize(
    ("outcome", "reason", "cell"),
    [
        ("passed", None, "pass"),
        ("failed", "AssertionError", "fail"),
        ("skipped", f"{NOT_SUPPORTED}: TxnOffsetCommit v6 (max 5)", "not-supported"),
        ("xfailed", f"{KNOWN_CLIENT_GAP}: librdkafka #5158", "client-gap"),
        ("skipped", f"{TARGET_REFUSED}: the target refused to create topic t", "target-refused"),
        ("skipped", "needs fault control; the target is external", "skipped"),
    ],
)
def test_outcomes_map_to_one_cell(outcome: str, reason: str | None, cell: str) -> None:
    assert classify(outcome, reason) == cell
