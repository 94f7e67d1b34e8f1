"""The target's part of the client checks (harness.checks.client_premises): where it is missing, the
check ends as "target refused the premise", never as the client's failure (recorded, altered)."""

from __future__ import annotations

import pytest
from alterations import raw, typed

from harness.checks.client_premises import require_commits_accepted, require_topic_ids
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


def _answer_every_commit(data: dict, error: int) -> dict:
    for commit in data["commits"]:
        for t in commit["response"]["Topics"]:
            for p in t["Partitions"]:
                p["ErrorCode"] = error
    return data


@pytest.mark.parametrize("name", V6_RUNS)
def test_the_recorded_targets_accepted_commits(name: str) -> None:
    require_commits_accepted(typed(ClientRun, raw(name)))


@pytest.mark.parametrize(("error", "shown"), [(35, "UNSUPPORTED_VERSION"), (100, "UNKNOWN_TOPIC_ID")])
def test_a_target_that_accepts_no_commit_refuses_the_premise(error: int, shown: str) -> None:
    """A broker that advertises v6 and refuses every v6 commit, or whose UNKNOWN_TOPIC_ID never clears:
    the client had no accepted commit to be judged on (the broker's part FAILs in the raw checks)."""
    run = typed(ClientRun, _answer_every_commit(raw("kip1319-java-v6-copy"), error))
    with pytest.raises(TargetRefused, match=rf"accepted none of the \d+ TxnOffsetCommits Java .* sent .*{shown}"):
        require_commits_accepted(run)


def test_an_answer_the_client_may_have_caused_is_left_to_the_client_checks() -> None:
    """INVALID_COMMIT_OFFSET_SIZE answers what the client sent: the client checks judge it."""
    require_commits_accepted(typed(ClientRun, _answer_every_commit(raw("kip1319-java-v6-copy"), 28)))


def test_unsupported_version_at_a_version_not_advertised_is_left_to_the_client_checks() -> None:
    """UNSUPPORTED_VERSION is the broker's own only at a version it advertised: a client that sent v6 to
    a broker advertising up to v5 caused it, and the client checks judge that."""
    data = _answer_every_commit(raw("kip1319-java-v6-copy"), 35)
    data["broker"]["versions"] = [0, 5]
    require_commits_accepted(typed(ClientRun, data))
