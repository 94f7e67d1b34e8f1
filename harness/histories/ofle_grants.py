"""Who may ask OffsetsForLeaderEpoch, grant by grant: a user who may only describe a topic, and the same
user once granted the inter-broker authorization the API needed before KIP-320 (ClusterAction on the
Cluster resource), then without it again.

harness.scenarios.ofle_grants asks; harness.checks.ofle_grants judges (and, for the DESCRIBE-only
answers, harness.checks.epoch_fencing's rule for kip320.ofle.authorized-by-describe).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.histories.authorization import OffsetsForEpochAsUser

CLUSTER = "cluster"  # the `resource` of an Acl on the Cluster resource (its name is always kafka-cluster)


@dataclass(frozen=True)
class Acl:
    """One ACL of the user as the broker listed it (DescribeAcls) while the answers were asked:
    resource type ("topic", `CLUSTER`, "group", ...), resource name, operation and permission, by name."""

    resource: str
    name: str
    operation: str
    permission: str

    def __str__(self) -> str:
        return f"{self.permission} {self.operation} on {self.resource} {self.name}"


@dataclass(frozen=True)
class GrantAnswers:
    """The answers to the user's OffsetsForLeaderEpoch requests while the broker listed `acls` for
    them (every ACL of the user, on any resource): `answers[i].allowed` says whether the grant under
    test covers that request (DESCRIBE on its topic, or ClusterAction on the Cluster)."""

    grant: str
    acls: tuple[Acl, ...]
    answers: tuple[OffsetsForEpochAsUser, ...]


@dataclass(frozen=True)
class OffsetsForEpochGrants:
    """OffsetsForLeaderEpoch sent by `user` on a SASL cluster with an authorizer, in three phases:

    - `describe_only`: the user holds DESCRIBE, and nothing else, on `described`, and nothing on
      `hidden`; both are asked at the top version with ReplicaId -1, -2 and the leader's id;
    - `cluster_action`: ClusterAction on the Cluster added; `hidden` asked at every version the
      leader speaks (ReplicaId -1 and the leader's id from v3, which has the field);
    - `revoked`: the Cluster ACL removed again; `hidden` asked once more at the top version."""

    user: str
    described: str
    hidden: str
    describe_only: GrantAnswers
    cluster_action: GrantAnswers
    revoked: GrantAnswers
