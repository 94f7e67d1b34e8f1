"""A raw Kafka client: one TCP connection, exact request versions, every response field.

    with RawClient.connect("127.0.0.1", 9092, spec="4.4.0", timeout=10) as c:
        v = c.max_version("Metadata")
        md = c.send("Metadata", v, {"Topics": None})

It does nothing behind the caller's back (no retries, no metadata, no routing): conformance checks
need to see exactly what a broker answers to exactly what was sent. One request is in flight at a
time; every call has a deadline, and a timeout closes the connection (a late answer would
otherwise be taken for the next call's).

`connect(..., reconnect=True)` is for the harness's own waits and reads, never for a check that
watches a broker close a connection: a request after the connection was closed (a timeout, the
broker hanging up, an answer that did not decode) goes out on a new one, made as the first was.
The request that met the close still fails with what happened; only the next is on a new connection.
"""

from __future__ import annotations

import itertools
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from harness.kafka.dist import DEFAULT_VERSION
from harness.protocol.auth import Credentials, ScramClient, Transport
from harness.protocol.codec import decode, decode_response, encode, encode_request_header
from harness.protocol.dump import dump
from harness.protocol.errors import describe
from harness.protocol.exceptions import (
    AdvertisedVersionNotServed,
    ApiNotOffered,
    AuthenticationFailed,
    ConnectionFailed,
    DecodeError,
    ProtocolError,
    RequestTimeout,
    TlsHandshakeFailed,
    Unreachable,
)
from harness.protocol.spec import ApiSpec, SpecSet, load_specs

_SIZE = struct.Struct(">i")
CLIENT_SOFTWARE_NAME = "kcts"
CLIENT_SOFTWARE_VERSION = "0.1.0"
# kcts never asks for more than a few MB (raw fetches ask 4 MB at most); a larger size is a target's
# mistake or hostility, refused before anything of it is read.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 20


@dataclass
class Exchange:
    """One request and its response, raw and decoded, for assertions and attachments."""

    api: ApiSpec
    version: int
    correlation_id: int
    request: dict[str, Any]
    request_bytes: bytes
    response_header: dict[str, Any] = field(default_factory=dict)
    response: dict[str, Any] = field(default_factory=dict)
    response_bytes: bytes = b""
    elapsed: float = 0.0
    # A zero byte after a flexible response's last tag buffer (an empty tag buffer written twice:
    # librdkafka's mock cluster's Metadata), read past as clients do and shown in the dump.
    trailing: int = 0

    def dump(self) -> str:
        parts = [f"-> {dump(self.api, self.version, self.request, direction='request')}"]
        if self.response_bytes:
            parts.append(f"<- {dump(self.api, self.version, self.response, direction='response')}")
            extra = f"; {self.trailing} trailing zero byte after the message, read past" if self.trailing else ""
            parts.append(f"   ({len(self.response_bytes)} bytes in {self.elapsed * 1000:.1f} ms{extra})")
        else:
            parts.append("<- (no response expected)")
        return "\n".join(parts)


# --- recorder hook ---------------------------------------------------------------------------
# Whoever wants every exchange (the pytest plugin, per check: harness.reporting.wire) installs a hook
# here; it gets the client, the exchange and the exception that ended it (None when it completed).
# A module global rather than a ContextVar, so that exchanges made on a scenario's helper threads
# are seen too (threads do not inherit a context); unset, it costs one global read per exchange.
ExchangeHook = Callable[["RawClient", Exchange, BaseException | None], None]
_recorder: ExchangeHook | None = None


def set_recorder(hook: ExchangeHook | None) -> ExchangeHook | None:
    """Hand every exchange of every RawClient to `hook` (None: to nobody); return the hook it replaces."""
    global _recorder
    previous, _recorder = _recorder, hook
    return previous


def current_recorder() -> ExchangeHook | None:
    return _recorder


def _api_keys(body: bytes, count_bytes: int, tagged: bool) -> list[dict[str, int]] | None:
    """The (ApiKey, MinVersion, MaxVersion) entries after an ApiVersions error code, if the rest of
    `body` is exactly a count of `count_bytes` (4: INT32; 1: one byte, raw or, with `tagged`, compact
    N+1), the entries (each with an empty tag buffer when `tagged`), and an optional ThrottleTimeMs."""
    if len(body) < count_bytes:
        return None
    n = int.from_bytes(body[:count_bytes], "big", signed=True) - (1 if tagged else 0)
    size = 6 + (1 if tagged else 0)
    rest = len(body) - count_bytes - n * size
    if n < 0 or rest not in ((0, 4) if not tagged else (1, 5)):
        return None
    keys = []
    for i in range(n):
        key, lo, hi = struct.unpack_from(">hhh", body, count_bytes + i * size)
        keys.append({"ApiKey": key, "MinVersion": lo, "MaxVersion": hi})
    return keys


def api_versions_error(frame: bytes) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """An ApiVersions error answer that decodes neither at the version asked nor at v0, read as
    clients read it: its header is v0 at every version (KIP-511), and its body leads with the error
    code. The versions it lists are taken where the rest of the body is one of the layouts brokers
    write (v0's INT32 count; librdkafka's mock: a one-byte count, no tag buffers, src/rdkafka_mock_handlers.c
    rd_kafka_mock_handle_ApiVersion; a compact array), else none, which means: fall back to v0.
    None where the frame has no error code (a success that does not decode is corrupt)."""
    if len(frame) < 6:
        return None
    (cid,), (code,) = struct.unpack_from(">i", frame, 0), struct.unpack_from(">h", frame, 4)
    if code == 0:
        return None
    rest = frame[6:]
    keys = _api_keys(rest, 4, False) or _api_keys(rest, 1, False) or _api_keys(rest, 1, True) or []
    return {"CorrelationId": cid}, {"ErrorCode": code, "ApiKeys": keys}


def read_response(api: ApiSpec, version: int, frame: bytes) -> tuple[dict[str, Any], dict[str, Any], int]:
    """(header, body, trailing zero bytes read past) of a response frame, read as clients read it: one
    zero byte after a flexible message (an empty tag buffer written twice: librdkafka's mock's
    Metadata v9+) is read past, and an ApiVersions error answer is read at v0 (KIP-511) or by its
    error code (`api_versions_error`). Anything else that does not decode raises `DecodeError`."""
    try:
        header, body = decode_response(api, version, frame)
        return header, body, 0
    except DecodeError as exc:
        if frame.endswith(b"\0") and api.response.is_flexible(version) and "1 trailing bytes" in str(exc):
            try:
                header, body = decode_response(api, version, frame[:-1])
                return header, body, 1
            except DecodeError:
                pass
        if api.key != 18:
            raise
        try:
            header, body = decode_response(api, 0, frame)
            return header, body, 0
        except DecodeError:
            read = api_versions_error(frame)
            if read is None:
                raise exc from None
            return read[0], read[1], 0


def _throttle_as_read(api: ApiSpec, version: int, frame: bytes) -> int | None:
    """ThrottleTimeMs of an ApiVersions answer read at `version` as the Java client reads it (the
    fields it knows, nothing past them), or None where it does not read so."""
    try:
        return int(decode(api.response, version, frame, offset=4, allow_trailing=True)["ThrottleTimeMs"])
    except (DecodeError, KeyError, TypeError, ValueError):
        return None


def _tls_handshake(sock: socket.socket, transport: Transport, host: str, port: int) -> socket.socket:
    """The TLS handshake within the connection's timeout; a refused certificate names both sides."""
    assert transport.tls is not None
    try:
        return transport.tls.wrap_socket(sock, server_hostname=host)
    except ssl.SSLCertVerificationError as e:
        sock.close()
        raise AuthenticationFailed(
            f"{host}:{port}: the broker's TLS certificate was refused: {e.verify_message}; check the CA file "
            "(--ssl-ca-location) and that the certificate names this host"
        ) from None
    except (ssl.SSLError, OSError) as e:
        sock.close()
        raise TlsHandshakeFailed(
            f"{host}:{port}: TLS handshake failed: {e}; is this a TLS listener, and does it want a client "
            "certificate (--ssl-certificate-location, --ssl-key-location)?"
        ) from None


class RawClient:
    """A connection to one broker. Use `RawClient.connect(...)`."""

    def __init__(
        self,
        sock: socket.socket,
        host: str,
        port: int,
        specs: SpecSet,
        *,
        timeout: float,
        client_id: str | None,
    ) -> None:
        self._sock: socket.socket | None = sock
        self.host = host
        self.port = port
        self.specs = specs
        self.timeout = timeout
        self.client_id = client_id
        self._correlation = itertools.count(1)
        self._lock = threading.Lock()
        self.broker_versions: dict[int, tuple[int, int]] = {}
        # The version of an ApiVersions request answered with an error, and the ThrottleTimeMs a reader
        # of that version finds in the answer (what the Java client honours), or None.
        self.error_answer: tuple[int, int | None] | None = None
        self.api_versions_response: dict[str, Any] = {}
        self.last: Exchange | None = None
        # Set by `connect(reconnect=True)`: makes a new connection like this one's (see the module's doc).
        self._reopen: Callable[[], RawClient] | None = None
        self.reconnects = 0

    # --- life cycle -------------------------------------------------------------------------

    @classmethod
    def connect(
        cls,
        host: str,
        port: int,
        *,
        spec: SpecSet | str = DEFAULT_VERSION,
        timeout: float = 10.0,
        client_id: str | None = "kcts",
        sasl_plain: tuple[str, str] | None = None,
        transport: Transport | None = None,
        negotiate: bool = True,
        reconnect: bool = False,
    ) -> RawClient:
        """Open a connection (over TLS when `transport` has a context); by default ask ApiVersions
        and, if given credentials (`transport.sasl`, or `sasl_plain` for PLAIN), authenticate.
        `reconnect`: a request after the connection was closed opens a new one first (module doc)."""
        specs = load_specs(spec)
        transport = transport or Transport()
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise Unreachable(f"cannot connect to {host}:{port}: {e}") from e
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if transport.tls is not None:
            sock = _tls_handshake(sock, transport, host, port)
        client = cls(sock, host, port, specs, timeout=timeout, client_id=client_id)
        sasl = transport.sasl or (Credentials("PLAIN", *sasl_plain) if sasl_plain is not None else None)
        try:
            if negotiate:
                client.negotiate()
            if sasl is not None:
                client.authenticate(sasl)
        except BaseException:
            client.close()
            raise
        if reconnect:
            client._reopen = lambda: cls.connect(host, port, spec=specs, timeout=timeout, client_id=client_id,
                                                 sasl_plain=sasl_plain, transport=transport, negotiate=negotiate)
        return client

    def _reconnect(self) -> socket.socket | None:
        """A new connection in place of a closed one, where `reconnect` was asked; what it negotiated
        replaces what the old one had (a restarted broker may speak other versions)."""
        if self._reopen is None:
            return None
        fresh = self._reopen()
        self._sock, fresh._sock = fresh._sock, None
        self.broker_versions, self.api_versions_response = fresh.broker_versions, fresh.api_versions_response
        self.error_answer = fresh.error_answer
        self.reconnects += 1
        return self._sock

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    @property
    def closed(self) -> bool:
        return self._sock is None

    @property
    def reconnecting(self) -> bool:
        """A request after a close goes out on a new connection (`connect(reconnect=True)`)."""
        return self._reopen is not None

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<RawClient {self.host}:{self.port}{' closed' if self.closed else ''}>"

    # --- versions ---------------------------------------------------------------------------

    def negotiate(self) -> dict[str, Any]:
        """ApiVersions at our highest version, falling back to what the broker says it supports."""
        api = self.specs.api("ApiVersions")
        version = api.valid_versions.high
        body = {"ClientSoftwareName": CLIENT_SOFTWARE_NAME, "ClientSoftwareVersion": CLIENT_SOFTWARE_VERSION}
        resp = self.send(api, version, body)
        if resp.get("ErrorCode") and version > 0 and self.last is not None:
            self.error_answer = (version, _throttle_as_read(api, version, self.last.response_bytes))
            # An error answer (KIP-511: UNSUPPORTED_VERSION to a version too new) is not a dead listener:
            # retry once at the highest ApiVersions version it lists, or at v0 where it lists none, as
            # clients do (librdkafka falls back to v0; the Java client to the listed range).
            theirs = {k["ApiKey"]: k["MaxVersion"] for k in resp.get("ApiKeys", [])}
            version = max(0, min(version - 1, theirs.get(api.key, 0)))
            resp = self.send(api, version, body)
        if resp.get("ErrorCode"):
            raise ProtocolError(f"{self.host}:{self.port}: ApiVersions failed with {describe(resp['ErrorCode'])}")
        self.api_versions_response = resp
        self.broker_versions = {k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in resp["ApiKeys"]}
        return resp

    def max_version(self, api: str | int | ApiSpec) -> int:
        """The highest version both our spec and the broker support."""
        a = self.specs.api(api)
        if not self.broker_versions:
            self.negotiate()
        if a.key not in self.broker_versions:
            raise ApiNotOffered(self.host, self.port, a.name, a.key, list(self.broker_versions))
        lo, hi = self.broker_versions[a.key]
        top = min(hi, a.valid_versions.high)
        if top < max(lo, a.valid_versions.low):
            raise ProtocolError(
                f"{a.name}: broker {self.host}:{self.port} supports v{lo}-{hi}, "
                f"our spec v{a.valid_versions}; no overlap"
            )
        return top

    def supports(self, api: str | int | ApiSpec, version: int) -> bool:
        a = self.specs.api(api)
        if not self.broker_versions:
            self.negotiate()
        lo, hi = self.broker_versions.get(a.key, (0, -1))
        return lo <= version <= hi

    # --- SASL -------------------------------------------------------------------------------

    def authenticate_plain(self, username: str, password: str) -> None:
        self.authenticate(Credentials("PLAIN", username, password))

    def authenticate(self, creds: Credentials) -> None:
        """SaslHandshake v1 naming the mechanism, then SaslAuthenticate: one round for PLAIN
        (`\\0user\\0password`), two for SCRAM, whose server signature is verified."""
        hs = self.specs.api("SaslHandshake")
        hs_version = min(1, hs.valid_versions.high)
        if self.broker_versions:
            hs_version = min(hs_version, self.broker_versions.get(hs.key, (0, hs_version))[1])
        if hs_version < 1:
            raise AuthenticationFailed("SaslHandshake v1 (followed by SaslAuthenticate) is required")
        resp = self.send(hs, hs_version, {"Mechanism": creds.mechanism})
        if resp["ErrorCode"]:
            raise AuthenticationFailed(
                f"{self.host}:{self.port}: SASL handshake for {creds.mechanism} refused: "
                f"{describe(resp['ErrorCode'])}; broker offers {resp.get('Mechanisms')}"
            )
        if creds.mechanism == "PLAIN":
            self._sasl_round(creds, b"\0" + creds.username.encode() + b"\0" + creds.password.encode())
            return
        scram = ScramClient(creds.mechanism, creds.username, creds.password)
        server_first = self._sasl_round(creds, scram.first())
        scram.verify(self._sasl_round(creds, scram.final(server_first)))

    def _sasl_round(self, creds: Credentials, token: bytes) -> bytes:
        auth = self.specs.api("SaslAuthenticate")
        version = self.max_version(auth) if self.broker_versions else auth.valid_versions.high
        resp = self.send(auth, version, {"AuthBytes": token})
        if resp["ErrorCode"]:
            raise AuthenticationFailed(
                f"{self.host}:{self.port}: SASL/{creds.mechanism} authentication of {creds.username!r} failed: "
                f"{describe(resp['ErrorCode'])} {resp.get('ErrorMessage') or ''}".rstrip()
            )
        return bytes(resp.get("AuthBytes") or b"")

    # --- requests ---------------------------------------------------------------------------

    def send(
        self,
        api: str | int | ApiSpec,
        version: int,
        body: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        records: str = "bytes",
    ) -> dict[str, Any]:
        """Send one request and return the decoded response body ({} for Produce with acks=0)."""
        return self.exchange(api, version, body, timeout=timeout, records=records).response

    def exchange(
        self,
        api: str | int | ApiSpec,
        version: int,
        body: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        records: str = "bytes",
    ) -> Exchange:
        """Like send, but return the whole exchange (both sides, raw bytes, timing)."""
        a = self.specs.api(api)
        body = dict(body or {})
        payload = encode(a.request, version, body)
        ex = Exchange(a, version, 0, decode(a.request, version, payload), b"")
        # Produce with acks=0 (also the spec default when Acks is left out) gets no response.
        expect_response = not (a.key == 0 and ex.request.get("Acks") == 0)
        start = time.monotonic()
        try:
            self._complete(ex, a, version, payload, timeout, expect_response, records)
        except BaseException as exc:
            ex.elapsed = ex.elapsed or time.monotonic() - start
            if _recorder is not None:
                _recorder(self, ex, exc)
            raise
        if _recorder is not None:
            _recorder(self, ex, None)
        self.last = ex
        return ex

    def _complete(
        self,
        ex: Exchange,
        a: ApiSpec,
        version: int,
        payload: bytes,
        timeout: float | None,
        expect_response: bool,
        records: str,
    ) -> None:
        """Send `ex`'s request and fill in its response (nothing when none is expected)."""
        with self._lock:
            cid = next(self._correlation) & 0x7FFFFFFF
            ex.correlation_id = cid
            frame = encode_request_header(a, version, {"CorrelationId": cid, "ClientId": self.client_id}) + payload
            ex.request_bytes = frame
            start = time.monotonic()
            raw = self._roundtrip(frame, a, version, cid, timeout, expect_response)
            ex.elapsed = time.monotonic() - start
        if raw is None:
            return
        ex.response_bytes = raw
        # The correlation id leads every response header: checked before the body is trusted.
        answered = _SIZE.unpack_from(raw, 0)[0]
        if answered != cid:
            self.close()
            raise ProtocolError(
                f"{self.host}:{self.port}: response to {a.name} v{version} has correlation id "
                f"{answered}, expected {cid}; connection closed"
            )
        try:
            ex.response_header, ex.response = decode_response(a, version, raw, records=records)
        except DecodeError as exc:
            if raw.endswith(b"\0") and a.response.is_flexible(version) and "1 trailing bytes" in str(exc):
                # One zero byte past the end: the message's empty tag buffer written twice. The Java
                # client and librdkafka read a response's fields and never look past them, so this
                # is no failure to talk; it stays visible in the exchange (`trailing`).
                try:
                    ex.response_header, ex.response = decode_response(a, version, raw[:-1], records=records)
                except DecodeError:
                    pass  # not that: judged below as any other answer that does not decode
                else:
                    ex.trailing = 1
                    return
            if a.key != 18:
                self.close()
                raise DecodeError(
                    f"{self.host}:{self.port}: the {len(raw)}-byte answer to {a.name} v{version} is not a valid "
                    f"{a.name} v{version} response ({exc}); connection closed"
                ) from exc
            # An ApiVersions error response is written at v0 whatever version was asked (KIP-511); some
            # brokers write it otherwise, and its error code still leads the body (api_versions_error).
            try:
                ex.response_header, ex.response = decode_response(a, 0, raw, records=records)
            except DecodeError:
                read = api_versions_error(raw)
                if read is None:
                    self.close()
                    raise DecodeError(
                        f"{self.host}:{self.port}: the {len(raw)}-byte answer to {a.name} v{version} is neither a "
                        f"valid v{version} nor v0 response, nor an error answer ({exc}); connection closed"
                    ) from exc
                ex.response_header, ex.response = read

    def send_raw(
        self, api: str | int | ApiSpec, version: int, body_bytes: bytes, *, timeout: float | None = None
    ) -> bytes:
        """Send a hand-made body after a proper header; return the response frame (header included)."""
        a = self.specs.api(api)
        # Recorded undecoded: the body is hand-made (often on purpose malformed), the answer unparsed.
        ex = Exchange(a, version, 0, {}, b"")
        start = time.monotonic()
        try:
            with self._lock:
                cid = next(self._correlation) & 0x7FFFFFFF
                ex.correlation_id = cid
                frame = encode_request_header(a, version, {"CorrelationId": cid, "ClientId": self.client_id})
                ex.request_bytes = frame + body_bytes
                raw = self._roundtrip(ex.request_bytes, a, version, cid, timeout, True)
        except BaseException as exc:
            ex.elapsed = time.monotonic() - start
            if _recorder is not None:
                _recorder(self, ex, exc)
            raise
        assert raw is not None
        ex.elapsed = time.monotonic() - start
        ex.response_bytes = raw
        if _recorder is not None:
            _recorder(self, ex, None)
        return raw

    # --- socket -----------------------------------------------------------------------------

    def _roundtrip(
        self, frame: bytes, a: ApiSpec, version: int, cid: int, timeout: float | None, expect_response: bool
    ) -> bytes | None:
        sock = self._sock or self._reconnect()
        what = f"{a.name} v{version} (correlation id {cid})"
        if sock is None:
            raise ConnectionFailed(f"{self.host}:{self.port}: connection is closed; cannot send {what}")
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        try:
            self._set_deadline(sock, deadline)
            sock.sendall(_SIZE.pack(len(frame)) + frame)
            if not expect_response:
                return None
            (size,) = _SIZE.unpack(self._read(sock, 4, deadline, limit, what))
            if size < 4 or size > MAX_RESPONSE_BYTES:
                self.close()
                # A TLS record (alert 0x15 or handshake 0x16, version 3.x) read as a size.
                tls = (size >> 24) in (0x15, 0x16) and (size >> 16) & 0xFF == 0x03
                hint = ("; its first bytes are a TLS record: a TLS listener (--security-protocol SSL or SASL_SSL)"
                        if tls and not isinstance(sock, ssl.SSLSocket) else "")
                raise ProtocolError(
                    f"{self.host}:{self.port}: the response to {what} announces {size} bytes, outside 4.."
                    f"{MAX_RESPONSE_BYTES}: not a Kafka answer kcts will read{hint}; connection closed")
            return self._read(sock, size, deadline, limit, what)
        except ConnectionFailed as exc:
            offered = self.broker_versions.get(a.key)
            if offered is not None and offered[0] <= version <= offered[1]:
                raise AdvertisedVersionNotServed(
                    f"{exc}; it advertised {a.name} v{offered[0]}-{offered[1]} in ApiVersions, which promises "
                    f"every advertised version is served", a.name, version, (offered[0], offered[1])) from None
            raise
        except TimeoutError:
            self.close()
            raise RequestTimeout(
                f"{self.host}:{self.port}: no response to {what} within {limit:g}s; connection closed"
            ) from None
        except OSError as e:
            self.close()
            raise ConnectionFailed(f"{self.host}:{self.port}: connection failed during {what}: {e}") from e

    def _set_deadline(self, sock: socket.socket, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)

    def _read(self, sock: socket.socket, n: int, deadline: float, limit: float, what: str) -> bytes:
        """`n` bytes, held as they arrive: a size announced but never sent costs nothing."""
        buf = bytearray()
        while len(buf) < n:
            self._set_deadline(sock, deadline)
            chunk = sock.recv(min(n - len(buf), _CHUNK))
            if not chunk:
                self.close()
                raise ConnectionFailed(
                    f"{self.host}:{self.port}: broker closed the connection while answering {what} "
                    f"({len(buf)} of {n} bytes read); a broker closes on requests it cannot parse"
                )
            buf += chunk
        return bytes(buf)
