"""What one broker's Metadata said of a partition at one version.

The KIP-320 scenes ask every running broker at every version it speaks (harness.scenarios.kip320:
`metadata_versions`, from v7; harness.scenarios.epoch_edges: `probe_metadata`, from v0), and the
checks compare the answers with each other and with the leader's newest.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetadataAnswer:
    """`leader` and `epoch` None: the topic itself was refused (`error`), or, for `epoch`, the version
    has no LeaderEpoch (below v7)."""

    broker: int
    version: int
    leader: int | None
    epoch: int | None
    error: int
    # The replica list as given: at v0 Kafka leaves out replicas whose broker is down and answers
    # REPLICA_NOT_AVAILABLE for the partition (its Metadata cache's `errorUnavailableEndpoints`).
    replicas: tuple[int, ...] = ()
