"""One client connection through the proxy and its connection to the broker behind it.

Two pumps run per link: requests (client -> broker) and responses (broker -> client). A request
costs a header parse; a response costs a 4-byte read of its correlation id, unless the address
rewriter or a rule needs its body (see `Link._edit`). Kafka answers requests in order on a
connection, so holding a response back (a Delay rule) holds back those behind it, as a slow
broker would. A rule that holds requests back (`Rule.holds`) may send them on in another order;
from then on the link answers the client in the order it asked (Kafka clients match answers to
requests by that order), keeping an answer that came early until those before it went out.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.protocol.client import MAX_RESPONSE_BYTES, read_response
from harness.protocol.codec import encode, encode_response
from harness.protocol.exceptions import ProtocolError
from harness.protocol.spec import SpecSet
from harness.proxy.frames import (
    SIZE,
    FrameError,
    header_length,
    parse_request_header,
    produce_expects_response,
    request_body,
    response_correlation_id,
)
from harness.proxy.recorder import ANSWERED, CLOSED_BY_PROXY, LOST, NO_RESPONSE, ProxiedExchange, Recording
from harness.proxy.rewrite import address_fields, endpoints, is_real_endpoint, rewrite_addresses
from harness.proxy.rules import HeldRequest, Rule

SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
API_VERSIONS = 18
# Frames of up to this size are read in one go; larger ones still work (readexactly grows).
STREAM_LIMIT = 4 * 1024 * 1024


class _ClosedByRule(Exception):
    pass


class _RefusedFrame(Exception):
    """A peer announced a frame size no Kafka peer sends: the link is closed before any of it is read."""


async def _frame(reader: asyncio.StreamReader, peer: str) -> tuple[bytes, bytes]:
    """(size bytes, frame), the size checked against MAX_RESPONSE_BYTES before the frame is read."""
    size_bytes = await reader.readexactly(4)
    size = SIZE.unpack(size_bytes)[0]
    if not 0 <= size <= MAX_RESPONSE_BYTES:
        raise _RefusedFrame(f"the {peer} announced a {size}-byte frame (outside 0..{MAX_RESPONSE_BYTES}, first "
                            f"bytes {size_bytes.hex()}): not Kafka; the connection was closed")
    return size_bytes, await reader.readexactly(size)


class LinkOwner(Protocol):
    """What a link asks of the proxy that accepted it. Declared here, not imported from
    harness.proxy.server, so that the server (which makes links) and the link do not import each other."""

    specs: SpecSet
    recording: Recording
    rules: tuple[Rule, ...]
    upstream_tls: ssl.SSLContext | None
    errors: list[str]
    unreachable: list[str]

    def note_error(self, text: str) -> None: ...

    async def ensure_listener(self, host: str, port: int) -> tuple[str, int]: ...

    def proxied_address(self, host: str, port: int) -> tuple[str, int]: ...


@dataclass
class Link:
    proxy: LinkOwner
    label: str
    upstream: tuple[str, int]
    client_reader: asyncio.StreamReader
    client_writer: asyncio.StreamWriter
    pending: dict[int, ProxiedExchange] = field(default_factory=dict)
    _raw_sasl_token: bool = False
    # Requests a rule holds back (exchange, whether it expects an answer, the request); once a rule
    # held one, the correlation ids of the answers owed, in the client's order, and answers that
    # came before their turn. Untouched (and free) on a link where no rule holds anything.
    _held: list[tuple[ProxiedExchange, bool, HeldRequest]] = field(default_factory=list)
    _owed: deque[int] | None = None
    _early: dict[int, bytes] = field(default_factory=dict)

    async def run(self) -> None:
        try:
            broker_reader, broker_writer = await asyncio.open_connection(
                *self.upstream, limit=STREAM_LIMIT, ssl=self.proxy.upstream_tls,
                server_hostname=self.upstream[0] if self.proxy.upstream_tls else None,
            )
        except ssl.SSLError as exc:
            self.proxy.errors.append(f"{self.label}: the TLS handshake with the broker failed: {exc}")
            self.client_writer.close()
            return
        except OSError as exc:
            # A stopped broker is a state tests create on purpose, not a proxy error.
            self.proxy.unreachable.append(f"{self.label}: {exc!r}")
            self.client_writer.close()
            return
        pumps = [
            asyncio.create_task(self._requests(broker_writer), name=f"{self.label} requests"),
            asyncio.create_task(self._responses(broker_reader), name=f"{self.label} responses"),
        ]
        try:
            done, _ = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                self._check(task)
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            for writer in (self.client_writer, broker_writer):
                writer.close()
            for ex in self.pending.values():
                ex.outcome = LOST
            self.pending.clear()

    def _check(self, task: asyncio.Task[None]) -> None:
        exc = task.exception()
        if exc is None or isinstance(exc, _ClosedByRule | asyncio.IncompleteReadError | ConnectionError):
            return
        if isinstance(exc, _RefusedFrame):
            self.proxy.note_error(f"{self.label}: {exc}")
            return
        self.proxy.note_error(f"{self.label}: {task.get_name()} failed: {exc!r}")

    # -- client -> broker ------------------------------------------------------------------
    async def _requests(self, broker: asyncio.StreamWriter) -> None:
        reader = self.client_reader
        specs = self.proxy.specs
        recording = self.proxy.recording
        while True:
            size_bytes, frame = await _frame(reader, "client")
            started = time.monotonic()
            if self._raw_sasl_token:
                # After SaslHandshake v0 the next frame is a bare SASL token, not a request.
                self._raw_sasl_token = False
                broker.write(size_bytes + frame)
                await broker.drain()
                continue
            try:
                header = parse_request_header(frame)
            except FrameError as exc:
                self.proxy.note_error(f"{self.label}: unparseable request passed through: {exc}")
                broker.write(size_bytes + frame)
                await broker.drain()
                continue
            ex = ProxiedExchange(
                specs, self.label, header.api_key, header.api_version, header.correlation_id,
                header.client_id, started,
                # SaslAuthenticate carries credentials: recorded as a header fact only.
                request_bytes=None if header.api_key == SASL_AUTHENTICATE else frame,
            )
            recording.add(ex)
            delay, close = 0.0, False
            for rule in self.proxy.rules:
                if rule.matches(header.api_key, header.api_version):
                    action = rule.on_request(header.api_key, header.api_version)
                    if action is not None:
                        ex.rules.append(rule.describe())
                        delay += action.delay
                        close = close or action.close
            if close:
                ex.outcome = CLOSED_BY_PROXY
                raise _ClosedByRule
            edited = self._edit_request(ex, frame)
            if edited is not frame:
                frame, size_bytes = edited, SIZE.pack(len(edited))
            if delay:
                await asyncio.sleep(delay)
            expects = produce_expects_response(frame, header)
            if header.api_key == SASL_HANDSHAKE and header.api_version == 0:
                self._raw_sasl_token = True
            if self._owed is not None and expects:
                self._owed.append(header.correlation_id)
            holding = next((r for r in self.proxy.rules if r.holds(header.api_key, header.api_version)), None)
            out = [(ex, expects, size_bytes + frame)] if holding is None else self._hold(holding, ex, expects, frame)
            for sent, answered, data in out:
                if answered:
                    self.pending[sent.correlation_id] = sent
                else:
                    sent.outcome = NO_RESPONSE
                    recording.trim(sent)
                broker.write(data)
            if out:
                await broker.drain()

    def _hold(
        self, rule: Rule, ex: ProxiedExchange, expects: bool, frame: bytes
    ) -> list[tuple[ProxiedExchange, bool, bytes]]:
        """`ex` joins the requests `rule` holds; those it releases, in the order it sends them on."""
        if self._owed is None:
            self._owed = deque([ex.correlation_id] if expects else [])
        api = self.proxy.specs.api(ex.api_key)
        start = header_length(frame, api.request_header_version(ex.version) >= 2)
        self._held.append((ex, expects, HeldRequest(ex.version, ex.correlation_id, start, frame)))
        try:
            released = rule.release(api, [h for _, _, h in self._held])
        except (ProtocolError, ValueError) as exc:
            self.proxy.note_error(f"{self.label}: {rule.describe()} could not read what it held, sent on as is: {exc}")
            released = [h for _, _, h in self._held]
        if released is None:
            ex.rules.append(rule.describe())
            return []
        held = {h.correlation_id: (e, x) for e, x, h in self._held}
        self._held = []
        return [(*held[h.correlation_id], SIZE.pack(len(h.frame)) + h.frame) for h in released]

    # -- broker -> client ------------------------------------------------------------------
    async def _responses(self, reader: asyncio.StreamReader) -> None:
        client = self.client_writer
        recording = self.proxy.recording
        while True:
            size_bytes, frame = await _frame(reader, f"broker at {self.upstream[0]}:{self.upstream[1]}")
            received = time.monotonic()
            ex = self.pending.pop(response_correlation_id(frame), None)
            if ex is None:
                # SASL v0 tokens, or answers to requests the proxy could not parse.
                client.write(size_bytes + frame)
                await client.drain()
                continue
            ex.latency = received - ex.started
            edited = await self._edit(ex, frame)
            if edited is not frame:
                frame, size_bytes = edited, SIZE.pack(len(edited))
            delay = sum(r.response_delay(ex.api_key, ex.version) for r in self._matching(ex))
            if delay:
                ex.rules.append(f"Delay({delay:g}s)")
                await asyncio.sleep(delay)
            ex.response_bytes = frame
            ex.outcome = ANSWERED
            recording.trim(ex)
            owed = self._owed
            if owed and ex.correlation_id in owed and ex.correlation_id != owed[0]:
                self._early[ex.correlation_id] = size_bytes + frame  # its turn comes after an answer still owed
                continue
            client.write(size_bytes + frame)
            if owed and owed[0] == ex.correlation_id:
                owed.popleft()
                while owed and owed[0] in self._early:
                    client.write(self._early.pop(owed.popleft()))
            await client.drain()

    def _edit_request(self, ex: ProxiedExchange, frame: bytes) -> bytes:
        """The request as the broker should see it: rules that edit requests applied (the recording
        keeps what the client sent)."""
        acting = [r for r in self.proxy.rules if r.acts_on_request(ex.api_key, ex.version)]
        if not acting:
            return frame
        try:
            api = self.proxy.specs.api(ex.api_key)
            start = header_length(frame, api.request_header_version(ex.version) >= 2)
            body = request_body(api, ex.version, frame, start)
        except ProtocolError as exc:
            self.proxy.note_error(f"{self.label}: {ex.api} v{ex.version} request passed through unedited: {exc}")
            return frame
        changed = False
        for rule in acting:
            if rule.edit_request(api, ex.version, body):
                ex.rules.append(rule.describe())
                changed = True
        return frame[:start] + encode(api.request, ex.version, body) if changed else frame

    def _request(self, ex: ProxiedExchange) -> dict[str, Any] | None:
        """The decoded request of `ex`, for a rule that answers by what was asked; None (and a proxy
        error) where it cannot be read."""
        try:
            return ex.request
        except ProtocolError as exc:
            self.proxy.note_error(f"{self.label}: {ex.api} v{ex.version} request undecodable for a rule: {exc}")
            return None

    def _matching(self, ex: ProxiedExchange) -> list[Any]:
        return [r for r in self.proxy.rules if r.matches(ex.api_key, ex.version)]

    async def _edit(self, ex: ProxiedExchange, frame: bytes) -> bytes:
        """The response as the client should see it: addresses rewritten, rules applied."""
        specs = self.proxy.specs
        try:
            api = specs.api(ex.api_key)
        except ProtocolError:
            return frame
        acting = [r for r in self.proxy.rules if r.acts_on_response(ex.api_key, ex.version)]
        if not acting and not address_fields(api, ex.version):
            return frame
        version = ex.version
        try:
            # As clients read it: an ApiVersions error answer at v0 or by its error code (KIP-511), one
            # zero byte after a flexible message read past (harness.protocol.client.read_response).
            header, body, _ = read_response(api, version, frame)
        except ProtocolError as exc:
            self.proxy.note_error(f"{self.label}: {api.name} v{version} response passed through undecoded: {exc}")
            return frame
        if ex.api_key == API_VERSIONS and body.get("ErrorCode") and "ThrottleTimeMs" not in body:
            version = 0  # the error answer, re-encoded as KIP-511 writes it
        for entry in endpoints(api, version, body):
            if is_real_endpoint(entry):
                await self.proxy.ensure_listener(entry["Host"], entry["Port"])
        changed = rewrite_addresses(api, version, body, self.proxy.proxied_address) > 0
        for rule in acting:
            if rule.edit_answer(api, version, self._request(ex) if rule.needs_request else None, body):
                ex.rules.append(rule.describe())
                changed = True
        return encode_response(api, version, header, body) if changed else frame
