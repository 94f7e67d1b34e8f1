"""The broker checks reject answers that break their promises (recorded 4.4.0 answers, altered): a
follower's requests at a wrong epoch, OffsetsForLeaderEpoch authorized by DESCRIBE only and by the
Cluster resource."""

from __future__ import annotations

import pytest
from alterations import Alteration, Change, alteration, altered, raw, typed

from harness.checks.ofle_grants import assert_cluster_action_still_authorizes, assert_describe_only_authorizes
from harness.checks.replica_fencing import assert_follower_requests_fenced
from harness.errors import NotSupported, SceneUnmet, TargetRefused
from harness.histories.ofle_grants import OffsetsForEpochGrants
from harness.histories.replica_fencing import FollowerFencing
from harness.promises import catalogue
from harness.protocol.errors import error_code

FENCING, GRANTS = "kip320-follower-fencing", "kip320-offsets-for-epoch-grants"
STALE, DESCRIBE, CLUSTER = ("kip320.replica.stale-epoch-fenced", "kip320.ofle.authorized-by-describe",
                            "kip320.ofle.authorized-by-cluster-action")
FENCED, UNKNOWN, NONE = error_code("FENCED_LEADER_EPOCH"), error_code("UNKNOWN_LEADER_EPOCH"), 0
REFUSED = error_code("TOPIC_AUTHORIZATION_FAILED")


def _set_answer(api: str, older: bool, field: str, value: object) -> Change:
    def change(answers: list, data: dict) -> list:
        for a in answers:
            p = a["probe"]
            if p["api"] == api and (p["requested_epoch"] < p["current_epoch"]) == older:
                p["partition"][field] = value
                break
        return answers
    return change


def _drop(api: str) -> Change:
    return lambda answers, data: [a for a in answers if a["probe"]["api"] != api]


def _only_older(answers: list, data: dict) -> list:
    return [a for a in answers if a["probe"]["requested_epoch"] < a["probe"]["current_epoch"]]


def _cluster_answer(field: str, value: object, replica_id: int | None = -1) -> Change:
    def change(answers: list, data: dict) -> list:
        for a in answers:
            if replica_id is None or a["replica_id"] == replica_id:
                a["partition"][field] = value
                break
        return answers
    return change


def _acl_op(topic_key: str, op: str) -> Change:
    def change(acls: list, data: dict) -> list:
        return [{**a, "operation": op} if a["resource"] == "topic" and a["name"] == data[topic_key] else a
                for a in acls]
    return change


def _add_acl(resource: str, name_key: str | None, op: str) -> Change:
    def change(acls: list, data: dict) -> list:
        name = data[name_key] if name_key else "kafka-cluster"
        return [*acls, {"resource": resource, "name": name, "operation": op, "permission": "ALLOW"}]
    return change


def _answered_without_grant(answers: list, data: dict) -> list:
    for a in answers:
        if a["topic"] == data["hidden"]:
            a["partition"]["ErrorCode"] = NONE
            a["partition"]["EndOffset"] = a["log_end"]
    return answers


ALTERATIONS = [
    alteration("older-fetch-served", STALE, FENCING, "answers", _set_answer("Fetch", True, "ErrorCode", NONE),
               assert_follower_requests_fenced, "expected FENCED_LEADER_EPOCH"),
    alteration("older-fetch-not-leader", STALE, FENCING, "answers",
               _set_answer("Fetch", True, "ErrorCode", error_code("NOT_LEADER_OR_FOLLOWER")),
               assert_follower_requests_fenced, "NOT_LEADER_OR_FOLLOWER"),
    alteration("older-fetch-unknown", STALE, FENCING, "answers", _set_answer("Fetch", True, "ErrorCode", UNKNOWN),
               assert_follower_requests_fenced, "UNKNOWN_LEADER_EPOCH(75), expected FENCED"),
    alteration("newer-fetch-fenced", STALE, FENCING, "answers", _set_answer("Fetch", False, "ErrorCode", FENCED),
               assert_follower_requests_fenced, "expected UNKNOWN_LEADER_EPOCH"),
    alteration("older-ofle-answered", STALE, FENCING, "answers",
               _set_answer("OffsetForLeaderEpoch", True, "ErrorCode", NONE),
               assert_follower_requests_fenced, "expected FENCED_LEADER_EPOCH"),
    alteration("fenced-ofle-with-an-end-offset", STALE, FENCING, "answers",
               _set_answer("OffsetForLeaderEpoch", True, "EndOffset", 12),
               assert_follower_requests_fenced, "refused but returned"),
    alteration("no-ofle-sent", STALE, FENCING, "answers", _drop("OffsetForLeaderEpoch"),
               assert_follower_requests_fenced, "OffsetForLeaderEpoch v3+", NotSupported),
    alteration("no-newer-epoch-sent", STALE, FENCING, "answers", _only_older, assert_follower_requests_fenced,
               "needs one older", SceneUnmet),
    alteration("the-leaders-own-id", STALE, FENCING, "follower", lambda old, data: data["leader"],
               assert_follower_requests_fenced, "not an in-sync follower", SceneUnmet),
    # DESCRIBE only
    alteration("describe-only-refused", DESCRIBE, GRANTS, "describe_only.answers",
               _cluster_answer("ErrorCode", REFUSED), assert_describe_only_authorizes, "DESCRIBE allowed"),
    alteration("describe-only-wrong-end-offset", DESCRIBE, GRANTS, "describe_only.answers",
               _cluster_answer("EndOffset", 3), assert_describe_only_authorizes, "end offset 3"),
    alteration("describe-held-as-read", DESCRIBE, GRANTS, "describe_only.acls", _acl_op("described", "READ"),
               assert_describe_only_authorizes, "DESCRIBE only", SceneUnmet),
    alteration("describe-with-a-cluster-grant", DESCRIBE, GRANTS, "describe_only.acls",
               _add_acl("cluster", None, "CLUSTER_ACTION"), assert_describe_only_authorizes, "cluster",
               SceneUnmet),
    # ClusterAction on the Cluster
    alteration("cluster-action-refused", CLUSTER, GRANTS, "cluster_action.answers",
               _cluster_answer("ErrorCode", REFUSED), assert_cluster_action_still_authorizes,
               "TOPIC_AUTHORIZATION_FAILED"),
    alteration("cluster-action-broker-id-refused", CLUSTER, GRANTS, "cluster_action.answers",
               _cluster_answer("ErrorCode", REFUSED, replica_id=None), assert_cluster_action_still_authorizes,
               "expected NONE"),
    alteration("cluster-action-wrong-epoch", CLUSTER, GRANTS, "cluster_action.answers",
               _cluster_answer("LeaderEpoch", 7), assert_cluster_action_still_authorizes, "epoch 7"),
    alteration("answered-before-the-grant", CLUSTER, GRANTS, "describe_only.answers", _answered_without_grant,
               assert_cluster_action_still_authorizes, "before the grant", TargetRefused),
    alteration("answered-after-revoking", CLUSTER, GRANTS, "revoked.answers", _answered_without_grant,
               assert_cluster_action_still_authorizes, "after the grant was removed", TargetRefused),
    alteration("grant-not-listed", CLUSTER, GRANTS, "cluster_action.acls",
               lambda acls, data: [a for a in acls if a["resource"] != "cluster"],
               assert_cluster_action_still_authorizes, "CLUSTER_ACTION on the cluster", SceneUnmet),
    alteration("topic-acl-beside-the-grant", CLUSTER, GRANTS, "cluster_action.acls",
               _add_acl("topic", "hidden", "DESCRIBE"), assert_cluster_action_still_authorizes, "nothing on",
               SceneUnmet),
]
KINDS = {FENCING: FollowerFencing, GRANTS: OffsetsForEpochGrants}


def test_the_recorded_answers_pass() -> None:
    assert_follower_requests_fenced(typed(FollowerFencing, raw(FENCING)))
    grants = typed(OffsetsForEpochGrants, raw(GRANTS))
    assert_describe_only_authorizes(grants)
    assert_cluster_action_still_authorizes(grants)


def test_the_recorded_scenes_happened() -> None:
    """The recordings hold what the checks rest on: the follower's id on every request, both wrong
    epochs of both APIs; the DESCRIBE-only grant listed by the broker, the hidden topic refused
    without the Cluster grant and answered at every version with it."""
    run = typed(FollowerFencing, raw(FENCING))
    assert {a.replica_id for a in run.answers} == {run.follower} != {run.leader}
    assert {a.probe.api for a in run.answers} == {"Fetch", "OffsetForLeaderEpoch"}
    grants = typed(OffsetsForEpochGrants, raw(GRANTS))
    assert {(a.resource, a.operation) for a in grants.describe_only.acls if a.name == grants.described} == {
        ("topic", "DESCRIBE")}
    assert len({a.version for a in grants.cluster_action.answers}) >= 2


@pytest.mark.parametrize("a", ALTERATIONS, ids=[a.id for a in ALTERATIONS])
def test_the_altered_answer_fails_its_check(a: Alteration) -> None:
    history = altered(a, KINDS[a.recording])
    with pytest.raises(a.raises) as caught:
        a.check(history)
    assert a.shows in str(caught.value), f"the failure does not show {a.shows!r}:\n{caught.value}"


def test_the_alterations_are_of_known_promises_and_unique() -> None:
    assert {a.promise for a in ALTERATIONS} <= set(catalogue())
    assert len({a.id for a in ALTERATIONS}) == len(ALTERATIONS)
