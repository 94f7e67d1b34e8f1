"""A group member resumes from its group's committed offset, every client stack judged
(harness/scenarios/group_resume.py)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import RunNames, TopicFactory
from harness.checks.client_reads import assert_resumes_from_the_committed_offset
from harness.histories import store
from harness.scenarios.group_resume import resume
from harness.scenarios.truncation import STACKS

pytestmark = pytest.mark.kip1094


@pytest.mark.client_axis
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip1094.group-resumes-from-committed-offset")
# Offset 10 is inside the batch of 20: a target whose Fetch from inside a batch serves no batch (Tansu
# 0.6.0) hands the member nothing, one defect with the mid-batch Fetch check's FAIL.
@pytest.mark.same_defect_as("fetch.mid-batch-offset-serves-its-batch")
def test_a_group_member_resumes_at_the_committed_offset(
    client: str, cluster: Cluster, topic_factory: TopicFactory, run_names: RunNames
) -> None:
    """KIP-1094 consumer-offsets guide, "Offsets": the committed offset "is then used to resume
    consumption from the correct position in case the consumer restarts or a rebalance occurs within
    the consumer group". The harness writes 20 records and commits offset 10 for a new group (read back
    with OffsetFetch); the client's consumer then joins the group with auto.offset.reset earliest. The
    first record it hands the application is offset 10, and it reads on to the log end, each record
    once. A client that cannot read the group's commit back, at whatever OffsetFetch and Metadata
    versions the broker offers, starts nowhere or at 0 and fails here (franz-go v1.21.0 against a broker
    whose Metadata stops below v10, twmb/franz-go#1312)."""
    got = resume(cluster, topic_factory(), run_names.group(f"resume-{client}"), client)
    store.save(f"group-resume-{client}", got)
    assert_resumes_from_the_committed_offset(got)
