"""KIP-320's Java consumer API: LogTruncationException's type, the reset policy's log line, seek with an
epoch, and OffsetAndMetadata's old constructors (harness.scenarios.java_consumer_api).

The API is the one the KIP's "Public Interfaces" defines, in Java; the other stacks have none of these
names (librdkafka and franz-go report a truncation their own way, judged by the truncation checks).
The two truncation checks need a leader that advertises OffsetForLeaderEpoch v3+, the first version
kafka-clients validates a position with: without it they end "not supported by this target".
"""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.checks.java_consumer_api import (
    assert_old_constructors_commit_no_epoch,
    assert_seek_with_epoch_makes_no_remote_call,
    assert_truncation_is_an_out_of_range_exception,
    assert_truncation_reset_is_logged,
)
from harness.histories import store
from harness.histories.java_consumer_api import TwoEpochLog
from harness.scenarios.java_consumer_api import (
    commits_by_constructor,
    seek_past_the_epoch_end,
    seek_while_idle,
    two_epoch_log,
)

pytestmark = [pytest.mark.kip320, pytest.mark.client_axis, pytest.mark.client_stack("java")]


@pytest.fixture(scope="module")
def two_epochs(request: pytest.FixtureRequest, cluster: Cluster) -> TwoEpochLog:
    """20 records, a leader move, 10 more, on a 3-replica partition; built once."""
    return two_epoch_log(cluster, module_topic(request, "java-api", 3))


@pytest.mark.promise("kip320.consumer.log-truncation-is-out-of-range")
def test_a_truncation_without_a_reset_policy_is_caught_as_offset_out_of_range(
    cluster: Cluster, two_epochs: TwoEpochLog
) -> None:
    """KIP-320 "Public Interfaces": LogTruncationException "extends from OffsetOutOfRangeException for
    compatibility. If a user's offset reset policy is set to "none," they will still be able to catch
    OffsetOutOfRangeException." A consumer with auto.offset.reset none seeks to (25, the first epoch)
    on a partition whose leader moved at offset 20: its validation learns the epoch ended at 20, and
    poll raises an exception that the driver's catch of OffsetOutOfRangeException catches (instanceof,
    not the class name), naming divergent offset 20, and reads nothing from 20 on."""
    run = seek_past_the_epoch_end(cluster, two_epochs, "none")
    store.save("kip320-java-api-truncation-none", run)
    assert_truncation_is_an_out_of_range_exception(run)


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.promise("kip320.consumer.reset-logs-truncation")
def test_a_truncation_handled_by_the_reset_policy_is_logged(
    cluster: Cluster, two_epochs: TwoEpochLog, reset: str
) -> None:
    """KIP-320 "Consumer Handling": with "earliest" or "latest", the consumer resets to the divergence
    point automatically, and "will log a message to indicate that the truncation was detected". The
    same seek past the first epoch's end, with auto.offset.reset `reset`: the consumer raises
    nothing, reads from offset 20 every record written there, and its client log (INFO and up) holds a
    line naming the truncation and the partition."""
    run = seek_past_the_epoch_end(cluster, two_epochs, reset)
    store.save(f"kip320-java-api-truncation-{reset}", run)
    assert_truncation_reset_is_logged(run)


@pytest.mark.promise("kip320.consumer.seek-makes-no-remote-call")
def test_seek_with_an_epoch_makes_no_remote_call(cluster: Cluster, two_epochs: TwoEpochLog) -> None:
    """KIP-320 "Public Interfaces", seek(TopicPartition, OffsetAndMetadata): "Like the other seek()
    overload, this method does not make any remote calls." A consumer that read the partition is left
    alone until it has sent nothing for 1.5 s, then seeks to (5, the first epoch): it sends no request
    through the proxy from the command until 1.5 s after seek returned; polled again, it sends requests
    (the validation the KIP defers to "the next call to poll()")."""
    run = seek_while_idle(cluster, two_epochs)
    store.save("kip320-java-api-seek-window", run)
    assert_seek_with_epoch_makes_no_remote_call(run)


@pytest.mark.promise("kip320.consumer.old-constructors-commit-no-epoch")
def test_old_offset_and_metadata_constructors_commit_no_epoch(
    cluster: Cluster, two_epochs: TwoEpochLog, run_names: RunNames
) -> None:
    """KIP-320 "Public Interfaces", OffsetAndMetadata: "Old constructors will still be supported and
    will use Optional.empty() as the default leader epoch." A group member reads the partition to its
    end (the second epoch), then commits offset 5 built by OffsetAndMetadata(5), offset 6 by
    OffsetAndMetadata(6, metadata) and offset 7 by OffsetAndMetadata(7, Optional.of(first epoch),
    metadata): the first two have no leaderEpoch() and go out with CommittedLeaderEpoch -1, not the
    consumed epoch; the third carries its epoch (the premise that the field is sent at all)."""
    run = commits_by_constructor(cluster, two_epochs, run_names.group("kip320-java-api-commits"))
    store.save("kip320-java-api-commits", run)
    assert_old_constructors_commit_no_epoch(run)
