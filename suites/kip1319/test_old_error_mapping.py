"""KIP-1319 errors that stay as they were: an unknown topic name on v0-v5, a classic group's stale
generation on v6. Raw TxnOffsetCommit, one aborted transaction per commit."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.kip1319_old_errors import (
    assert_classic_stale_generation_is_illegal_generation,
    assert_unknown_topic_name_is_unknown_topic_or_partition,
)
from harness.histories import store
from harness.scenarios import kip1319, kip1319_old_errors

pytestmark = pytest.mark.kip1319


@pytest.mark.promise("kip1319.v0-5.unknown-name-unknown-topic-or-partition", "kip1319.v0-5.old-error-mapping")
def test_v0_to_v5_answer_an_unknown_topic_name_with_unknown_topic_or_partition_never_unknown_topic_id(
    cluster: Cluster, topic_factory: TopicFactory, unique: kip1319.Unique
) -> None:
    """KIP-1319 "Public Interfaces" (the error table: UNKNOWN_TOPIC_ID "N/A (topic names used)" before
    v6; "For v0-5, all existing error mappings are preserved"): at every version from the
    coordinator's lowest to v5, a commit naming partition 0 of a topic that was never created gets
    UNKNOWN_TOPIC_OR_PARTITION for it, never UNKNOWN_TOPIC_ID, and the real topic in the same
    request NONE. Judged on brokers with and without v6."""
    answers = kip1319_old_errors.unknown_topic_name_answers(cluster, topic_factory(), unique)
    store.save("kip1319-v0-5-unknown-topic-name", answers)
    assert_unknown_topic_name_is_unknown_topic_or_partition(answers)


@pytest.mark.promise("kip1319.v6.classic-generation-illegal-generation")
def test_v6_answers_a_classic_groups_stale_generation_with_illegal_generation(
    cluster: Cluster, require_v6: kip1319.RequireV6, topic_factory: TopicFactory, unique: kip1319.Unique
) -> None:
    """KIP-1319 "Public Interfaces" (GenerationIdOrMemberEpoch is "the generation of the group if using
    the classic group protocol") and "Proposed Changes > Broker-Side > Error mapping" (STALE_MEMBER_EPOCH
    only "under the new consumer group protocol"): a classic group member at generation 2 committing
    with generation 1 gets ILLEGAL_GENERATION at v6, as at v5, v4 and v3, not STALE_MEMBER_EPOCH;
    with generation 2 every version commits."""
    require_v6("a classic group's generation on TxnOffsetCommit v6")
    answers = kip1319_old_errors.classic_generation_answers(cluster, topic_factory(), unique)
    store.save("kip1319-v6-classic-stale-generation", answers)
    assert_classic_stale_generation_is_illegal_generation(answers)
