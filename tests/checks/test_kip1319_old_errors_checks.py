"""The KIP-1319 checks of errors that must not change (an unknown name on v0-v5, a classic group's stale
generation on v6) pass on recorded 4.4.0 histories and fail on copies altered to break them at one
version, in one partition: a table of alterations, as in test_kip1319_checks.py."""

from __future__ import annotations

import pytest
from alterations import Alteration, alteration, altered, raw, typed

from harness.checks.kip1319_old_errors import (
    assert_classic_stale_generation_is_illegal_generation,
    assert_unknown_topic_name_is_unknown_topic_or_partition,
)
from harness.errors import TargetRefused
from harness.histories.kip1319 import ClassicGenerationAnswers, UnknownNameAnswers

UNKNOWN_NAME, CLASSIC = "kip1319-v0-5-unknown-topic-name", "kip1319-v6-classic-stale-generation"
KINDS: dict[str, type] = {UNKNOWN_NAME: UnknownNameAnswers, CLASSIC: ClassicGenerationAnswers}
# The recorded request names the never-created topic first, the known topic second.
MISSING, KNOWN = "response.Topics[0].Partitions[0].ErrorCode", "response.Topics[1].Partitions[0].ErrorCode"
ERR = "response.Topics[0].Partitions[0].ErrorCode"
unknown_name = assert_unknown_topic_name_is_unknown_topic_or_partition
classic = assert_classic_stale_generation_is_illegal_generation

ALTERATIONS: list[Alteration] = [
    *[alteration(f"unknown-topic-id-leaking-into-{v}", "kip1319.v0-5.unknown-name-unknown-topic-or-partition",
                 UNKNOWN_NAME, f"exchanges.{v}.{MISSING}", 100, unknown_name,
                 "partition 0: UNKNOWN_TOPIC_ID(100), expected UNKNOWN_TOPIC_OR_PARTITION(3)") for v in ("v0", "v5")],
    alteration("known-topic-failing-with-the-unknown-one", "kip1319.v0-5.unknown-name-unknown-topic-or-partition",
               UNKNOWN_NAME, f"exchanges.v3.{KNOWN}", 3, unknown_name,
               "partition 0: UNKNOWN_TOPIC_OR_PARTITION(3), expected NONE(0)"),
    alteration("classic-stale-generation-answered-stale-member-epoch-at-v6",
               "kip1319.v6.classic-generation-illegal-generation", CLASSIC, f"stale.v6.{ERR}", 113, classic,
               "STALE_MEMBER_EPOCH(113), expected ILLEGAL_GENERATION(22)"),
    # A broker answering ILLEGAL_GENERATION to every membership commit would pass the stale half alone.
    alteration("current-generation-refused-at-v6", "kip1319.v6.classic-generation-illegal-generation", CLASSIC,
               f"current.v6.{ERR}", 22, classic, "ILLEGAL_GENERATION(22), expected NONE(0)"),
    alteration("member-that-never-reached-a-second-generation", "kip1319.v6.classic-generation-illegal-generation",
               CLASSIC, "generation", 1, classic, "did not reach a second generation", raises=TargetRefused),
]


def test_the_recorded_histories_pass() -> None:
    unknown_name(typed(UnknownNameAnswers, raw(UNKNOWN_NAME)))
    classic(typed(ClassicGenerationAnswers, raw(CLASSIC)))


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_history_fails_its_check(a: Alteration) -> None:
    with pytest.raises(a.raises) as caught:
        a.check(altered(a, KINDS[a.recording]))
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"
