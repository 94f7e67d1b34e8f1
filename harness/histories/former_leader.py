"""A Produce sent to a replica that no longer leads, and what it answered.

The KIP-359 scene (harness.scenarios.kip359 `former_leader_produce`) sends one per version;
harness.checks.produce_fencing judges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.histories.observations import Body


@dataclass(frozen=True)
class FormerLeaderAnswer:
    """Produce at `version` to `broker`: the partition of its decoded answer and the NodeEndpoints it
    named (v10+), or `unreadable`: why the answer was not a Produce response of that version."""

    version: int
    broker: int
    partition: Body | None = None
    node_endpoints: list[Body] | None = None
    unreadable: str | None = None

    @classmethod
    def coerce(cls, answer: FormerLeaderAnswer | Mapping[str, object]) -> FormerLeaderAnswer:
        """`answer` as a FormerLeaderAnswer: the KIP-359 scene builds mappings of these fields (a key
        left out where it does not apply) until it is typed."""
        if isinstance(answer, Mapping):
            return cls(**answer)  # type: ignore[arg-type]
        return answer
