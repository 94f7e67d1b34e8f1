"""Java clients: drivers compile against the resolved jars, and their JSON events are recorded."""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer

from harness.clients.jvm import VERIFIABLE_PRODUCER, JavaClient, client_command, compile_driver
from harness.clients.produce_read import read_partition
from harness.cluster.base import Cluster
from harness.cluster.combined import ensure_cds_archive
from harness.kafka.dist import resolve
from harness.kafka.releases import line


def test_driver_runs_on_the_kafka_clients_of_the_version_under_test() -> None:
    dist = resolve("4.4.0")
    with JavaClient.driver(dist, "KctsEcho", []) as echo:
        assert echo.wait_exit(60) == 0, echo.describe()
    assert echo.events == [{"event": "version", "kafka_clients": "4.4.0"}], echo.describe()


@pytest.mark.parametrize("program", ["driver", "kafka-tools"])
def test_a_java_client_maps_the_class_data_archive_of_its_kafka_classpath(program: str) -> None:
    """A client's classpath adds a driver's classes or the Exit forwarder; the JVM keeps the archive's
    classes only while the classpath starts with the one it was dumped for (each client start cost
    about twice the CPU when they came first)."""
    dist = resolve("4.4.0")
    archive = ensure_cds_archive(dist)
    if program == "driver":
        cmd = client_command(dist, "KctsEcho", [], compile_driver(dist, "KctsEcho"))
    else:
        cmd = client_command(dist, VERIFIABLE_PRODUCER, ["--help"])
    assert f"-XX:SharedArchiveFile={archive}" in cmd, cmd
    logged = [*cmd[:1], "-Xlog:class+path=info", *cmd[1:]]
    lines = [line.split("] ", 1)[-1] for line in subprocess.run(
        logged, capture_output=True, text=True, timeout=60).stdout.splitlines() if "[class,path]" in line]
    mismatch = [line for line in lines if "mismatch" in line]
    assert not mismatch, f"the JVM refused the archive's classes: {mismatch[0][:300]}"
    checked_ok = {a.removeprefix("checking shared classpath entry: ") for a, b in itertools.pairwise(lines)
                  if a.startswith("checking shared classpath entry: ") and b == "ok"}
    assert str(dist.jar("kafka-clients")) in checked_ok, "\n".join(lines[-20:])


@pytest.mark.live
def test_verifiable_producer_acks_are_recorded_and_readable(
    cluster: Cluster, topic: str, consumer_factory: Callable[..., Consumer], tmp_path: Path
) -> None:
    """VerifiableProducer's producer_send_success events give the offsets; a consumer reads the same values.

    VerifiableProducer sets retries=0 unless its config file says otherwise. In the gate this cluster's
    brokers run in the idle class, and one that missed its session timeout was fenced and lost its
    leadership: 3 of 50 sends failed NOT_LEADER_OR_FOLLOWER. The producer retries, as a client does;
    with idempotence, a retry writes no second copy."""
    dist = resolve(cluster.java_clients)
    config = tmp_path / "producer.properties"
    config.write_text("retries=2147483647\nenable.idempotence=true\n")
    # --command-config from 4.1 (KIP-1147); --producer.config before, deprecated since.
    option = "--command-config" if line(dist.version) >= (4, 1) else "--producer.config"
    args = ["--bootstrap-server", cluster.bootstrap_servers, "--topic", topic, "--max-messages", "50", "--acks", "-1",
            option, str(config)]
    with JavaClient(dist, VERIFIABLE_PRODUCER, args) as producer:
        assert producer.wait_exit(120) == 0, producer.describe()
    acks = [e for e in producer.events if e.get("event") == "producer_send_success"]
    assert len(acks) == 50, producer.describe()
    got = read_partition(consumer_factory(), topic, 0, 0, 50)
    assert [r.value.decode() for r in got] == [e["value"] for e in sorted(acks, key=lambda e: e["offset"])]


JAVAC_392 = """\
harness/clients/java/Kip1094NextOffsets.java:35: error: cannot find symbol
                    OffsetAndMetadata next = records.nextOffsets().get(tp);
                                                    ^
  symbol:   method nextOffsets()
  location: variable records of type ConsumerRecords<String,String>
1 error
"""


def test_a_method_an_older_client_lacks_is_named_from_javac() -> None:
    from harness.clients.jvm import first_error, missing_api

    assert missing_api(JAVAC_392) == "ConsumerRecords.nextOffsets()"
    assert first_error(JAVAC_392) == "cannot find symbol"
    assert missing_api("Foo.java:1: error: ';' expected\n") is None


@pytest.mark.live
@pytest.mark.parametrize("stack", ["java", "librdkafka"])
def test_a_producer_driver_stopped_mid_stream_reports_no_failed_write(cluster: Cluster, topic: str, stack: str) -> None:
    """The failover check's producers are stopped while they send, several times at once on a
    loaded gate: the stop itself must never surface as a failed or unreported write (a false FAIL
    of the broker, as kafka-tools' VerifiableProducer gave when its SIGTERM hook closed the producer
    under a send in flight). Each driver stops sending, then flushes and closes, on `exit`."""
    from harness.clients import stacks
    from harness.scenarios.kip359 import producer_driver, stop_producer, writes_of

    for round_ in range(3):
        driver = producer_driver(cluster, stack, topic)
        try:
            driver.start()
            # Stop at a different point of the stream each round, with sends surely in flight.
            driver.wait_for(lambda e, n=20 + 37 * round_: e.get("event") == "producer_send_success"
                            and int(str(e["value"]).split(".")[1]) >= n, 60, "acknowledged writes")
        finally:
            stop_producer(driver)
        w = writes_of(driver, stacks.get(stack).producer_prefix)
        stopped = [e for e in driver.events if e.get("event") == "stopped"]
        assert stopped and stopped[0]["unreported"] == 0, driver.describe()
        assert not w.failures and len(w.acks) == len(w.sent), (
            f"{stack}, round {round_}: {len(w.sent)} sent, {len(w.acks)} acknowledged, failures {w.failures[:3]}")
