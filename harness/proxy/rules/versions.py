"""What the brokers advertise, narrowed: an API's version range capped in ApiVersions answers,
Metadata answered without topic IDs (a broker before KIP-516)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.protocol.spec import ApiSpec
from harness.protocol.types import ZERO_UUID
from harness.proxy.rules.base import API_VERSIONS, METADATA, Rule

# Metadata responses carry TopicId from v10 on (KIP-516).
_METADATA_TOPIC_ID_FROM = 10


@dataclass(eq=False)
class CapVersion(Rule):
    """Lower the max version the brokers advertise for `api` in ApiVersions responses."""

    max_version: int = 0

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == API_VERSIONS and not self.spent

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        changed = False
        for entry in body.get("ApiKeys") or ():
            if entry["ApiKey"] == self.api_key and entry["MaxVersion"] > self.max_version:
                entry["MaxVersion"] = max(self.max_version, entry["MinVersion"])
                changed = True
        return changed and self.take()

    def describe(self) -> str:
        return f"CapVersion({self.api} <= v{self.max_version}, {self.fired} ApiVersions responses edited)"


@dataclass(eq=False)
class StripTopicIds(Rule):
    """Answer Metadata with the zero topic ID, for `topics` (names) or for every topic."""

    topics: frozenset[str] | None = None

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == METADATA and version >= _METADATA_TOPIC_ID_FROM and not self.spent

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        changed = False
        for topic in body.get("Topics") or ():
            if self.topics is not None and topic.get("Name") not in self.topics:
                continue
            if topic.get("TopicId", ZERO_UUID) != ZERO_UUID:
                topic["TopicId"] = ZERO_UUID
                changed = True
        return changed and self.take()

    def describe(self) -> str:
        which = "all topics" if self.topics is None else ", ".join(sorted(self.topics))
        return f"StripTopicIds({which}, {self.fired} Metadata responses edited)"
