"""KIP-320 committed leader epochs: OffsetCommit and TxnOffsetCommit store it, OffsetFetch returns it;
and the metadata string committed beside it, on both paths."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.checks.committed_offsets import assert_commits_kept, assert_metadata_kept
from harness.histories import store
from harness.scenarios.kip320 import CommittedEpochs, committed_epochs

pytestmark = pytest.mark.kip320


@pytest.fixture(scope="module")
def offset_commits(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> CommittedEpochs:
    """Every OffsetCommit version (v6+) commits its own (offset, epoch, metadata); every OffsetFetch reads it."""
    commits = committed_epochs(cluster, module_topic(request, "offset-commits", 3),
                               run_names.group("kip320-committed-epoch"), run_names.transactional_id)
    store.save("kip320-committed-epoch", {"rounds": commits.rounds})
    return commits


@pytest.fixture(scope="module")
def txn_offset_commits(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> CommittedEpochs:
    """The same with every TxnOffsetCommit version (v2+, v6 by topic ID), each in a committed transaction."""
    commits = committed_epochs(cluster, module_topic(request, "txn-offset-commits", 3),
                               run_names.group("kip320-committed-txn-epoch"), run_names.transactional_id,
                               api="TxnOffsetCommit")
    store.save("kip320-committed-txn-epoch", {"rounds": commits.rounds})
    return commits


@pytest.mark.promise("kip320.offset-commit.epoch-kept")
def test_committed_leader_epoch_is_kept_by_every_offset_commit_and_fetch_version(
    offset_commits: CommittedEpochs,
) -> None:
    """KIP-320, "Protocol Changes / OffsetCommit, OffsetFetch": the leader epoch committed with an
    offset by OffsetCommit (v6+) is returned by OffsetFetch (v5+) with the offset. Each commit
    version writes its own (offset, epoch); every OffsetFetch version reads it back."""
    assert_commits_kept(offset_commits.rounds)


@pytest.mark.promise("kip320.txn-offset-commit.epoch-kept")
def test_committed_leader_epoch_is_kept_by_every_txn_offset_commit_and_fetch_version(
    txn_offset_commits: CommittedEpochs,
) -> None:
    """KIP-320, "Protocol Changes / TxnOffsetCommit, OffsetFetch": the leader epoch committed with
    an offset in a committed transaction by TxnOffsetCommit (v2+) is returned by OffsetFetch (v5+)
    with the offset. Each commit version writes its own (offset, epoch); every OffsetFetch version
    reads it back. A target without transactions is "not supported", with what it advertised."""
    assert_commits_kept(txn_offset_commits.rounds)


@pytest.mark.promise("kip320.committed-metadata-kept")
@pytest.mark.parametrize("path", ["OffsetCommit", "TxnOffsetCommit"])
def test_committed_metadata_is_read_back_on_every_commit_path(
    request: pytest.FixtureRequest, path: str,
) -> None:
    """KIP-320, "Protocol Changes / OffsetCommit" (the request carries Metadata beside the offset and
    the new leader epoch; OffsetFetch returns it): the metadata string of every commit, by every
    OffsetCommit version from v6 and every TxnOffsetCommit version from v2 (v6 by topic ID, KIP-1319),
    is what every OffsetFetch version returns."""
    commits: CommittedEpochs = request.getfixturevalue("offset_commits" if path == "OffsetCommit"
                                                       else "txn_offset_commits")
    assert_metadata_kept(commits.rounds)
