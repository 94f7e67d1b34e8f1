"""The target's part of the client checks (harness.checks.client_premises): where it is missing, the
check ends as "target refused the premise", never as the client's failure (recorded, altered)."""

from __future__ import annotations

import pytest
from alterations import raw, typed

from harness.checks.client_premises import require_topic_ids
from harness.errors import TargetRefused
from harness.histories.kip1319 import ClientRun
from harness.protocol.types import ZERO_UUID

V6_RUNS = ["kip1319-java-v6-copy", "kip1319-franz-go-v6-copy", "kip1319-librdkafka-v6-copy",
           "kip1319-java-retry-unknown-topic-id", "kip1319-java-mixed-outcome"]


@pytest.mark.parametrize("name", V6_RUNS)
def test_the_recorded_targets_had_topic_ids(name: str) -> None:
    require_topic_ids(typed(ClientRun, raw(name)))


@pytest.mark.parametrize("name", V6_RUNS)
def test_a_topic_the_target_has_no_id_for_is_a_refused_premise(name: str) -> None:
    """The harness's own Metadata gave the zero UUID for a topic of the offsets (a broker without topic
    IDs): a client sending v5 for it did what KIP-1319's "Fallback" asks, so nothing is judged."""
    data = raw(name)
    data["asked"][-1]["topic_id"] = ZERO_UUID
    topic = data["asked"][-1]["topic"]
    with pytest.raises(TargetRefused, match=rf"no topic ID \(the zero UUID\) for \['{topic}'\]"):
        require_topic_ids(typed(ClientRun, data))
