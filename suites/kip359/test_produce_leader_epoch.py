"""KIP-359 leader epoch in Produce: the field, and the fencing a broker does without it."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.delivery import anomalies, assert_exactly_once_in_order
from harness.checks.epoch_fencing import assert_covers, assert_epoch_validation
from harness.checks.produce_fencing import (
    LEADER_HINT_VERSION,
    assert_old_versions_append,
    assert_refused_with_leader_hint,
    partition_fields,
    schema_evidence,
    versions_with_epoch,
)
from harness.histories import store
from harness.scenarios.kip320 import CASES
from harness.scenarios.kip359 import (
    FailoverWrites,
    former_leader_produce,
    old_version_produce,
    produce_epoch_probes,
    produce_schema,
)
from harness.scenarios.truncation import STACKS
from harness.verdicts import known_gap, not_supported, require_scene

pytestmark = pytest.mark.kip359
RECORDED_WRITES = 300


@pytest.mark.promise("kip359.produce.current-leader-epoch", "kip359.produce.epoch-errors")
def test_produce_carries_current_leader_epoch(cluster: Cluster, topic_factory: TopicFactory) -> None:
    """KIP-359, "Public Interfaces": a new Produce version adds CurrentLeaderEpoch to each
    partition, and the leader answers a mismatch with FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH
    as KIP-320 does for Fetch. The verdict comes from the target's own Produce schema at every
    version it speaks: without the field anywhere, "not supported by this target", with the
    schema as evidence; with it, the fencing is checked at each version that has it."""
    schema = produce_schema(cluster)
    fields = partition_fields(schema.specs, schema.spoken)
    store.save("kip359-produce-schema", {"fields": fields, "advertised": list(schema.advertised)})
    with_epoch = versions_with_epoch(fields)
    if not with_epoch:
        not_supported("KIP-359 CurrentLeaderEpoch in Produce", schema_evidence(fields, schema.advertised),
                      target=cluster.target, capability="produce-current-leader-epoch")

    probes = produce_epoch_probes(cluster, topic_factory(), with_epoch)
    assert_covers(probes.answers, set(CASES))
    assert_epoch_validation(probes.answers, f"on {probes.topic}")


@pytest.mark.promise("kip359.produce.old-versions-skip-validation")
def test_produce_versions_without_current_leader_epoch_skip_validation(
    cluster: Cluster, topic_factory: TopicFactory
) -> None:
    """KIP-359, "Public Interfaces" ("For old versions, we will skip the epoch validation and retain
    the current behavior") and "Compatibility, Deprecation, and Migration Plan" ("Older versions of
    the produce API will skip the epoch check"). After a leader move (the partition's epoch above 0),
    the leader is sent one acks=all Produce at each version whose schema (the target's own) has no
    CurrentLeaderEpoch, the lowest it speaks first: on Apache Kafka that is every version, which has
    the field at none. (Apache Kafka 4.x advertises Produce from v0 for old librdkafka's sake, KAFKA-18659,
    but its schema starts at v3: v0-2 were removed in 4.0 and are refused, not appended without a
    check; the lowest version judged is the lowest of the schema.) Each is acknowledged, never answered
    with an epoch error, and read back at its offset. A target whose Produce carries the field at
    every version it speaks has no old version."""
    h = old_version_produce(cluster, topic_factory())
    store.save("kip359-old-versions", h)
    require_scene(h.leader_epoch > 0, f"the harness's leader move left {h.topic} at epoch {h.leader_epoch}")
    if not h.appends:
        not_supported("a Produce version without KIP-359's CurrentLeaderEpoch",
                      schema_evidence(h.fields, h.advertised))
    assert_old_versions_append(h)


@pytest.mark.promise("kip359.produce.stale-leader-refuses")
def test_produce_to_a_former_leader_is_refused_with_the_current_leader(
    cluster: Cluster, topic_factory: TopicFactory
) -> None:
    """KIP-359 ("Proposed Changes": the producer must learn when its metadata is stale) as Apache
    Kafka implements it: a Produce sent to the replica that led before a leader change is refused
    with NOT_LEADER_OR_FOLLOWER and nothing appended, at every version; from v10 the refusal
    carries the KIP-951 CurrentLeader (leader id and epoch, equal to what Metadata says) and the
    leader's endpoint."""
    former = former_leader_produce(cluster, topic_factory())
    answers = former.answers
    store.save("kip359-former-leader", {"answers": answers, "leader": former.leader,
                                        "epoch": former.epoch, "endpoint": list(former.endpoint)})
    require_scene(answers, f"the harness sent no Produce to the former leader {former.leader}")
    if not any(a.version >= LEADER_HINT_VERSION for a in answers):
        not_supported(f"the KIP-951 CurrentLeader hint in Produce (v{LEADER_HINT_VERSION} and later)",
                      f"the former leader {former.leader} was asked at every Produce version it speaks: "
                      f"v{sorted({a.version for a in answers})}",
                      target=cluster.target, capability="produce-current-leader-hint")
    assert_refused_with_leader_hint(answers, former.leader, former.epoch, former.endpoint)


@pytest.mark.client_axis
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip359.producer.no-duplicate-across-elections")
def test_idempotent_producer_across_leader_failovers_writes_no_duplicate_and_no_gap(
    failover_writes: FailoverWrites, client: str
) -> None:
    """KIP-359, "Motivation" (a write must not be accepted twice or by a stale leader across
    consecutive leader elections), with what brokers implement: an idempotent producer
    (enable.idempotence, acks=all) writing while its partition's leader is crashed, stopped and
    paused in turn has every write acknowledged and in the log exactly once, in send order, at its
    acknowledged offset: no duplicate, no gap."""
    w = failover_writes.writes_of(client)
    # Recorded: the first writes only (a prefix of a history is a history), to keep the file small.
    head = set(w.sent[:RECORDED_WRITES])
    store.save(f"kip359-failover-writes-{client}", {
        "sent": w.sent[:RECORDED_WRITES], "acks": [a for a in w.acks if a.value in head], "failures": w.failures,
        "log": [r for r in failover_writes.log if r.value in head],
    })
    try:
        assert_exactly_once_in_order(client, w.sent, w.acks, w.failures, failover_writes.log)
    except AssertionError as exc:
        failure = AssertionError(f"{exc}\n  faults: {failover_writes.faults}\n  epoch bumps: {w.epoch_bumps[:3]}")
        found = set(anomalies(w.sent, w.acks, w.failures, failover_writes.log))
        if client == "librdkafka" and w.epoch_bumps and found <= {"duplicate", "reorder"}:
            known_gap("librdkafka-idempotent-epoch-bump-duplicates", w.library).found(failure)
        raise failure from None
