"""A run's TLS and SASL settings for the JVM clients, made from librdkafka's (the one place they live).

The drivers and Apache's tools read them from a properties file in the session's scratch folder
(mode 0600, gone with the session), named by KCTS_CLIENT_PROPERTIES or `--command-config`; never
from a command line, where `ps` and the reports would show them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from harness import session
from harness.cluster.tls import pkcs12_keystore
from harness.errors import SetupError
from harness.protocol.auth import MECHANISMS, PROTOCOLS, SASL_PROTOCOLS, TLS_PROTOCOLS

ENV = "KCTS_CLIENT_PROPERTIES"
_LOGIN = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
_written: dict[str, Path] = {}


def security_properties(config: Mapping[str, str], folder: Path) -> dict[str, str]:
    """Java client properties for librdkafka's `security.protocol`, `sasl.*` and `ssl.*`; a client
    certificate becomes a PKCS#12 keystore in `folder` (Java reads few encrypted PEM keys)."""
    protocol = str(config.get("security.protocol", "PLAINTEXT")).upper()
    if protocol not in PROTOCOLS:
        raise SetupError(f"security.protocol {protocol!r}: use one of {', '.join(PROTOCOLS)}")
    props: dict[str, str] = {}
    if protocol == "PLAINTEXT":
        return props
    props["security.protocol"] = protocol
    if protocol in SASL_PROTOCOLS:
        mechanism = str(config.get("sasl.mechanism", "")).upper()
        if mechanism not in MECHANISMS:
            raise SetupError(f"the Java clients speak SASL {', '.join(MECHANISMS)}, not {mechanism!r}")
        props["sasl.mechanism"] = mechanism
        props["sasl.jaas.config"] = (
            f"{_LOGIN[mechanism]} required username={_quoted(config.get('sasl.username', ''))} "
            f"password={_quoted(config.get('sasl.password', ''))};"
        )
    if protocol in TLS_PROTOCOLS:
        if ca := config.get("ssl.ca.location"):
            props.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca)})
        if str(config.get("ssl.endpoint.identification.algorithm", "https")).lower() == "none":
            props["ssl.endpoint.identification.algorithm"] = ""
        if cert := config.get("ssl.certificate.location"):
            digest = hashlib.sha256(f"{cert}\0{config.get('ssl.key.location')}".encode()).hexdigest()[:12]
            store = pkcs12_keystore(Path(cert), Path(str(config.get("ssl.key.location"))),
                                    config.get("ssl.key.password"), folder / f"client-{digest}.p12")
            props.update({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(store.path),
                          "ssl.keystore.password": store.password, "ssl.key.password": store.password})
    return props


def properties_file(config: Mapping[str, str]) -> Path | None:
    """The session's properties file for these settings (written once), or None when they need
    nothing beyond a bootstrap address."""
    key = hashlib.sha256(json.dumps(sorted(config.items())).encode()).hexdigest()[:16]
    if key in _written and _written[key].exists():
        return _written[key]
    folder = session.current().scratch("java-security")
    folder.chmod(0o700)
    props = security_properties(config, folder)
    if not props:
        return None
    path = folder / f"client-{key}.properties"
    path.touch(mode=0o600)
    path.write_text(render(props))
    _written[key] = path
    return path


def render(props: Mapping[str, str]) -> str:
    """java.util.Properties text: backslashes and line ends escaped, so any value loads back as given."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")

    return "".join(f"{esc(k)}={esc(v)}\n" for k, v in props.items())


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
