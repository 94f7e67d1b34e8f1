"""What went through the proxy: one `ProxiedExchange` per request, kept in arrival order.

Only the request header is read on the hot path. Bodies are kept as the bytes that went over the
wire and decoded on demand (error codes, dumps), so recording costs a reference, not a decode.
Bodies larger than `keep_body_bytes` (bulk Produce and Fetch) are dropped once their exchange is
complete; their header facts (api, version, correlation id, latency) stay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.protocol.client import api_versions_error
from harness.protocol.codec import decode_response
from harness.protocol.dump import dump
from harness.protocol.exceptions import ProtocolError
from harness.protocol.spec import SpecSet
from harness.proxy.frames import header_length, request_body
from harness.waiting import Owed, wait_until

ANSWERED = "answered"
NO_RESPONSE = "no-response"  # Produce with acks=0
CLOSED_BY_PROXY = "closed-by-proxy"
PENDING = "pending"
LOST = "connection-lost"
_API_VERSIONS = 18


@dataclass(eq=False)
class ProxiedExchange:
    """One request and, once it came, its response, as the proxy saw them."""

    specs: SpecSet = field(repr=False)
    upstream: str
    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    started: float
    request_bytes: bytes | None = field(default=None, repr=False)
    response_bytes: bytes | None = field(default=None, repr=False)
    latency: float | None = None
    outcome: str = PENDING
    rules: list[str] = field(default_factory=list)
    _decoded: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def api(self) -> str:
        try:
            return self.specs.api(self.api_key).name
        except ProtocolError:
            return f"api{self.api_key}"

    @property
    def request(self) -> dict[str, Any] | None:
        """The decoded request body (None when the body was not kept)."""
        if "request" not in self._decoded:
            self._decoded["request"] = self._decode_request()
        return self._decoded["request"]

    @property
    def response(self) -> dict[str, Any] | None:
        """The decoded response body as the client received it (after any rule)."""
        if "response" in self._decoded:
            return self._decoded["response"]
        decoded = self._decode_response()
        # A pending exchange is read again once its answer came: only a decoded answer is kept.
        if decoded is not None:
            self._decoded["response"] = decoded
        return decoded

    @property
    def error_codes(self) -> list[int]:
        """Every ErrorCode in the response, in wire order (top level first, then nested)."""
        body = self.response
        return [] if body is None else list(_error_codes(body))

    def _decode_request(self) -> dict[str, Any] | None:
        if self.request_bytes is None:
            return None
        api = self.specs.api(self.api_key)
        start = header_length(self.request_bytes, api.request_header_version(self.version) >= 2)
        return request_body(api, self.version, self.request_bytes, start)

    def _decode_response(self) -> dict[str, Any] | None:
        if self.response_bytes is None:
            return None
        api = self.specs.api(self.api_key)
        try:
            return decode_response(api, self.version, self.response_bytes)[1]
        except ProtocolError:
            if self.api_key != _API_VERSIONS:
                raise
            # KIP-511: an ApiVersions version the broker does not know is answered at v0; some brokers
            # write that answer otherwise, and its error code still leads it (api_versions_error).
            try:
                return decode_response(api, 0, self.response_bytes)[1]
            except ProtocolError:
                read = api_versions_error(self.response_bytes)
                if read is None:
                    raise
                return read[1]

    def dump(self) -> str:
        """Both sides in readable form, for assertion messages and attachments."""
        head = (
            f"[{self.upstream}] {self.api} v{self.version} correlation {self.correlation_id} "
            f"client {self.client_id!r}: {self.outcome}"
        )
        if self.latency is not None:
            head += f" in {self.latency * 1000:.1f} ms"
        if self.rules:
            head += f"; rules: {', '.join(self.rules)}"
        parts = [head]
        for side, body in (("request", self._safe("request")), ("response", self._safe("response"))):
            if isinstance(body, dict):
                text = dump(self.specs.api(self.api_key), self.version, body, direction=side, specs=self.specs)
                parts.append(("-> " if side == "request" else "<- ") + text.replace("\n", "\n   "))
            elif body is not None:
                parts.append(f"{side}: {body}")
        return "\n".join(parts)

    def _safe(self, side: str) -> dict[str, Any] | str | None:
        try:
            return self.request if side == "request" else self.response
        except ProtocolError as exc:
            return f"<cannot decode: {exc}>"


def _error_codes(value: Any) -> Iterator[int]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "ErrorCode":
                yield v
            elif isinstance(v, dict | list):
                yield from _error_codes(v)
    elif isinstance(value, list):
        for item in value:
            yield from _error_codes(item)


class Recording:
    """The exchanges of one proxy; thread-safe to read while the proxy runs."""

    def __init__(self, specs: SpecSet, keep_body_bytes: int = 64 * 1024) -> None:
        self.specs = specs
        self.keep_body_bytes = keep_body_bytes
        self._lock = threading.Lock()
        self._exchanges: list[ProxiedExchange] = []

    def add(self, exchange: ProxiedExchange) -> None:
        with self._lock:
            self._exchanges.append(exchange)

    def trim(self, exchange: ProxiedExchange) -> None:
        """Drop bulky bodies once an exchange is complete."""
        limit = self.keep_body_bytes
        if exchange.request_bytes is not None and len(exchange.request_bytes) > limit:
            exchange.request_bytes = None
        if exchange.response_bytes is not None and len(exchange.response_bytes) > limit:
            exchange.response_bytes = None

    def clear(self) -> None:
        with self._lock:
            self._exchanges.clear()

    def exchanges(self, api: str | int | None = None, version: int | None = None) -> list[ProxiedExchange]:
        """A snapshot, filtered by API (name or key) and version."""
        with self._lock:
            found = list(self._exchanges)
        if api is not None:
            key = api if isinstance(api, int) else self.specs.api(api).key
            found = [e for e in found if e.api_key == key]
        if version is not None:
            found = [e for e in found if e.version == version]
        return found

    def versions(self, api: str | int) -> list[int]:
        return [e.version for e in self.exchanges(api)]

    def wait_for(
        self, predicate: Callable[[list[ProxiedExchange]], bool], timeout: float, what: str,
        api: str | int | None = None,
    ) -> list[ProxiedExchange]:
        """Wait until `predicate(exchanges of api)` holds; return those exchanges."""

        def check() -> list[ProxiedExchange] | None:
            found = self.exchanges(api)
            return found if predicate(found) else None

        return wait_until(check, timeout, lambda: f"{what}; recorded: {self.summary(api)}", owed=Owed.HARNESS)

    def summary(self, api: str | int | None = None, limit: int = 40) -> str:
        found = self.exchanges(api)
        lines = [
            f"{e.api} v{e.version} #{e.correlation_id} {e.outcome}"
            + (f" errors={sorted(set(_safe_errors(e)))}" if e.outcome == ANSWERED else "")
            + (f" rules={e.rules}" if e.rules else "")
            for e in found[-limit:]
        ]
        more = f" (last {limit} of {len(found)})" if len(found) > limit else ""
        return f"{len(found)} exchanges{more}" + "".join(f"\n  {line}" for line in lines)

    def dump(self, api: str | int | None = None, limit: int = 10) -> str:
        return "\n".join(e.dump() for e in self.exchanges(api)[-limit:])

    def __len__(self) -> int:
        with self._lock:
            return len(self._exchanges)


def _safe_errors(e: ProxiedExchange) -> list[int | str]:
    try:
        return list(e.error_codes)
    except ProtocolError as exc:
        return [f"undecodable: {exc.__class__.__name__}"]
