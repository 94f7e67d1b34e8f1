"""The local backend's TLS, mTLS and SCRAM listeners, and every client kcts runs reaching them:
librdkafka, the raw client (TLS, SCRAM-SHA-256 and -512, verified server signature) and a Java driver."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import confluent
from harness.clients.admin import admin_client, create_topic
from harness.clients.jvm import JavaClient
from harness.cluster.local import LocalCluster, LocalClusterSpec, SaslConfig, TlsConfig
from harness.cluster.tls import Certificates, make_certificates
from harness.kafka.dist import resolve
from harness.protocol.auth import Credentials, Transport, from_client_config, tls_context
from harness.protocol.client import RawClient
from harness.protocol.exceptions import AuthenticationFailed, ConnectionFailed, ProtocolError
from harness.waiting import wait_until

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def secured(certs: Certificates) -> Iterator[LocalCluster]:
    """SASL_SSL with a required client certificate; its own clients use SCRAM-SHA-512."""
    spec = LocalClusterSpec(brokers=1, sasl=SaslConfig(mechanism="SCRAM-SHA-512"),
                            tls=TlsConfig(certs, client_auth=True))
    with LocalCluster(spec) as c:
        yield c  # type: ignore[misc]


def test_librdkafka_produces_and_reads_back_over_sasl_ssl_with_a_client_certificate(secured: LocalCluster) -> None:
    config = secured.client_config()
    assert config["security.protocol"] == "SASL_SSL" and config["sasl.mechanism"] == "SCRAM-SHA-512"
    with admin_client(secured) as admin:
        topic = create_topic(secured, admin, "tls-scram", replication_factor=1)
    with confluent.producer({**config, "acks": "all"}) as producer:
        producer.produce(topic, b"over tls")
    values: list[bytes | None] = []
    with confluent.consumer({**config, "group.id": "tls-scram", "auto.offset.reset": "earliest"}) as consumer:
        consumer.subscribe([topic])

        def read() -> bool:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                values.append(m.value())
            return bool(values)

        wait_until(read, 30, lambda: f"read so far: {values}")
    assert values == [b"over tls"]


def test_a_java_driver_reads_and_commits_over_sasl_ssl_with_a_client_certificate(secured: LocalCluster) -> None:
    """The driver gets SCRAM, the CA and the client key (as PKCS#12) from a 0600 properties file."""
    with admin_client(secured) as admin:
        topic = create_topic(secured, admin, "tls-java", replication_factor=1)
    with confluent.producer({**secured.client_config(), "acks": "all"}) as producer:
        producer.produce(topic, b"for java")
    args = [secured.bootstrap_servers, topic, "0", "tls-java", "read_committed", "10", "1"]
    with JavaClient.driver(resolve(secured.java_clients), "Kip1094NextOffsets", args,
                           config=secured.client_config()) as driver:
        code = driver.wait_exit(90)
    end = [e for e in driver.events if e.get("event") == "end"]
    assert code == 0 and end and end[-1]["position"] == 1 and end[-1]["committed"]["offset"] == 1, driver.describe()
    assert secured.client_config()["sasl.password"] not in " ".join(driver.command)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"])
def test_the_raw_client_authenticates_over_tls(secured: LocalCluster, mechanism: str) -> None:
    config = {**secured.client_config(), "sasl.mechanism": mechanism}
    host, port = secured.broker_address(secured.broker_ids[0])
    with RawClient.connect(host, port, transport=from_client_config(config)) as c:
        md = c.send("Metadata", 12, {"Topics": None, "AllowAutoTopicCreation": False})
    assert [b["Port"] for b in md["Brokers"]] == [port], md


def test_a_wrong_password_is_refused_by_name(secured: LocalCluster) -> None:
    transport = from_client_config(secured.client_config())
    wrong = dataclasses.replace(transport, sasl=Credentials("SCRAM-SHA-256", "alice", "not-her-password"))
    host, port = secured.broker_address(secured.broker_ids[0])
    with pytest.raises(AuthenticationFailed, match="SASL/SCRAM-SHA-256 authentication of 'alice' failed"):
        RawClient.connect(host, port, transport=wrong)


def test_a_broker_certificate_from_another_ca_is_refused(secured: LocalCluster, tmp_path: Path) -> None:
    other = make_certificates(tmp_path / "other")
    host, port = secured.broker_address(secured.broker_ids[0])
    with pytest.raises(AuthenticationFailed, match="TLS certificate was refused"):
        RawClient.connect(host, port, transport=Transport(tls=tls_context(str(other.ca))))


def test_without_a_client_certificate_the_mtls_listener_refuses(secured: LocalCluster, certs: Certificates) -> None:
    host, port = secured.broker_address(secured.broker_ids[0])
    with pytest.raises((ConnectionFailed, AuthenticationFailed)):
        RawClient.connect(host, port, transport=Transport(tls=tls_context(str(certs.ca))), timeout=10)


def test_plaintext_to_a_tls_listener_is_named_as_such(secured: LocalCluster) -> None:
    host, port = secured.broker_address(secured.broker_ids[0])
    with pytest.raises(ProtocolError, match=r"its first bytes are a TLS record: a TLS listener"):
        RawClient.connect(host, port, timeout=10)
