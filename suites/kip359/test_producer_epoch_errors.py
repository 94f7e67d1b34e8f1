"""KIP-359 producers meeting the epoch errors in Produce answers: refresh, retry, write once (confluent-kafka)."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from fixtures.topics import TopicFactory
from harness.checks.client_reactions import (
    assert_written_once_through_epoch_errors,
    metadata_answers,
    require_epoch_told,
)
from harness.checks.produce_fencing import partition_fields, schema_evidence, versions_with_epoch
from harness.histories import store
from harness.scenarios.client_reactions import producer_through_epoch_errors
from harness.scenarios.kip359 import produce_schema
from harness.verdicts import not_supported, not_supported_by_client

pytestmark = pytest.mark.kip359


@pytest.mark.parametrize("error", ["FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH"])
@pytest.mark.promise("kip359.producer.reacts-to-epoch-errors")
def test_idempotent_producer_retries_epoch_errors_and_writes_once(
    cluster: Cluster, topic_factory: TopicFactory, error: str
) -> None:
    """KIP-359 "Proposed Changes": "If the producer sees the FENCED_LEADER_EPOCH in a produce
    response, it will refresh metadata and retry. Alternatively, in the case of UNKNOWN_LEADER_EPOCH
    ... the producer will simply backoff and retry." Premises: the target's Produce carries
    CurrentLeaderEpoch (else "not supported by this target", its schema as evidence), and the client
    sends it (else "not supported by this client": a producer that sends no epoch is never answered
    with these errors), where the target's Metadata gave it one to send (else "target refused the
    premise", what Metadata answered as evidence). Then the protocol proxy answers the first three
    Produce requests of an idempotent librdkafka producer (acks=all) with the error, after the broker
    appended them: every one of the 30 records is delivered without a failure report and the
    partition holds each once, in order; after FENCED_LEADER_EPOCH the producer asked for Metadata."""
    schema = produce_schema(cluster)
    fields = partition_fields(schema.specs, schema.spoken)
    if not versions_with_epoch(fields):
        not_supported("KIP-359 CurrentLeaderEpoch in Produce", schema_evidence(fields, schema.advertised),
                      target=cluster.target, capability="produce-current-leader-epoch")
    run = producer_through_epoch_errors(cluster, topic_factory(), error)
    store.save(f"kip359-producer-{error.lower()}", run)
    # No Produce sent at all is the check's own premise (require_ruled); -1 in every entry is the
    # client's lack only where the target's Metadata gave it an epoch to send.
    if run.sent_epochs and not any(e >= 0 for e in run.sent_epochs):
        require_epoch_told(run, "Produce", "Produce partition entries")
        not_supported_by_client(run.client, "KIP-359 CurrentLeaderEpoch in Produce requests",
                                f"its {len(run.sent_epochs)} partition entries carried {sorted(set(run.sent_epochs))}"
                                f", though Metadata gave it the epoch ({metadata_answers(run.learned)})")
    assert_written_once_through_epoch_errors(run)
