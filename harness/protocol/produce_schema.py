"""KIP-359's field in a target's own Produce schema: which versions carry CurrentLeaderEpoch."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from harness.protocol.spec import SpecSet

EPOCH_FIELD = "CurrentLeaderEpoch"


def partition_fields(specs: SpecSet, versions: Iterable[int]) -> dict[int, list[str]]:
    """The fields of one partition of a Produce request at each version, per the target's own schema."""
    topic = specs.api("Produce").request.struct.field("TopicData")
    assert topic.struct is not None
    partition = topic.struct.field("PartitionData")
    assert partition.struct is not None
    return {v: [f.name for f in partition.struct.fields if f.present_in(v)] for v in versions}


def versions_with_epoch(fields: Mapping[int, Sequence[str]]) -> list[int]:
    """The Produce versions whose partitions carry CurrentLeaderEpoch."""
    return sorted(v for v, names in fields.items() if EPOCH_FIELD in names)
