"""KIP-320 "ACL Changes": OffsetsForLeaderEpoch, once authorized by the Cluster resource only, is allowed
by Describe on the topic, and the old authorization still answers it.

"Currently the OffsetForLeaderEpoch request is restricted to inter-broker communication. It requires
authorization to the Cluster resource. As part of this KIP, we will change this to require Describe
access on the Topic resource. For backwards compatibility, we will continue to allow the old
authorization."

The answers are a user's, grant by grant (harness.scenarios.ofle_grants); the ACLs each phase held
are the broker's own listing, so the premise (which grant was in force) is read, not assumed.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.epoch_fencing import CONSUMER, SERVED, assert_offsets_for_epoch_authorized_by_describe
from harness.errors import require_scene, require_target
from harness.histories.authorization import OffsetsForEpochAsUser
from harness.histories.ofle_grants import CLUSTER, Acl, GrantAnswers, OffsetsForEpochGrants
from harness.protocol.errors import error_name

DESCRIBE, CLUSTER_ACTION, ALLOW = "DESCRIBE", "CLUSTER_ACTION", "ALLOW"
REFUSED = "TOPIC_AUTHORIZATION_FAILED"
LEADER_EPOCH_FROM = 1  # OffsetForLeaderEpoch v0 answers EndOffset only


def _on(acls: Sequence[Acl], resource: str, name: str | None = None) -> set[str]:
    """The operations the user is allowed on that resource, as the broker listed them."""
    return {a.operation for a in acls if a.resource == resource and (name is None or a.name == name)
            and a.permission == ALLOW}


def _answer(a: OffsetsForEpochAsUser) -> str:
    p = a.partition
    return (f"v{a.version} ReplicaId {a.replica_id} on {a.topic}: {error_name(p['ErrorCode'])}, epoch "
            f"{p.get('LeaderEpoch', '-')} end offset {p['EndOffset']}")


def _held(phase: GrantAnswers) -> str:
    return f"while the broker listed for the user: {[str(a) for a in phase.acls] or 'nothing'}"


def assert_describe_only_authorizes(run: OffsetsForEpochGrants) -> None:
    """KIP-320 "ACL Changes" ("we will change this to require Describe access on the Topic resource"):
    a user holding DESCRIBE, and no other operation, on a topic is answered its epoch and end offset,
    with the consumer's ReplicaId (and refused no authorization with another), and a topic she holds
    nothing on is refused TOPIC_AUTHORIZATION_FAILED (harness.checks.epoch_fencing's rule). Premise,
    read from the broker's own ACL listing: DESCRIBE was the only grant on the first topic, none on
    the second, none on the Cluster (READ or ALL would imply DESCRIBE and hide a broker that wants more)."""
    phase = run.describe_only
    on_described, on_hidden = _on(phase.acls, "topic", run.described), _on(phase.acls, "topic", run.hidden)
    on_cluster = _on(phase.acls, CLUSTER)
    require_scene(on_described == {DESCRIBE} and not on_hidden and not on_cluster,
                  f"the scene needs {run.user} to hold DESCRIBE only on {run.described}, nothing on {run.hidden} "
                  f"and nothing on the cluster: {run.described} {sorted(on_described)}, {run.hidden} "
                  f"{sorted(on_hidden)}, cluster {sorted(on_cluster)}; {_held(phase)}")
    assert_offsets_for_epoch_authorized_by_describe(list(phase.answers), f"{run.user} (DESCRIBE only on "
                                                                         f"{run.described})")


def _refused_without_grant(run: OffsetsForEpochGrants, phase: GrantAnswers, when: str) -> None:
    """Premise: without the Cluster grant, the user is refused the topic she holds nothing on."""
    mine = [a for a in phase.answers if a.topic == run.hidden]
    require_scene(mine, f"the harness asked nothing of {run.hidden} {when}")
    answered = [a for a in mine if error_name(a.partition["ErrorCode"]) != REFUSED]
    require_target(not answered,
                   f"{when}, {run.user}, holding nothing on {run.hidden}, was not refused it: "
                   + "; ".join(map(_answer, answered)) + f" ({_held(phase)}), so the Cluster grant's effect cannot "
                   "be told apart (kip320.ofle.authorized-by-describe judges a broker that answers without an ACL)")


def assert_cluster_action_still_authorizes(run: OffsetsForEpochGrants) -> None:
    """KIP-320 "ACL Changes": "For backwards compatibility, we will continue to allow the old
    authorization", ClusterAction on the Cluster resource. A user holding it, and nothing on a topic,
    is answered that topic's epoch and end offset at every OffsetsForLeaderEpoch version the leader
    speaks, with the consumer's ReplicaId, and refused no authorization with a broker's (v3+; what a
    broker answers a follower's id otherwise is no promise of the ACL text). Premises: without the
    grant, before it and after it was removed, the same topic was refused TOPIC_AUTHORIZATION_FAILED
    (else "target refused the premise": nothing shows the grant is what answered), and the broker
    listed the grant, and nothing on the topic, while the user asked."""
    _refused_without_grant(run, run.describe_only, "before the grant")
    _refused_without_grant(run, run.revoked, "after the grant was removed")
    phase = run.cluster_action
    require_scene(CLUSTER_ACTION in _on(phase.acls, CLUSTER) and not _on(phase.acls, "topic", run.hidden),
                  f"the scene needs {run.user} to hold CLUSTER_ACTION on the cluster and nothing on {run.hidden}; "
                  f"{_held(phase)}")
    asked = [a for a in phase.answers if a.topic == run.hidden]
    require_scene(asked, f"the harness asked nothing of {run.hidden} while the grant held")
    wrong = []
    for a in asked:
        p, name = a.partition, error_name(a.partition["ErrorCode"])
        if a.replica_id != CONSUMER and name != SERVED and "AUTHORIZATION" not in name:
            continue  # a broker's id refused otherwise than by authorization (see the docstring)
        got = (name, p["EndOffset"], p.get("LeaderEpoch", a.epoch) if a.version >= LEADER_EPOCH_FROM else a.epoch)
        if got != (SERVED, a.log_end, a.epoch):
            wrong.append(f"{_answer(a)}; expected NONE, epoch {a.epoch} end offset {a.log_end}")
    assert not wrong, (
        f"OffsetsForLeaderEpoch as {run.user}, who holds CLUSTER_ACTION on the cluster and nothing on {run.hidden} "
        f"(KIP-320 \"ACL Changes\": \"we will continue to allow the old authorization\"), {len(wrong)} of "
        f"{len(asked)} answers:\n  " + "\n  ".join(wrong) + f"\n  {_held(phase)}")
