"""The raw client's SCRAM exchange against RFC 7677's worked example, and the settings it reads."""

from __future__ import annotations

import pytest

from harness.protocol.auth import Credentials, ScramClient, from_client_config
from harness.protocol.exceptions import AuthenticationFailed

SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"


def rfc_client() -> ScramClient:
    return ScramClient("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")


def test_scram_sha_256_messages_match_rfc_7677() -> None:
    c = rfc_client()
    assert c.first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert c.final(SERVER_FIRST) == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    c.verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")


def test_a_server_signature_that_does_not_match_is_refused() -> None:
    c = rfc_client()
    c.final(SERVER_FIRST)
    with pytest.raises(AuthenticationFailed, match="signature does not match"):
        c.verify(b"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")


def test_a_server_nonce_that_does_not_extend_ours_is_refused() -> None:
    with pytest.raises(AuthenticationFailed, match="malformed server-first"):
        rfc_client().final(b"r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")


def test_the_password_is_never_in_a_repr() -> None:
    creds = Credentials("SCRAM-SHA-512", "alice", "s3cret-pw")
    transport = from_client_config({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                    "sasl.username": "alice", "sasl.password": "s3cret-pw"})
    assert "s3cret-pw" not in repr(creds) + repr(transport)
    assert transport.sasl == creds and transport.tls is None


def test_a_mechanism_the_raw_client_lacks_is_named() -> None:
    with pytest.raises(AuthenticationFailed, match="GSSAPI"):
        from_client_config({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"})
