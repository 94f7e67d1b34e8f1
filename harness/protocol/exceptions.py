"""Exceptions of the protocol package; each message names what to look at."""

from __future__ import annotations


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


class RequestTimeout(ProtocolError):
    """No response arrived before the call's deadline."""


class AuthenticationFailed(ProtocolError):
    """SASL handshake or authentication was refused."""
