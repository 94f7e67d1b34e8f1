"""Address rewriting on responses recorded from a real 3-broker cluster (see conftest)."""

from __future__ import annotations

import pytest

from harness.protocol.codec import decode_response, encode_response
from harness.protocol.spec import SpecSet
from harness.proxy.rewrite import address_fields, rewrite_addresses
from tests.proxy.recorded import RECORDED, RECORDED_BROKERS, recorded

# Where the proxy would listen in front of each recorded broker.
PROXIED = {addr: ("127.0.0.1", 40000 + node) for node, addr in RECORDED_BROKERS.items()}


def _remap(host: str, port: int) -> tuple[str, int]:
    return PROXIED[(host, port)]


def _decoded(specs: SpecSet, name: str) -> tuple[object, int, dict[str, object], dict[str, object]]:
    api_name, version = RECORDED[name]
    api = specs.api(api_name)
    header, body = decode_response(api, version, recorded(name))
    return api, version, header, body


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_responses_round_trip_byte_for_byte(specs: SpecSet, name: str) -> None:
    """Re-encoding an unedited response gives the broker's bytes: an edit changes only what it edits."""
    api, version, header, body = _decoded(specs, name)
    assert encode_response(api, version, header, body) == recorded(name)


def test_metadata_brokers_are_rewritten_and_the_rest_is_untouched(specs: SpecSet) -> None:
    api, version, header, body = _decoded(specs, "metadata-v12")
    before = {b["NodeId"]: (b["Host"], b["Port"]) for b in body["Brokers"]}
    assert before == RECORDED_BROKERS
    topics = body["Topics"]

    assert rewrite_addresses(api, version, body, _remap) == 3

    after = {b["NodeId"]: (b["Host"], b["Port"]) for b in body["Brokers"]}
    assert after == {n: ("127.0.0.1", 40000 + n) for n in (1, 2, 3)}
    assert body["Topics"] is topics and body["ControllerId"] in RECORDED_BROKERS
    again = decode_response(api, version, encode_response(api, version, header, body))[1]
    assert again == body


def test_find_coordinator_errors_name_no_broker_and_are_left_alone(specs: SpecSet) -> None:
    """Recorded before __consumer_offsets existed: COORDINATOR_NOT_AVAILABLE with node -1, "" and -1."""
    for name, fields in (("find-coordinator-v3", (None,)), ("find-coordinator-v6", ("Coordinators",))):
        api, version, header, body = _decoded(specs, name)
        assert address_fields(api, version) == fields
        assert rewrite_addresses(api, version, body, _remap) == 0
        assert encode_response(api, version, header, body) == recorded(name)


def test_find_coordinator_v3_single_and_v6_list(specs: SpecSet) -> None:
    api = specs.api("FindCoordinator")
    host, port = RECORDED_BROKERS[2]
    v3 = {"ThrottleTimeMs": 0, "ErrorCode": 0, "ErrorMessage": None, "NodeId": 2, "Host": host, "Port": port}
    assert rewrite_addresses(api, 3, v3, _remap) == 1
    assert (v3["NodeId"], v3["Host"], v3["Port"]) == (2, "127.0.0.1", 40002)

    found = {"Key": "g", "NodeId": 2, "Host": host, "Port": port, "ErrorCode": 0, "ErrorMessage": None}
    refused = {"Key": "", "NodeId": -1, "Host": "", "Port": -1, "ErrorCode": 15, "ErrorMessage": None}
    v6 = {"ThrottleTimeMs": 0, "Coordinators": [found, refused]}
    assert rewrite_addresses(api, 6, v6, _remap) == 1
    assert (found["Host"], found["Port"]) == ("127.0.0.1", 40002)
    assert (refused["NodeId"], refused["Host"], refused["Port"]) == (-1, "", -1)


def test_describe_cluster_brokers(specs: SpecSet) -> None:
    api, version, _, body = _decoded(specs, "describe-cluster-v2")
    assert rewrite_addresses(api, version, body, _remap) == 3
    assert {(b["BrokerId"], b["Port"]) for b in body["Brokers"]} == {(n, 40000 + n) for n in (1, 2, 3)}


@pytest.mark.parametrize("name", ["produce-v13-not-leader", "fetch-v18-not-leader"])
def test_kip_951_node_endpoints_of_produce_and_fetch(specs: SpecSet, name: str) -> None:
    """A NOT_LEADER_OR_FOLLOWER answer names the new leader's endpoint; it must point at the proxy too."""
    api, version, _, body = _decoded(specs, name)
    assert address_fields(api, version) == ("NodeEndpoints",)
    (endpoint,) = body["NodeEndpoints"]
    assert rewrite_addresses(api, version, body, _remap) == 1
    assert (endpoint["Host"], endpoint["Port"]) == ("127.0.0.1", 40000 + endpoint["NodeId"])


@pytest.mark.parametrize(
    ("api_name", "version", "expected"),
    [("Produce", 9, ()), ("Produce", 10, ("NodeEndpoints",)), ("Fetch", 15, ()), ("Fetch", 16, ("NodeEndpoints",)),
     ("Metadata", 0 + 1, ("Brokers",)), ("ApiVersions", 3, ()), ("TxnOffsetCommit", 6, ())],
)
def test_which_responses_carry_addresses_comes_from_the_spec(
    specs: SpecSet, api_name: str, version: int, expected: tuple[str, ...]
) -> None:
    assert address_fields(specs.api(api_name), version) == expected


def test_identity_remap_changes_nothing(specs: SpecSet) -> None:
    api, version, _, body = _decoded(specs, "metadata-v13")
    assert rewrite_addresses(api, version, body, lambda h, p: (h, p)) == 0
