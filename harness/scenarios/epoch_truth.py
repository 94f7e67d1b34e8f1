"""Probes of a leader-moves history (harness.scenarios.kip320.leader_moves) that judge the leader's
epoch against something other than Metadata's own word, and the premise every check of a history
needs: that the leader really moved.

- `require_moves(history, n)`: the history holds at least `n` leader moves (epoch rises seen by
  Metadata), else `TargetRefused` with the history's steps as the evidence.
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
from harness.scenarios.kip320 import EpochHistory

FIRST_WITH_CURRENT_EPOCH = FETCH_CURRENT_LEADER_EPOCH.first
PAST_THE_END = 1000  # how far past the log end the out-of-range fetch asks


def moves_seen(history: EpochHistory) -> int:
    """How many steps of the history raised the epoch Metadata gave (the highest any broker said)."""
    tops = [max(s.epochs.values(), default=NO_EPOCH) for s in history.steps]
    return sum(1 for before, after in itertools.pairwise(tops) if after > before)


def require_moves(history: EpochHistory, n: int) -> None:
    """`TargetRefused` unless at least `n` leader moves happened in `history`: a check of a partition's
    epochs after moves would otherwise pass (or fail) on a partition that never left its first epoch."""
    seen = moves_seen(history)
    if history.unsupported:
        history.require_moves(f"{n} leader moves")
    if history.refused is not None or seen < n:
        steps = "; ".join(f"{s.step}: leader {s.leader}, epochs {s.epochs}" for s in history.steps) or "none"
        why = f", the target refused: {history.refused}" if history.refused else ""
        raise TargetRefused(f"the check needs {n} leader moves of {history.topic}; the {history.name} history has "
                            f"{seen}{why} (steps: {steps})")


def out_of_range_probe(cluster: Cluster, history: EpochHistory) -> OutOfRangeProbe:
    """Ask the leader of `history`'s partition (one move at least) for an offset past its log end."""
    require_moves(history, 1)
    with rr.RawConnector(cluster) as raw:
        p = rr.partition_metadata(raw(cluster.running_brokers()[0]), history.topic)
        client = raw(p["LeaderId"])
        # Both probes ask with CurrentLeaderEpoch: a leader without Fetch v9+ is "not supported" (its range shown).
        require_offered(FETCH_CURRENT_LEADER_EPOCH, offered(client, p["LeaderId"], "Fetch"))
        current = rr.partition_metadata(client, history.topic)["LeaderEpoch"]
        top = client.max_version("Fetch")
        served = rr.fetch(client, top, history.topic, history.topic_id, 0, 0, current_epoch=current)
        log_end = served["HighWatermark"]
        offset = log_end + PAST_THE_END
        answers = [
            FetchProbe(v, e, rr.fetch(client, v, history.topic, history.topic_id, 0, offset, current_epoch=e))
            for v in rr.versions(client, "Fetch", FIRST_WITH_CURRENT_EPOCH)
            for e in (NO_EPOCH, current, current - 1, current + 1)
        ]
        return OutOfRangeProbe(history.topic, p["LeaderId"], current, log_end, offset,
                               FetchProbe(top, current, served), answers)


def metadata_truth_probe(cluster: Cluster, history: EpochHistory) -> MetadataTruthProbe:
    with rr.RawConnector(cluster) as raw:
        p = rr.partition_metadata(raw(cluster.running_brokers()[0]), history.topic)
        client = raw(p["LeaderId"])
        require_offered(FETCH_CURRENT_LEADER_EPOCH, offered(client, p["LeaderId"], "Fetch"))
        epoch = rr.partition_metadata(client, history.topic)["LeaderEpoch"]
        batches, _ = rr.read_log(client, history.topic, history.topic_id)
        start = history.appends[-1].first if history.appends else 0
        fetches = [
            FetchFrom(v, epoch, rr.fetch(client, v, history.topic, history.topic_id, 0, start, current_epoch=epoch),
                      start)
            for v in rr.versions(client, "Fetch", FIRST_WITH_CURRENT_EPOCH)
        ]
        return MetadataTruthProbe(history.topic, p["LeaderId"], epoch, list(history.steps), history.append_dicts(),
                                  b"".join(b.encode() for b in batches), fetches)
