"""Who may ask OffsetsForLeaderEpoch (KIP-320 "ACL Changes"), grant by grant, on a SASL side cluster with
the StandardAuthorizer (harness.cluster.side.side_cluster, sasl=True: admin a super user, alice
with ACLs only).

Two topics of one partition, 5 records each (written as the admin): alice holds DESCRIBE, and only
DESCRIBE, on `described`, and nothing on `hidden`. She asks the leader of each, at its top
OffsetsForLeaderEpoch version, with the consumer's ReplicaId -1, the debug id -2 and the leader's id.
Then the admin grants her ClusterAction on the Cluster resource (the API's authorization before
KIP-320, which "For backwards compatibility, we will continue to allow") and she asks of `hidden` at
every version the leader speaks (ReplicaId -1 and the leader's id from v3); the grant is removed (also
when the scene fails half-way: the side cluster's other checks need alice without it) and she asks
of `hidden` once more. Each phase records alice's ACLs as the broker listed them while she asked.
"""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from harness import confluent
from harness.clients import raw as rr
from harness.clients.produce_read import produce
from harness.cluster.base import Cluster
from harness.histories.authorization import OffsetsForEpochAsUser
from harness.histories.observations import Body
from harness.histories.ofle_grants import CLUSTER, Acl, GrantAnswers, OffsetsForEpochGrants
from harness.protocol.client import RawClient
from harness.protocol.sentinels import CONSUMER_REPLICA_ID, NO_EPOCH
from harness.scenarios.kip1319 import USER, side_topic
from harness.waiting import Owed, wait_until

RECORDS = 5
DEBUG_REPLICA_ID = -2
REPLICA_ID_FROM = 3  # the first OffsetForLeaderEpoch version with ReplicaId
CURRENT_EPOCH_FROM = 2  # the first with CurrentLeaderEpoch
CLUSTER_NAME = "kafka-cluster"
_RESOURCES = {ResourceType.TOPIC: "topic", ResourceType.BROKER: CLUSTER, ResourceType.GROUP: "group",
              ResourceType.TRANSACTIONAL_ID: "transactional-id"}


def _acl(b: AclBinding) -> Acl:
    return Acl(_RESOURCES.get(b.restype, str(b.restype.name).lower()), b.name, b.operation.name,
               b.permission_type.name)


def _everything(principal: str) -> AclBindingFilter:
    return AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, principal, None, AclOperation.ANY,
                            AclPermissionType.ANY)


def _listed(admin: AdminClient, principal: str, holds: Callable[[set[Acl]], bool], what: str) -> tuple[Acl, ...]:
    """The principal's ACLs as the broker lists them, once `holds(them)` (the authorizer took the change)."""
    seen: list[Acl] = []

    def took() -> bool:
        listed = confluent.admin_result(admin, admin.describe_acls(_everything(principal)), 10)
        seen[:] = sorted({_acl(b) for b in listed}, key=str)
        return holds(set(seen))

    wait_until(took, 30, lambda: f"ACLs of {principal} {what}: listed {[str(a) for a in seen]}", owed=Owed.PREMISE)
    return tuple(seen)


def _ask(client: RawClient, version: int, topic: str, replica_id: int, epoch: int) -> Body:
    part: Body = {"Partition": 0, "LeaderEpoch": epoch}
    if version >= CURRENT_EPOCH_FROM:
        part["CurrentLeaderEpoch"] = NO_EPOCH
    body: Body = {"Topics": [{"Topic": topic, "Partitions": [part]}]}
    if version >= REPLICA_ID_FROM:
        body["ReplicaId"] = replica_id
    answer: Body = client.send("OffsetForLeaderEpoch", version, body)["Topics"][0]["Partitions"][0]
    return answer


def offsets_for_epoch_grants(cluster: Cluster) -> OffsetsForEpochGrants:
    """See the module."""
    described, hidden = side_topic(cluster, "ofle-described"), side_topic(cluster, "ofle-hidden")
    principal = f"User:{USER}"
    allow = AclPermissionType.ALLOW
    describe = AclBinding(ResourceType.TOPIC, described, ResourcePatternType.LITERAL, principal, "*",
                          AclOperation.DESCRIBE, allow)
    cluster_action = AclBinding(ResourceType.BROKER, CLUSTER_NAME, ResourcePatternType.LITERAL, principal, "*",
                                AclOperation.CLUSTER_ACTION, allow)
    granted = _acl(cluster_action)
    with confluent.producer(cluster.client_config()) as producer:
        for topic in (described, hidden):
            produce(producer, topic, [b"x"] * RECORDS)
    with confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw_admin, \
            rr.RawConnector(cluster, user=USER) as raw_user:
        facts = {}
        for topic in (described, hidden):
            p = rr.partition_metadata(raw_admin(), topic)
            facts[topic] = (p["LeaderId"], p["LeaderEpoch"], cluster.state.log_end_offset(topic, 0, p["LeaderId"]))

        def asked(topic: str, allowed: bool, versions: list[int] | None = None) -> list[OffsetsForEpochAsUser]:
            leader, epoch, log_end = facts[topic]
            client = raw_user(leader)
            top = client.max_version("OffsetForLeaderEpoch")
            out = []
            for version in versions or [top]:
                ids = (CONSUMER_REPLICA_ID, DEBUG_REPLICA_ID, leader) if versions is None else (CONSUMER_REPLICA_ID,
                                                                                               leader)
                for replica_id in ids if version >= REPLICA_ID_FROM else (CONSUMER_REPLICA_ID,):
                    out.append(OffsetsForEpochAsUser(replica_id, topic, allowed, version, log_end, epoch,
                                                     _ask(client, version, topic, replica_id, epoch)))
            return out

        confluent.admin_results(admin, admin.create_acls([describe]).values(), 30)
        mine = _acl(describe)
        acls = _listed(admin, principal, lambda s: mine in s, f"holding {mine}")
        first = GrantAnswers(f"DESCRIBE on topic {described}", acls,
                             tuple(asked(described, True) + asked(hidden, False)))
        try:
            confluent.admin_results(admin, admin.create_acls([cluster_action]).values(), 30)
            acls = _listed(admin, principal, lambda s: granted in s, f"holding {granted}")
            every = rr.versions(raw_user(facts[hidden][0]), "OffsetForLeaderEpoch")
            second = GrantAnswers(f"CLUSTER_ACTION on the cluster {CLUSTER_NAME}", acls,
                                  tuple(asked(hidden, True, every)))
        finally:
            revoke = AclBindingFilter(ResourceType.BROKER, CLUSTER_NAME, ResourcePatternType.LITERAL, principal, "*",
                                      AclOperation.CLUSTER_ACTION, allow)
            confluent.admin_results(admin, admin.delete_acls([revoke]).values(), 30)
            acls = _listed(admin, principal, lambda s: granted not in s, f"without {granted}")
        third = GrantAnswers(f"none on topic {hidden} (the cluster grant removed)", acls,
                             tuple(asked(hidden, False)))
    return OffsetsForEpochGrants(USER, described, hidden, first, second, third)
