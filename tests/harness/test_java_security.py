"""librdkafka security settings turned into Java client properties (harness.clients.java_security)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.clients.java_security import render, security_properties
from harness.cluster.tls import make_certificates
from harness.errors import SetupError


def test_plaintext_needs_no_property() -> None:
    assert security_properties({"bootstrap.servers": "127.0.0.1:9092"}, Path("/nonexistent")) == {}


def test_scram_over_tls_becomes_a_jaas_entry_and_a_pem_truststore(tmp_path: Path) -> None:
    props = security_properties({
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "u",
        "sasl.password": 'p"w\\d', "ssl.ca.location": "/ca.pem", "ssl.endpoint.identification.algorithm": "none",
    }, tmp_path)
    assert props == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" '
                            'password="p\\"w\\\\d";',
        "ssl.truststore.type": "PEM", "ssl.truststore.location": "/ca.pem",
        "ssl.endpoint.identification.algorithm": "",
    }


def test_a_client_certificate_becomes_a_pkcs12_keystore_under_a_fresh_password(tmp_path: Path) -> None:
    certs = make_certificates(tmp_path / "certs")
    props = security_properties({
        "security.protocol": "SSL", "ssl.ca.location": str(certs.ca),
        "ssl.certificate.location": str(certs.client.cert), "ssl.key.location": str(certs.client.key),
        "ssl.key.password": certs.client.key_password,
    }, tmp_path)
    store = Path(props["ssl.keystore.location"])
    assert props["ssl.keystore.type"] == "PKCS12" and store.stat().st_mode & 0o077 == 0
    assert props["ssl.keystore.password"] != certs.client.key_password


def test_a_wrong_key_password_is_named(tmp_path: Path) -> None:
    certs = make_certificates(tmp_path / "certs")
    with pytest.raises(SetupError, match="key password"):
        security_properties({"security.protocol": "SSL", "ssl.certificate.location": str(certs.client.cert),
                             "ssl.key.location": str(certs.client.key), "ssl.key.password": "wrong"}, tmp_path)


def test_rendered_properties_escape_backslashes_and_line_ends() -> None:
    assert render({"a": "x\\y", "b": "l1\nl2"}) == "a=x\\\\y\nb=l1\\nl2\n"
