"""KIP-1094 committed offsets: the next offset and the leader epoch a consumer commits (every client
stack judged, the Java transactional copier for TxnOffsetCommit)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.client_premises import require_commits_accepted
from harness.checks.committed_offsets import (
    assert_commit_epochs_follow_consumption,
    assert_commit_past_control_records,
    assert_commit_validates,
    assert_epoch_ends_before_the_next,
    assert_poll_hands_no_control_record,
    assert_txn_commit_epochs_follow_consumption,
    committed_data,
)
from harness.checks.epoch_lineage import describe_log, epoch_of_offset
from harness.checks.kip1319 import assert_transaction_outcome
from harness.histories import store
from harness.histories.kip1094 import MarkerCommit, MarkerRead
from harness.scenarios.kip1094 import Log, NotReadThrough, last_epoch_commits, marker_commit
from harness.scenarios.kip1319_clients import java_copy_existing
from harness.scenarios.truncation import STACKS
from harness.verdicts import not_supported_by_client, require_scene, stalled_read

pytestmark = pytest.mark.kip1094
STAMPED = "KIP-320 \"Replica Handling\" (from KIP-101): the leader stamps each batch it appends with its epoch"



def _require_epochs_stamped(log: Log) -> None:
    """The fixture moved the leader between appends, waiting until Metadata showed the higher epoch:
    a log whose batches all carry one epoch breaks the stamping the check's premise rests on."""
    assert len({b.partition_leader_epoch for b in log.batches}) > 1, (
        f"{STAMPED}: the leader moved between the first 20 records and the rest, yet every batch carries "
        f"one epoch: {describe_log(log.batches)}")


@pytest.mark.client_axis
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise(
    "kip1094.next-offset-epoch",
    "kip320.consumer.commits-epoch",
    "kip320.consumer.record-epoch-exposed",
)
def test_committed_epoch_is_the_epoch_of_the_last_consumed_record(
    client: str, cluster: Cluster, two_epochs: Log, run_names: RunNames
) -> None:
    """KIP-1094 consumer-offsets guide, "Committing Leader Epoch" and "PART III": a consumer commits
    the next offset with the leader epoch of the last record it consumed. The log has 20 records from one epoch and 20
    from the next, and is read after the leader moved: the commit after the first 20 carries the
    old epoch (not the leader's current one), the commit after the rest the new epoch. Java commits
    ConsumerRecords.nextOffsets() (KIP-1094, 20 records per poll); librdkafka and franz-go commit
    what they consumed after the 20th and the 40th record. Each commit, read back from the coordinator, must
    also validate: OffsetsForLeaderEpoch(epoch) ends at or after the committed offset."""
    log = two_epochs
    try:
        made = last_epoch_commits(cluster, log, run_names.group(f"kip1094-last-epoch-{client}"), client)
    except NotReadThrough as exc:
        stalled_read(client, exc)
    commits, current = made.commits, made.current_epoch
    store.save(f"kip1094-last-epoch-{client}", {"commits": commits, "log": log.blob()})
    # The broker's part first: batches without epochs give a client none to commit.
    _require_epochs_stamped(log)
    if commits and all(c.epoch is None for c in commits):
        not_supported_by_client(made.version or client, "a leader epoch in its offset commits",
                                f"every commit read back without one: {commits}")
    appended = [epoch_of_offset(log.batches, c.last_offset) for c in commits]
    require_scene(any(e is not None and e < current for e in appended),
                  f"the harness's {client} consumer made no commit after a record older than the leader's epoch "
                  f"{current}: {commits}; log {describe_log(log.batches)}")
    assert_commit_epochs_follow_consumption(commits, log.batches, client)
    for c, answer in zip(commits, made.validations, strict=True):
        assert_commit_validates(c, answer)


@pytest.mark.promise("kip1094.txn-commit-epoch", "kip320.txn-offset-commit.epoch-kept")
def test_transactional_commit_carries_the_epoch_of_the_last_consumed_record(
    cluster: Cluster, two_epochs: Log, topic_factory: TopicFactory, run_names: RunNames
) -> None:
    """KIP-1094 consumer-offsets guide, "Committing Specific Offsets" (sendOffsetsToTransaction with
    "the offset of the next record ... ideally combined with the leader epoch") and KIP-320's
    TxnOffsetCommit LeaderEpoch: the Java client copies the 40 records of a log whose first 20 were
    appended one epoch before the rest, committing in transactions of 5 with each record's own
    epoch. Every TxnOffsetCommit on the wire carries the epoch of the record before its offset: the
    commit of offset 20 carries the older epoch, not the leader's current one."""
    log = two_epochs
    values = [r.value or b"" for b in log.batches if not b.is_control for r in b.records]
    run = java_copy_existing(cluster, log.topic, values, topic_factory(), run_names.group("kip1094-txn-epoch"))
    store.save("kip1094-txn-commit-epochs", {"commits": run.commits, "log": log.blob()})
    _require_epochs_stamped(log)
    require_commits_accepted(run)
    assert_transaction_outcome(run, "copied")
    assert_txn_commit_epochs_follow_consumption(run.commits, log.batches, "java")


@pytest.fixture(scope="module")
def markers_read(client: str, cluster: Cluster, transactions: Log, run_names: RunNames) -> MarkerCommit:
    """Each client stack reads the three transactions (read_committed) to the log end, then commits."""
    try:
        return marker_commit(cluster, transactions, run_names.group(f"kip1094-markers-{client}"), client)
    except NotReadThrough as exc:
        stalled_read(client, exc)


@pytest.mark.client_axis
@pytest.mark.parametrize("client", STACKS, scope="module")
@pytest.mark.promise("kip1094.next-offset-past-markers")
def test_position_and_commit_move_past_transaction_markers(
    client: str, markers_read: MarkerCommit, transactions: Log
) -> None:
    """KIP-1094 consumer-offsets guide, "Control Records vs Data Records" and "Consumer position": after
    reading three committed transactions (read_committed), position() and the committed offset are the
    log end, past the last COMMIT marker, so the lag is 0; the committed epoch is the epoch of the
    last record before it. That record is the marker, appended in a later epoch than its
    transaction's data (the leader moved between the two): the data's epoch would not validate
    (see harness.checks.committed_offsets), so the committed pair must pass OffsetsForLeaderEpoch.
    franz-go has no position(): its position is the offset it would commit (UncommittedOffsets). A
    client that commits no epoch (before KIP-320) is judged on the offsets; its epoch is then not
    supported by this client."""
    log, read = transactions, markers_read
    last, data = log.batches[-1], [b for b in log.batches if not b.is_control]
    require_scene(last.control_type() == "COMMIT",
                  f"the harness's log should end in the last transaction's COMMIT marker: {describe_log(log.batches)}")
    assert last.partition_leader_epoch > data[-1].partition_leader_epoch, (
        f"{STAMPED}: the leader moved between the last transaction's data and its COMMIT marker, yet the marker "
        f"carries epoch {last.partition_leader_epoch}, the data {data[-1].partition_leader_epoch}: "
        f"{describe_log(log.batches)}")
    # Why the marker's epoch and not the data's: the data's epoch ends where the marker's begins.
    assert_epoch_ends_before_the_next(read.data_epoch.epoch, read.data_epoch_answer, log.end, log.batches)
    store.save(f"kip1094-markers-{client}", {"position": read.position, "committed": read.committed,
                                             "end": log.end, "log": log.blob(), "read": read.read})
    with_epoch = read.committed.epoch is not None
    assert_commit_past_control_records(read.position, read.committed, log.batches, log.end, client,
                                       read.position_of, with_epoch)
    if not with_epoch:
        not_supported_by_client(read.version or client, "a leader epoch in its offset commits",
                                f"the commit past the markers read back as {read.committed}, its offsets right")
    assert_commit_validates(read.committed, read.validation)


@pytest.mark.client_axis
@pytest.mark.parametrize("client", STACKS, scope="module")
@pytest.mark.promise("kip1094.poll-hands-no-control-record")
def test_poll_hands_the_application_no_control_record(
    client: str, markers_read: MarkerCommit, transactions: Log
) -> None:
    """KIP-1094 consumer-offsets guide, "Control Records vs Data Records" and its conclusion ("The
    Consumer poll returns only data records"): reading three committed transactions, each followed by
    its COMMIT marker, poll hands the application every data record once and none of the markers."""
    assert_poll_hands_no_control_record(markers_read.read, transactions.batches, client)


@pytest.fixture(scope="module")
def aborted_read(client: str, cluster: Cluster, aborted_last: Log, run_names: RunNames) -> MarkerCommit:
    """Each client stack reads a committed then an aborted transaction (read_committed) to the log end,
    then commits."""
    try:
        return marker_commit(cluster, aborted_last, run_names.group(f"kip1094-aborted-{client}"), client)
    except NotReadThrough as exc:
        stalled_read(client, exc)


@pytest.mark.client_axis
@pytest.mark.parametrize("client", STACKS, scope="module")
@pytest.mark.promise("kip1094.next-offset-past-abort-marker")
def test_position_and_commit_move_past_a_trailing_abort_marker(
    client: str, aborted_read: MarkerCommit, aborted_last: Log
) -> None:
    """KIP-1094 consumer-offsets guide, "Control Records vs Data Records" (control records "mark the end
    of transactions" that are "either fully committed or aborted", and "also advance the offset") and
    "How to Know Which Offset to Commit" (the position steps over the markers at the end of a
    partition; a commit short of them leaves lag): the log ends in an aborted transaction, its ABORT
    marker last. A read_committed consumer that consumed the committed transaction before it has
    position() and commits the log end, past the aborted records and their marker, so the lag is 0;
    the committed epoch is the epoch of the last record before that offset, the ABORT marker, which
    was appended after the leader moved (the epoch of the last record consumed would end at the
    marker, short of the commit: it would not validate). franz-go has no position(): its position is
    the offset it would commit (UncommittedOffsets). A client that commits no epoch (before KIP-320)
    is judged on the offsets; its epoch is then not supported by this client."""
    log, read = aborted_last, aborted_read
    last, data = log.batches[-1], committed_data(log.batches)
    require_scene(last.control_type() == "ABORT" and data,
                  f"the harness's log should end in an aborted transaction's ABORT marker after a committed "
                  f"transaction: {describe_log(log.batches)}")
    assert last.partition_leader_epoch > data[-1].partition_leader_epoch, (
        f"{STAMPED}: the leader moved between the aborted transaction's data and its ABORT marker, yet the "
        f"marker carries epoch {last.partition_leader_epoch}, the last committed data "
        f"{data[-1].partition_leader_epoch}: {describe_log(log.batches)}")
    assert_epoch_ends_before_the_next(read.data_epoch.epoch, read.data_epoch_answer, log.end, log.batches)
    store.save(f"kip1094-aborted-markers-{client}", MarkerRead(read, log.end, log.blob()))
    require_scene(data[-1].last_offset in read.read,
                  f"the harness's {client} consumer was to read through the last committed record "
                  f"{data[-1].last_offset}; it was handed {len(read.read)} records, up to "
                  f"{max(read.read, default=None)}")
    with_epoch = read.committed.epoch is not None
    assert_commit_past_control_records(read.position, read.committed, log.batches, log.end, client,
                                       read.position_of, with_epoch)
    if not with_epoch:
        not_supported_by_client(read.version or client, "a leader epoch in its offset commits",
                                f"the commit past the ABORT marker read back as {read.committed}, its offsets right")
    assert_commit_validates(read.committed, read.validation)
