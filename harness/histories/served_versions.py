"""What a broker did with a request at each version of an API it advertised: answered it, or closed
the connection. Made by harness.scenarios.served_versions, judged by harness.checks.served_versions."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VersionServed:
    broker: str  # host:port
    api: str
    version: int
    advertised: tuple[int, int]  # the range its ApiVersions answer gave for `api`
    closed: str | None = None  # how the broker hung up instead of answering; None: it answered
