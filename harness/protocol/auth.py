"""How the raw client proves who it is: TLS (server verification, client certificates) and SASL
(PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), read from the same settings librdkafka takes.

librdkafka's configuration is the one place a run's security lives (`Cluster.client_config()`);
`from_client_config` turns it into what `RawClient.connect` takes, so the raw client reaches every
target the other clients reach. Secrets stay in `Credentials`, whose repr leaves them out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.protocol.exceptions import AuthenticationFailed

SCRAM = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISMS = ("PLAIN", *SCRAM)
TLS_PROTOCOLS = ("SSL", "SASL_SSL")
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class Credentials:
    mechanism: str
    username: str
    password: str = field(repr=False)

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise AuthenticationFailed(
                f"SASL mechanism {self.mechanism!r} is not one the raw client speaks; "
                f"use one of {', '.join(MECHANISMS)}"
            )


@dataclass(frozen=True)
class Transport:
    """What `RawClient.connect` needs beyond an address: a TLS context and SASL credentials."""

    tls: ssl.SSLContext | None = None
    sasl: Credentials | None = None


def tls_context(
    cafile: str | None, certfile: str | None = None, keyfile: str | None = None,
    key_password: str | None = None, check_hostname: bool = True,
) -> ssl.SSLContext:
    """A client TLS context: the server verified against `cafile` (the system's CAs without one),
    its name checked unless `check_hostname` is off, and a client certificate for mTLS."""
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = check_hostname
    if certfile:
        ctx.load_cert_chain(certfile, keyfile or None, password=key_password or None)
    return ctx


def from_client_config(config: Mapping[str, str]) -> Transport:
    """The raw client's TLS and SASL from librdkafka settings (`security.protocol`, `sasl.*`,
    `ssl.ca.location`, `ssl.certificate.location`, `ssl.key.location`, `ssl.key.password`,
    `ssl.endpoint.identification.algorithm`)."""
    protocol = _protocol(config)
    sasl = None
    if protocol in SASL_PROTOCOLS:
        sasl = Credentials(str(config.get("sasl.mechanism", "GSSAPI")).upper(),
                           str(config.get("sasl.username", "")), str(config.get("sasl.password", "")))
    return Transport(tls_from_client_config(config), sasl)


def tls_from_client_config(config: Mapping[str, str]) -> ssl.SSLContext | None:
    if _protocol(config) not in TLS_PROTOCOLS:
        return None
    return tls_context(
        config.get("ssl.ca.location"), config.get("ssl.certificate.location"), config.get("ssl.key.location"),
        config.get("ssl.key.password"),
        check_hostname=str(config.get("ssl.endpoint.identification.algorithm", "https")).lower() != "none",
    )


def without_tls(config: Mapping[str, str]) -> dict[str, str]:
    """The same settings with TLS taken off: what a client of the protocol proxy uses, the proxy
    holding the TLS session to the broker (SASL passes through it unchanged)."""
    plain = {k: v for k, v in config.items() if not k.startswith("ssl.")}
    protocol = _protocol(config)
    if protocol in TLS_PROTOCOLS:
        plain["security.protocol"] = "SASL_PLAINTEXT" if protocol == "SASL_SSL" else "PLAINTEXT"
    return plain


def _protocol(config: Mapping[str, str]) -> str:
    protocol = str(config.get("security.protocol", "PLAINTEXT")).upper()
    if protocol not in PROTOCOLS:
        raise AuthenticationFailed(f"security.protocol {protocol!r}: use one of {', '.join(PROTOCOLS)}")
    return protocol


class ScramClient:
    """The client side of SCRAM (RFC 5802, RFC 7677) as Kafka speaks it: no channel binding."""

    def __init__(self, mechanism: str, username: str, password: str, nonce: str | None = None) -> None:
        self.hash = SCRAM[mechanism]
        self.username = username.replace("=", "=3D").replace(",", "=2C")
        self._password = password
        self.nonce = nonce or base64.b64encode(secrets.token_bytes(24)).decode()
        self._bare = f"n={self.username},r={self.nonce}"
        self._server_signature = b""

    def first(self) -> bytes:
        return f"n,,{self._bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        fields = _attributes(server_first)
        if "e" in fields:
            raise AuthenticationFailed(f"SCRAM: the server refused the first message: {fields['e']}")
        nonce, salt, iterations = fields.get("r", ""), fields.get("s", ""), fields.get("i", "")
        if not nonce.startswith(self.nonce) or not salt or not iterations.isdigit():
            raise AuthenticationFailed(f"SCRAM: malformed server-first message {server_first!r}")
        salted = hashlib.pbkdf2_hmac(self.hash, self._password.encode(), base64.b64decode(salt), int(iterations))
        client_key = hmac.digest(salted, b"Client Key", self.hash)
        stored_key = hashlib.new(self.hash, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        message = f"{self._bare},{server_first.decode()},{without_proof}".encode()
        signature = hmac.digest(stored_key, message, self.hash)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.digest(salted, b"Server Key", self.hash)
        self._server_signature = hmac.digest(server_key, message, self.hash)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        """The server proves it knew the salted password too; a target that cannot is refused."""
        fields = _attributes(server_final)
        if "e" in fields:
            raise AuthenticationFailed(f"SCRAM: the server refused the proof: {fields['e']}")
        if not hmac.compare_digest(base64.b64decode(fields.get("v", "")), self._server_signature):
            raise AuthenticationFailed("SCRAM: the server's signature does not match: it does not hold this user's key")


def _attributes(message: bytes) -> dict[str, str]:
    out = {}
    for part in message.decode(errors="replace").split(","):
        key, sep, value = part.partition("=")
        if sep:
            out[key] = value
    return out
