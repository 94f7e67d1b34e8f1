"""Probes of a leader-moves lineage (harness.scenarios.kip320.leader_moves) that judge the leader's
epoch against something other than Metadata's own word, and the premise every check of a lineage
needs: that the leader really moved.

- `require_moves(lineage, n)`: the lineage holds at least `n` leader moves (epoch rises seen by
  Metadata), else `TargetRefused` with the lineage's steps as the evidence.
- `out_of_range_probe`: Fetch, at every version with CurrentLeaderEpoch (v9+), from an offset past
  the leader's log end, with CurrentLeaderEpoch -1, the current epoch, an older and a newer one.
- `metadata_truth_probe`: the leader's log (each batch's PartitionLeaderEpoch, stamped at append)
  beside the epochs Metadata gave after each move, and a Fetch at every version from v9 with
  CurrentLeaderEpoch = the epoch the leader's Metadata gives now.
"""

from __future__ import annotations

import itertools

from harness.clients import raw as rr
from harness.cluster.base import Cluster
from harness.errors import TargetRefused
from harness.histories.epoch_truth import FetchFrom, FetchProbe, MetadataTruthProbe, OutOfRangeProbe
from harness.histories.version_needs import FETCH_CURRENT_LEADER_EPOCH, require_offered
from harness.protocol.sentinels import NO_EPOCH
from harness.scenarios.advertised import offered
from harness.scenarios.kip320 import EpochLineage

FIRST_WITH_CURRENT_EPOCH = FETCH_CURRENT_LEADER_EPOCH.first
PAST_THE_END = 1000  # how far past the log end the out-of-range fetch asks


def moves_seen(lineage: EpochLineage) -> int:
    """How many steps of the lineage raised the epoch Metadata gave (the highest any broker said)."""
    tops = [max(s.epochs.values(), default=NO_EPOCH) for s in lineage.steps]
    return sum(1 for before, after in itertools.pairwise(tops) if after > before)


def require_moves(lineage: EpochLineage, n: int) -> None:
    """`TargetRefused` unless at least `n` leader moves happened in `lineage`: a check of a partition's
    epochs after moves would otherwise pass (or fail) on a partition that never left its first epoch."""
    seen = moves_seen(lineage)
    if lineage.unsupported:
        lineage.require_moves(f"{n} leader moves")
    if lineage.refused is not None or seen < n:
        steps = "; ".join(f"{s.step}: leader {s.leader}, epochs {s.epochs}" for s in lineage.steps) or "none"
        why = f", the target refused: {lineage.refused}" if lineage.refused else ""
        raise TargetRefused(f"the check needs {n} leader moves of {lineage.topic}; the {lineage.name} lineage has "
                            f"{seen}{why} (steps: {steps})")


def out_of_range_probe(cluster: Cluster, lineage: EpochLineage) -> OutOfRangeProbe:
    """Ask the leader of `lineage`'s partition (one move at least) for an offset past its log end."""
    require_moves(lineage, 1)
    with rr.RawConnector(cluster) as raw:
        p = rr.partition_metadata(raw(cluster.state.running_brokers()[0]), lineage.topic)
        client = raw(p["LeaderId"])
        # Both probes ask with CurrentLeaderEpoch: a leader without Fetch v9+ is "not supported" (its range shown).
        require_offered(FETCH_CURRENT_LEADER_EPOCH, offered(client, p["LeaderId"], "Fetch"))
        current = rr.partition_metadata(client, lineage.topic)["LeaderEpoch"]
        top = client.max_version("Fetch")
        served = rr.fetch(client, top, lineage.topic, lineage.topic_id, 0, 0, current_epoch=current)
        log_end = served["HighWatermark"]
        offset = log_end + PAST_THE_END
        answers = [
            FetchProbe(v, e, rr.fetch(client, v, lineage.topic, lineage.topic_id, 0, offset, current_epoch=e))
            for v in rr.versions(client, "Fetch", FIRST_WITH_CURRENT_EPOCH)
            for e in (NO_EPOCH, current, current - 1, current + 1)
        ]
        return OutOfRangeProbe(lineage.topic, p["LeaderId"], current, log_end, offset,
                               FetchProbe(top, current, served), answers)


def metadata_truth_probe(cluster: Cluster, lineage: EpochLineage) -> MetadataTruthProbe:
    with rr.RawConnector(cluster) as raw:
        p = rr.partition_metadata(raw(cluster.state.running_brokers()[0]), lineage.topic)
        client = raw(p["LeaderId"])
        require_offered(FETCH_CURRENT_LEADER_EPOCH, offered(client, p["LeaderId"], "Fetch"))
        epoch = rr.partition_metadata(client, lineage.topic)["LeaderEpoch"]
        batches, _ = rr.read_log(client, lineage.topic, lineage.topic_id)
        start = lineage.appends[-1].first if lineage.appends else 0
        fetches = [
            FetchFrom(v, epoch, rr.fetch(client, v, lineage.topic, lineage.topic_id, 0, start, current_epoch=epoch),
                      start)
            for v in rr.versions(client, "Fetch", FIRST_WITH_CURRENT_EPOCH)
        ]
        return MetadataTruthProbe(lineage.topic, p["LeaderId"], epoch, list(lineage.steps), lineage.append_dicts(),
                                  b"".join(b.encode() for b in batches), fetches)
