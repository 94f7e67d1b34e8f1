"""KIP-320 committed leader epochs: OffsetCommit and TxnOffsetCommit store it, OffsetFetch returns it."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks import recorded
from harness.checks.committed_offsets import assert_commits_kept
from harness.scenarios.kip320 import committed_epochs

pytestmark = pytest.mark.kip320


@pytest.mark.promise("kip320.offset-commit.epoch-kept")
def test_committed_leader_epoch_is_kept_by_every_offset_commit_and_fetch_version(
    cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames
) -> None:
    """KIP-320, "Protocol Changes / OffsetCommit, OffsetFetch": the leader epoch committed with an
    offset by OffsetCommit (v6+) is returned by OffsetFetch (v5+) with the offset. Each commit
    version writes its own (offset, epoch); every OffsetFetch version reads it back."""
    commits = committed_epochs(
        cluster, topic_factory(), run_names.group("kip320-committed-epoch"), run_names.transactional_id
    )
    recorded.save("kip320-committed-epoch", {"rounds": commits.rounds})
    assert_commits_kept(commits.rounds)


@pytest.mark.promise("kip320.txn-offset-commit.epoch-kept")
def test_committed_leader_epoch_is_kept_by_every_txn_offset_commit_and_fetch_version(
    cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames
) -> None:
    """KIP-320, "Protocol Changes / TxnOffsetCommit, OffsetFetch": the leader epoch committed with
    an offset in a committed transaction by TxnOffsetCommit (v2+) is returned by OffsetFetch (v5+)
    with the offset. Each commit version writes its own (offset, epoch); every OffsetFetch version
    reads it back. A target without transactions is "not supported", with what it advertised."""
    commits = committed_epochs(
        cluster, topic_factory(), run_names.group("kip320-committed-txn-epoch"), run_names.transactional_id,
        api="TxnOffsetCommit",
    )
    recorded.save("kip320-committed-txn-epoch", {"rounds": commits.rounds})
    assert_commits_kept(commits.rounds)
