"""Leader epochs in Metadata answers: behind the broker's (a client whose metadata lags, KIP-232),
or missing (a broker without KIP-320 epochs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import METADATA, OFFSET_FETCH, ResponseEdit, Rule, blank_epochs


@dataclass(eq=False)
class StaleLeaderEpoch(ResponseEdit):
    """In the first `count` Metadata answers that name `topic`, show each of its partitions' leader
    epoch `behind` lower than the broker said: a client whose metadata lags (the KIP-232 situation)."""

    api: str | None = "Metadata"
    versions: tuple[int, int] | None = (7, 0x7FFF)  # the versions that carry LeaderEpoch
    topic: str = ""
    behind: int = 1

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        mine = [t for t in body.get("Topics") or [] if t.get("Name") == self.topic]
        if not mine or not self.take():
            return False
        for t in mine:
            for p in t.get("Partitions") or []:
                p["LeaderEpoch"] = max(0, p["LeaderEpoch"] - self.behind)
        return True

    def describe(self) -> str:
        return f"StaleLeaderEpoch(Metadata of {self.topic} {self.behind} epoch(s) behind, {self.scope()})"


@dataclass(eq=False)
class StaleUntilCommitRead(StaleLeaderEpoch):
    """StaleLeaderEpoch until an OffsetFetch has been answered through the proxy: the client's metadata
    is behind when it reads its group's commit however long joining the group takes (a number of stale
    answers ran out before a slow join read it), and true from then on, as a refresh must find it."""

    read: bool = field(default=False, init=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == OFFSET_FETCH or (not self.read and super().acts_on_response(api_key, version))

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if api.key == OFFSET_FETCH:
            self.read = True
            return False
        return not self.read and super().edit_response(api, version, body)

    def describe(self) -> str:
        return (f"StaleUntilCommitRead(Metadata of {self.topic} {self.behind} epoch(s) behind until an OffsetFetch "
                f"is answered, {self.scope()})")


@dataclass(eq=False)
class NoLeaderEpochInMetadata(Rule):
    """Metadata v7+ answers with every partition's LeaderEpoch -1: a broker without KIP-320 epochs
    (Azure Event Hubs' Standard tier, open-telemetry/opentelemetry-collector-contrib#42226)."""

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == METADATA and version >= 7

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        return blank_epochs(body, "LeaderEpoch") and self.take()

    def describe(self) -> str:
        return f"NoLeaderEpochInMetadata(Metadata v7+, {self.fired} answers edited)"
