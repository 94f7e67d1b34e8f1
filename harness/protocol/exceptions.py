"""Exceptions of the protocol package; each message names what to look at."""

from __future__ import annotations

from harness.errors import NotSupported


class ProtocolError(Exception):
    """Base class of everything the codec and the raw client raise."""


class SpecError(ProtocolError):
    """A JSON spec is missing, malformed, or does not have what was asked of it."""


class EncodeError(ProtocolError):
    """A message could not be encoded: a wrong type, a value out of range, an unknown field."""


class UnsupportedVersionError(EncodeError):
    """A non-default value was given for a field the chosen version does not have.

    Kafka's generated classes throw UnsupportedVersionException in the same case unless the
    field is marked ignorable in the spec.
    """


class DecodeError(ProtocolError):
    """Bytes do not match the schema: truncated, trailing bytes, a null where none is allowed."""


class CompressionUnavailable(ProtocolError):
    """A record batch uses a codec whose Python module is not installed."""


class CorruptRecordError(DecodeError):
    """A record batch failed its CRC32C check or is malformed."""


class ConnectionFailed(ProtocolError):
    """The TCP connection could not be made or was closed by the broker."""


class AdvertisedVersionNotServed(ConnectionFailed):
    """The broker closed the connection on a request at a version its ApiVersions answer advertised:
    a broken promise of ApiVersions (KIP-35, "an advertised version is served"), not the harness's
    trouble. A check whose subject it was FAILs; a scene it was only a premise of is refused
    (harness.plugin.verdict_boundary)."""

    PROMISE = "protocol.api-versions.advertised-served"

    def __init__(self, message: str, api: str, version: int, offered: tuple[int, int]) -> None:
        super().__init__(message)
        self.api = api
        self.version = version
        self.offered = offered


class Unreachable(ConnectionFailed):
    """Nothing accepted the TCP connection: no answer at all, as opposed to a wrong one."""


class TlsHandshakeFailed(ConnectionFailed):
    """The TLS handshake did not complete: not a TLS listener, or it wanted a client certificate."""


class RequestTimeout(ProtocolError):
    """No response arrived before the call's deadline."""


class AuthenticationFailed(ProtocolError):
    """SASL handshake or authentication was refused."""


class ApiNotOffered(ProtocolError, NotSupported):
    """The broker advertises no version of an API a check needs: the check is "not supported by this
    target", with the APIs it did advertise as the evidence."""

    def __init__(self, host: str, port: int, api: str, key: int, offered: list[int]) -> None:
        NotSupported.__init__(
            self, f"{api} (api {key})",
            f"{host}:{port} advertises no version of it in ApiVersions; it offers api keys {sorted(offered)}",
        )
