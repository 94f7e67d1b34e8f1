"""Each client's history across a forced unclean election, judged by Jepsen's anomaly checks.

One unclean election (harness.scenarios.truncation, the scene of KIP-320's truncation checks) is
watched by every client stack the run judges. Every record the harness's writers sent and every
record each consumer's driver reported, before the election and after it, is written in the one
history format; each auto-reset consumer's history (the sends and its own polls) is judged alone in
Spark, and what the checks name is reported beside the test (counts, every case, the timeline with
the election), whatever the verdict.

Spark and an unclean election (marked heavy): `tox -e integrity` and the client axis (`tox -e clients`, `kcts
matrix --client-stacks all`) run it; the main job and the gate do not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fixtures.cluster import UNCLEAN, Cluster, fault_control
from fixtures.integrity import AnomalyReporter
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.checks.truncation import require_truncation_detectable
from harness.checks.unclean_anomalies import assert_only_the_truncation
from harness.histories import store
from harness.scenarios.truncation import STACKS, TruncationHistory, judged_stacks, unclean_election_watched
from harness.scenarios.unclean_anomalies import judge_consumer
from harness.verdicts import not_supported_by_client

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.integrity, pytest.mark.heavy, pytest.mark.needs_fault_control, pytest.mark.client_axis]

UNCLEAN_TOPIC = {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}


@pytest.fixture(scope="module")
def watched(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames) -> Iterator[TruncationHistory]:
    """One forced unclean election watched by every client stack judged, every operation kept."""
    with fault_control(cluster, UNCLEAN):
        topic = module_topic(request, "histories", 2, UNCLEAN_TOPIC)
        groups = {client: run_names.group(f"histories-{client}") for client in judged_stacks()}
        yield unclean_election_watched(cluster, topic, groups)


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.parametrize("client", STACKS)
@pytest.mark.promise("kip320.consumer.history-shows-only-the-truncation")
def test_consumer_history_across_an_unclean_election_shows_only_the_truncation(
    watched: TruncationHistory, spark: SparkSession, integrity_dir: Path, anomaly_reporter: AnomalyReporter,
    client: str, reset: str,
) -> None:
    """KIP-320, "Consumer Handling", in Jepsen's terms: a consumer with auto.offset.reset earliest or
    latest, positioned beyond the divergence point when the unclean election truncates its records,
    resets to the divergence point "as precisely as possible" and reads on. Over every acknowledged
    send and its polls, Jepsen's checks find only the truncation itself (inconsistent-offsets at the
    truncated offsets) and its one rewind to the divergence offset (nonmonotonic-poll there); a lost
    write, an unseen record, a skip, a duplicate or a rewind elsewhere is the consumer's."""
    consumer = f"{client}/{reset}"
    refused = [r for r in watched.consumer(consumer).refused if r.lacks]
    if refused:
        not_supported_by_client(watched.clients.get(client) or client, f"the API behind `{refused[0].command}`",
                                f"{refused[0].exception}: {refused[0].message}")
    require_truncation_detectable(client, watched.leader_offers)
    judged = judge_consumer(spark, watched, consumer, integrity_dir / "history")
    anomaly_reporter.report(consumer, judged.findings, judged.operations, judged.folder, judged.events)
    store.save(f"kip320-unclean-anomalies-{consumer.replace('/', '-')}", judged.seen)
    try:
        assert_only_the_truncation(judged.seen)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {watched.evidence()}") from None
