"""KIP-320 "Replica Handling": the leader validates the CurrentLeaderEpoch of a follower's requests.

"When a replica becomes a follower, it will attempt to find the truncation offset using the
OffsetsForLeaderEpoch API. The new epoch will be included in this request so that the follower is
ensured that it is truncating using the log from the leader in the correct epoch ... After the
follower has truncated its log, it will begin fetching as it does today. It will similarly include the
current leader epoch, which will be validated by the leader. If the fetch response contains either the
FENCED_REPLICA or UNKNOWN_LEADER_EPOCH error code, the follower will simply retry". FENCED_REPLICA is
the KIP's earlier name of FENCED_LEADER_EPOCH ("Protocol Changes / Fetch").

The requests are a follower's as the wire shows them (ReplicaId its broker id: a leader knows them
from a consumer's by nothing else), built by harness.scenarios.replica_fencing; the rule is
harness.checks.epoch_fencing's, as for a consumer: older is FENCED_LEADER_EPOCH, newer
UNKNOWN_LEADER_EPOCH, with no records and no end offset.
"""

from __future__ import annotations

from harness.checks.epoch_fencing import assert_epoch_validation
from harness.errors import NotSupported, require_scene
from harness.histories.replica_fencing import FollowerFencing

APIS = {"Fetch": "Fetch v9+ (CurrentLeaderEpoch)", "OffsetForLeaderEpoch": "OffsetForLeaderEpoch v3+ (ReplicaId)"}


def assert_follower_requests_fenced(run: FollowerFencing) -> None:
    """See the module: every follower-shaped Fetch and OffsetsForLeaderEpoch at the leader's epoch minus
    one gets FENCED_LEADER_EPOCH, at plus one UNKNOWN_LEADER_EPOCH, neither with data. Premises of the
    harness's making: the ReplicaId is an in-sync follower's, not the leader's, and both wrong epochs
    were sent of both APIs, the older one a real past epoch (0 or more)."""
    require_scene(run.follower != run.leader and run.follower in run.isr,
                  f"the harness's requests named follower {run.follower}, not an in-sync follower of leader "
                  f"{run.leader} (ISR {list(run.isr)})")
    strangers = sorted({a.replica_id for a in run.answers} - {run.follower})
    require_scene(not strangers, f"requests with ReplicaId {strangers}, not follower {run.follower}'s")
    for api, what in APIS.items():
        mine = [a.probe for a in run.answers if a.probe.api == api]
        if not mine:
            raise NotSupported(f"a follower's {what}", f"the leader {run.leader} speaks no such version")
        cases = {("older" if p.requested_epoch < p.current_epoch else "newer" if p.requested_epoch > p.current_epoch
                  else "current") for p in mine}
        require_scene(cases == {"older", "newer"} and min(p.requested_epoch for p in mine) >= 0,
                      f"the harness sent {api} as follower {run.follower} with CurrentLeaderEpoch "
                      f"{sorted({p.requested_epoch for p in mine})} at epoch {run.epoch}: it needs one older (0 or "
                      "more) and one newer, nothing else")
    assert_epoch_validation([a.probe for a in run.answers],
                            f"for follower {run.follower}'s requests (ReplicaId {run.follower}) to leader "
                            f"{run.leader} of {run.topic}-0 at epoch {run.epoch}")
