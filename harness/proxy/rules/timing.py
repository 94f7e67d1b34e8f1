"""Time and connections: requests or answers held back, connections closed."""

from __future__ import annotations

from dataclasses import dataclass

from harness.proxy.rules.base import RequestAction, Rule


@dataclass(eq=False)
class Delay(Rule):
    """Hold matching requests (before the broker sees them) or responses for `seconds`."""

    seconds: float = 0.0
    on: str = "response"

    def __post_init__(self) -> None:
        if self.on not in ("request", "response"):
            raise ValueError(f"Delay.on must be 'request' or 'response', not {self.on!r}")

    def on_request(self, api_key: int, version: int) -> RequestAction | None:
        if self.on == "request" and self.take():
            return RequestAction(delay=self.seconds)
        return None

    def response_delay(self, api_key: int, version: int) -> float:
        return self.seconds if self.on == "response" and self.take() else 0.0


@dataclass(eq=False)
class CloseConnection(Rule):
    """Close the client's connection when a matching request arrives; it never reaches the broker."""

    count: int | None = 1

    def on_request(self, api_key: int, version: int) -> RequestAction | None:
        return RequestAction(close=True) if self.take() else None
