"""Certificates for local clusters' TLS listeners: a throwaway CA, a broker certificate naming the
loopback address, and a client certificate for mTLS, written as PEM files.

Made with the `cryptography` package: nothing is fetched and nothing outlives the folder given.
Private keys are encrypted with a password (PKCS#8 with PBES2), which librdkafka and Python's ssl
read. Java reads PEM keys only with the older PBES1 ciphers (Kafka's PemStore asks for a
SecretKeyFactory named by the key's algorithm, and there is none named "PBES2"), so JVMs get the
same key and certificate as a PKCS#12 keystore (`pkcs12_keystore`).
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import SetupError


@dataclass(frozen=True)
class Identity:
    """One certificate and its encrypted key, as PEM files."""

    cert: Path
    key: Path
    key_password: str = field(repr=False)


@dataclass(frozen=True)
class Keystore:
    path: Path
    password: str = field(repr=False)


def pkcs12_keystore(cert: Path, key: Path, key_password: str | None, out: Path) -> Keystore:
    """The PEM certificate and key as a PKCS#12 keystore at `out` (mode 0600) for a JVM, under a
    fresh password that also protects the key."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:
        raise SetupError("a client certificate for Java clients needs the 'cryptography' package") from None
    try:
        private = serialization.load_pem_private_key(key.read_bytes(), key_password.encode() if key_password else None)
        chain = x509.load_pem_x509_certificates(cert.read_bytes())
    except (OSError, ValueError, TypeError) as exc:
        raise SetupError(f"cannot read the client certificate {cert} and key {key}: {exc}; check "
                         "--ssl-certificate-location, --ssl-key-location and the key password") from None
    password = secrets.token_urlsafe(18)
    blob = pkcs12.serialize_key_and_certificates(
        b"kcts", private, chain[0], chain[1:] or None,  # type: ignore[arg-type]
        serialization.BestAvailableEncryption(password.encode()),
    )
    out.touch(mode=0o600)
    out.write_bytes(blob)
    return Keystore(out, password)


@dataclass(frozen=True)
class Certificates:
    ca: Path  # the CA certificate (PEM): what clients and brokers trust
    broker: Identity  # names 127.0.0.1 and localhost
    client: Identity  # CN=kcts-client, for mTLS


def make_certificates(folder: Path, days: int = 2) -> Certificates:
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise SetupError("making test certificates needs the 'cryptography' package: pip install -e '.[dev]'") from None

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    until = now + datetime.timedelta(days=days)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kcts"),
                          x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder().subject_name(name("kcts test CA")).issuer_name(name("kcts test CA"))
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now).not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
            decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "ca.pem").write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))

    def issue(stem: str, cn: str, usage: x509.ObjectIdentifier, sans: list[x509.GeneralName]) -> Identity:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder().subject_name(name(cn)).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(until)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())
        password = secrets.token_urlsafe(18)
        cert_path, key_path = folder / f"{stem}.pem", folder / f"{stem}-key.pem"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(password.encode()),
        ))
        key_path.chmod(0o600)
        return Identity(cert_path, key_path, password)

    broker = issue("broker", "localhost", ExtendedKeyUsageOID.SERVER_AUTH,
                   [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client = issue("client", "kcts-client", ExtendedKeyUsageOID.CLIENT_AUTH, [])
    return Certificates(folder / "ca.pem", broker, client)
