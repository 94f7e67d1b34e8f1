"""The conformance areas, listed once: their pytest marker, their title in reports and the matrix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Area:
    marker: str  # the pytest marker a suite module carries
    epic: str  # the Allure epic
    title: str  # the matrix section heading
    description: str  # the marker's help text


AREAS: tuple[Area, ...] = (
    Area("smoke", "Smoke", "Smoke",
         "basic produce/consume, failover and unclean-election behaviour of the target"),
    Area("kip320", "KIP-320", "KIP-320 leader epoch fencing and truncation detection",
         "KIP-320: leader epoch fencing and truncation detection"),
    Area("kip359", "KIP-359", "KIP-359 leader epoch in Produce", "KIP-359: leader epoch in Produce"),
    Area("kip1094", "KIP-1094", "KIP-1094 next offset and leader epoch after poll",
         "KIP-1094: next offset and leader epoch after poll"),
    Area("kip1319", "KIP-1319", "KIP-1319 TxnOffsetCommit v6 with topic IDs",
         "KIP-1319: TxnOffsetCommit v6 with topic IDs"),
    Area("integrity", "Record integrity", "Record-level integrity under faults",
         "record-level integrity of transactional pipelines under faults"),
    Area("partition", "Network partitions", "Network partitions: zombie leaders and cut links",
         "network partitions between nodes (clients still reach every node): the KIP-320 zombie leader, "
         "acks=all on a minority leader, a cut-off controller, pipelines under cut links"),
)
OTHER = Area("other", "Other", "Other", "checks outside every area")

MARKERS: tuple[str, ...] = tuple(a.marker for a in AREAS)


def by_marker(marker: str) -> Area:
    return next((a for a in AREAS if a.marker == marker), OTHER)
