"""The KIP-1319 checks of errors that must not change (an unknown name on v0-v5, a classic group's stale
generation on v6) reject answers that break them at one version, in one partition (recorded 4.4.0
answers, altered)."""

from __future__ import annotations

from typing import Any

import pytest
from recordings import Recording

from harness.checks.kip1319_old_errors import (
    assert_classic_stale_generation_is_illegal_generation,
    assert_unknown_topic_name_is_unknown_topic_or_partition,
)
from harness.errors import TargetRefused

UNKNOWN_NAME, CLASSIC = "kip1319-v0-5-unknown-topic-name", "kip1319-v6-classic-stale-generation"


def _set_error(ex: dict[str, Any], code: int, name: str | None = None) -> None:
    """Answer `code` for partition 0 of the topic keyed `name` (default: the only or first topic)."""
    for t in ex["response"]["Topics"]:
        if name is None or t.get("Name") == name:
            t["Partitions"][0]["ErrorCode"] = code
            return
    raise AssertionError(f"no topic {name} in {ex['response']}")


def test_recorded_answers_pass(recording: Recording) -> None:
    assert_unknown_topic_name_is_unknown_topic_or_partition(recording(UNKNOWN_NAME))
    assert_classic_stale_generation_is_illegal_generation(recording(CLASSIC))


@pytest.mark.parametrize("version", ["v0", "v5"])
def test_unknown_topic_id_leaking_into_one_old_version_fails(recording: Recording, version: str) -> None:
    r = recording(UNKNOWN_NAME)
    _set_error(r["exchanges"][version], 100, r["missing"])
    with pytest.raises(AssertionError, match=rf"{version} {r['missing']} partition 0: UNKNOWN_TOPIC_ID\(100\), "
                                             r"expected UNKNOWN_TOPIC_OR_PARTITION\(3\)"):
        assert_unknown_topic_name_is_unknown_topic_or_partition(r)


def test_the_known_topic_failing_with_the_unknown_one_fails(recording: Recording) -> None:
    r = recording(UNKNOWN_NAME)
    _set_error(r["exchanges"]["v3"], 3, r["known"])
    with pytest.raises(AssertionError, match=rf"v3 {r['known']} partition 0: UNKNOWN_TOPIC_OR_PARTITION\(3\), "
                                             r"expected NONE\(0\)"):
        assert_unknown_topic_name_is_unknown_topic_or_partition(r)


def test_a_classic_stale_generation_answered_stale_member_epoch_at_v6_fails(recording: Recording) -> None:
    """The consumer protocol's error for a classic group, at v6 only (v5 and below stay right)."""
    r = recording(CLASSIC)
    _set_error(r["stale"]["v6"], 113)
    with pytest.raises(AssertionError, match=r"stale v6 .* partition 0: STALE_MEMBER_EPOCH\(113\), expected "
                                             r"ILLEGAL_GENERATION\(22\)"):
        assert_classic_stale_generation_is_illegal_generation(r)


def test_a_current_generation_refused_at_v6_fails(recording: Recording) -> None:
    """A broker answering ILLEGAL_GENERATION to every membership commit would pass the stale half alone."""
    r = recording(CLASSIC)
    _set_error(r["current"]["v6"], 22)
    with pytest.raises(AssertionError, match=r"current v6 .* partition 0: ILLEGAL_GENERATION\(22\), expected "
                                             r"NONE\(0\)"):
        assert_classic_stale_generation_is_illegal_generation(r)


def test_a_member_that_never_reached_a_second_generation_is_a_refused_premise(recording: Recording) -> None:
    r = recording(CLASSIC)
    r["generation"] = 1
    with pytest.raises(TargetRefused, match="did not reach a second generation"):
        assert_classic_stale_generation_is_illegal_generation(r)
