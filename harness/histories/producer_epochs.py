"""Which leader epoch a producer puts in its Produce requests (KIP-359 "Proposed Changes": "the producer
will be able to add it to Produce requests"), seen through the protocol proxy.

harness.scenarios.producer_epochs records it; harness.checks.producer_epochs judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.client_reactions import EpochLearned


@dataclass(frozen=True)
class ProduceEntry:
    """One Produce partition entry the producer sent for the partition: when it reached the proxy
    (seconds from the scene's start), its version, the fields the entry holds in that version's schema
    (the target's own), and its CurrentLeaderEpoch (None: the version has no such field)."""

    at: float
    version: int
    fields: tuple[str, ...]
    epoch: int | None


@dataclass(frozen=True)
class ProducerEpochRun:
    """A producer of `client`'s stack (`named`: what its driver named) writing `topic`-0 through the
    proxy after one leader move (the partition at `epoch`): every Metadata answer for the partition it
    got, every Produce entry it sent, how many writes were acknowledged, and the Produce versions of
    the target's schema with CurrentLeaderEpoch (`schema_with_epoch`) next to the range it advertises."""

    client: str
    named: str | None
    topic: str
    epoch: int
    learned: tuple[EpochLearned, ...]
    entries: tuple[ProduceEntry, ...]
    acked: int
    schema_with_epoch: tuple[int, ...]
    advertised: tuple[int, int]
    incomplete: str | None = None
