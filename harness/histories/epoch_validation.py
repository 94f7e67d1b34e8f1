"""What a replica answered to a request carrying a CurrentLeaderEpoch: the KIP-320 epoch check.

One `EpochProbe` per request: the KIP-320 probes (harness.scenarios.kip320: `epoch_validation`,
Fetch, OffsetsForLeaderEpoch and ListOffsets to a leader and a follower), the KIP-359 Produce
probes and the KIP-1094 zombie leader's answers; harness.checks.epoch_fencing judges them all by one
rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from harness.histories.observations import Body


@dataclass(frozen=True)
class EpochProbe:
    """`api` at `version` to `broker`, a replica in `role` ("leader" or "follower"), with CurrentLeaderEpoch
    `requested_epoch` while Metadata gave the partition `current_epoch`; `partition`: the partition
    of the decoded answer."""

    api: str
    version: int
    broker: int
    role: str
    requested_epoch: int
    current_epoch: int
    partition: Body

    @classmethod
    def coerce(cls, answer: EpochProbe | Mapping[str, object]) -> EpochProbe:
        """`answer` as an EpochProbe. The KIP-359 and KIP-1094 scenes still hand their answers over
        as mappings of these fields; this goes once they build EpochProbes."""
        if isinstance(answer, Mapping):
            return cls(**{f.name: answer[f.name] for f in fields(cls)})  # type: ignore[arg-type]
        return answer
