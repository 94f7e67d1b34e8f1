"""Wire evidence: a check that does not pass leaves its raw-protocol exchanges, decoded, as
evidence/<check>.wire.json, which results.json and the matrix link to.

RawClient hands every exchange to the recorder the plugin installs for each check
(harness.protocol.client.set_recorder); nothing is recorded when none is installed.
"""

from __future__ import annotations

import json
import socket
from types import SimpleNamespace
from typing import Any

import pytest

from harness.cluster.base import Cluster
from harness.kafka.dist import DEFAULT_VERSION
from harness.protocol.client import Exchange, RawClient, current_recorder, set_recorder
from harness.protocol.exceptions import ConnectionFailed
from harness.protocol.records import WireRecord, encode_batch, encode_batches
from harness.protocol.spec import load_specs
from harness.reporting.wire import MAX_ARRAY, WireRecorder

pytest_plugins = ["pytester"]


def closing_broker() -> tuple[socket.socket, RawClient, socket.socket]:
    """A RawClient connected to a listener that hangs up once it has accepted: every request fails."""
    server = socket.create_server(("127.0.0.1", 0))
    client = RawClient.connect("127.0.0.1", server.getsockname()[1], negotiate=False, timeout=5)
    conn, _ = server.accept()
    conn.close()
    return server, client, conn


def test_the_recorder_sees_each_exchange_and_the_error_that_ended_it() -> None:
    recorder = WireRecorder()
    previous = set_recorder(recorder)
    server, client, _ = closing_broker()
    port = server.getsockname()[1]
    try:
        with client, pytest.raises(ConnectionFailed):
            client.send("Metadata", 12, {"Topics": [{"Name": "t", "TopicId": None}]})
    finally:
        set_recorder(previous)
        server.close()
    (seen,) = recorder.exchanges
    assert seen.broker == f"127.0.0.1:{port}"
    assert seen.error is not None and seen.error.startswith("ConnectionFailed: ")
    data = recorder.to_json("t.py::test_x")
    (ex,) = data["exchanges"]
    assert (ex["api"], ex["api_key"], ex["version"], ex["seq"]) == ("Metadata", 3, 12, 1)
    assert ex["request"]["Topics"][0]["Name"] == "t"
    assert "response" not in ex and ex["response_bytes"] == 0
    assert ex["time"].endswith("Z")
    assert current_recorder() is previous


def test_a_hand_made_body_is_kept_as_hex() -> None:
    recorder = WireRecorder()
    previous = set_recorder(recorder)
    server, client, _ = closing_broker()
    try:
        with client, pytest.raises(ConnectionFailed):
            client.send_raw("Metadata", 12, b"\xde\xad\xbe\xef")
    finally:
        set_recorder(previous)
        server.close()
    (ex,) = recorder.to_json("t.py::test_x")["exchanges"]
    assert ex["request_frame"].startswith("0x") and ex["request_frame"].endswith("deadbeef")


def fake_exchange(api: str, version: int, request: dict[str, Any], response: dict[str, Any]) -> Exchange:
    return Exchange(load_specs(DEFAULT_VERSION).api(api), version, 7, request, b"\x00" * 10, response=response,
                    response_bytes=b"\x00" * 20, elapsed=0.002)


def test_the_json_is_readable_names_errors_and_cuts_what_is_huge() -> None:
    recorder = WireRecorder(first=1, last=2)
    broker = SimpleNamespace(host="b1", port=9092)
    blob = encode_batches([encode_batch([WireRecord(b"v" * 1000, key=b"k%d" % i) for i in range(50)],
                                        base_offset=i * 50, partition_leader_epoch=4) for i in range(30)])
    produce = fake_exchange("Produce", 9, {"TransactionalId": None, "Acks": -1, "TimeoutMs": 1000, "TopicData": [
        {"Name": "t", "PartitionData": [{"Index": 0, "Records": blob}]}]}, {"Responses": [
            {"Name": "t", "PartitionResponses": [{"Index": 0, "ErrorCode": 74, "BaseOffset": -1}]}]})
    topics = [{"ErrorCode": 0, "Name": f"t{i}", "Partitions": []} for i in range(MAX_ARRAY + 5)]
    metadata = fake_exchange("Metadata", 12, {"Topics": None}, {"Brokers": [], "Topics": topics})
    for ex in (metadata, metadata, produce, metadata):
        recorder(broker, ex, None)  # type: ignore[arg-type]
    data = json.loads(json.dumps(recorder.to_json("t.py::test_x")))
    assert (data["exchanges_total"], data["exchanges_shown"]) == (4, 3)
    assert data["note"] == "exchanges 2 to 2 are left out; the first 1 and the last 2 are shown"
    assert [e["seq"] for e in data["exchanges"]] == [1, 3, 4]
    md = data["exchanges"][0]["response"]["Topics"]
    assert len(md) == MAX_ARRAY + 1 and md[-1] == f"... 5 more (of {MAX_ARRAY + 5})"
    assert data["exchanges"][2]["response"] == "the same as exchange 1's"  # a polled broker's answer, once
    (partition,) = data["exchanges"][1]["response"]["Responses"][0]["PartitionResponses"]
    assert partition["ErrorCode"] == 74 and partition["ErrorCode (name)"] == "FENCED_LEADER_EPOCH"
    records = data["exchanges"][1]["request"]["TopicData"][0]["PartitionData"][0]["Records"]
    assert records["bytes"] == len(blob) and records["batches"] == 30
    assert len(records["shown"]) == 21 and records["shown"][-1] == "... 10 more (of 30)"
    first = records["shown"][0]
    assert (first["base_offset"], first["last_offset"], first["partition_leader_epoch"]) == (0, 49, 4)
    assert len(first["first_records"]) == 6 and first["first_records"][0]["key"] == "0x6b30"
    assert first["first_records"][0]["value"].endswith("... (1000 bytes)")


def test_no_recorder_no_recording() -> None:
    """Outside a check run by the plugin (here: with the plugin's recorder put aside) nothing is kept."""
    previous = set_recorder(None)
    try:
        server, client, _ = closing_broker()
        with client, pytest.raises(ConnectionFailed):
            client.send("Metadata", 12, {"Topics": None})
        server.close()
        assert current_recorder() is None
    finally:
        set_recorder(previous)


OFFLINE_CHECKS = '''
import socket

from harness.protocol.client import RawClient, current_recorder
from harness.reporting.wire import WireRecorder


def test_records_while_it_runs():
    assert isinstance(current_recorder(), WireRecorder)


def test_fails_without_raw_traffic():
    assert 1 == 2


def test_errors_on_a_closed_connection():
    server = socket.create_server(("127.0.0.1", 0))
    with RawClient.connect("127.0.0.1", server.getsockname()[1], negotiate=False, timeout=5) as c:
        conn, _ = server.accept()
        conn.close()
        c.send("Metadata", 12, {"Topics": None})
'''


def test_a_check_that_does_not_pass_leaves_wire_evidence_beside_its_text_evidence(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_offline=OFFLINE_CHECKS)
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess("--reports-dir", str(reports), "--run-id", "r", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    run = reports / "r"
    checks = {c["nodeid"].rsplit("::", 1)[1]: c for c in json.loads((run / "results.json").read_text())["checks"]}
    assert checks["test_records_while_it_runs"]["wire_evidence"] is None
    assert not list((run / "evidence").glob("*records_while*"))

    quiet = checks["test_fails_without_raw_traffic"]
    assert quiet["cell"] == "fail"
    assert quiet["evidence"] == "evidence/test_offline.py_test_fails_without_raw_traffic.txt"
    assert quiet["wire_evidence"] == "evidence/test_offline.py_test_fails_without_raw_traffic.wire.json"
    data = json.loads((run / quiet["wire_evidence"]).read_text())
    assert data["exchanges"] == [] and "no raw-protocol request" in data["note"]

    broken = checks["test_errors_on_a_closed_connection"]
    assert broken["cell"] == "error"  # a ConnectionFailed is no verdict
    (ex,) = json.loads((run / broken["wire_evidence"]).read_text())["exchanges"]
    assert ex["api"] == "Metadata" and ex["error"].startswith("ConnectionFailed: ")


LIVE_CHECK = '''
from harness.protocol.client import RawClient


def test_metadata_then_a_failed_assertion():
    with RawClient.connect({host!r}, {port}, spec={spec!r}, timeout=20) as c:
        md = c.send("Metadata", c.max_version("Metadata"), {{"Topics": None}})
    assert md["ControllerId"] == -12345, "a check that fails after a real Metadata request"
'''


@pytest.mark.live
def test_a_failed_check_keeps_the_decoded_metadata_answer_of_a_real_broker(
    pytester: pytest.Pytester, cluster: Cluster
) -> None:
    broker = cluster.broker_ids[0]
    host, port = cluster.probe_address(broker)
    pytester.makepyfile(test_live=LIVE_CHECK.format(host=host, port=port, spec=cluster.target.protocol_specs))
    reports = pytester.path / "reports"
    # The inner run only talks to the outer cluster; its own target is never started.
    result = pytester.runpytest_subprocess("--reports-dir", str(reports), "--run-id", "r", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    (check,) = json.loads((reports / "r" / "results.json").read_text())["checks"]
    assert check["cell"] == "fail"
    data = json.loads((reports / "r" / check["wire_evidence"]).read_text())
    assert [e["api"] for e in data["exchanges"]] == ["ApiVersions", "Metadata"]
    api_versions, metadata = data["exchanges"]
    assert all(e["broker"] == f"{host}:{port}" and e["error"] is None for e in data["exchanges"])
    assert api_versions["response"]["ErrorCode"] == 0
    assert {k["ApiKey"] for k in api_versions["response"]["ApiKeys"]} >= {0, 1, 3, 18}
    response = metadata["response"]
    assert sorted(b["NodeId"] for b in response["Brokers"]) == sorted(cluster.broker_ids)
    assert all(b["Host"] and b["Port"] > 0 for b in response["Brokers"])
    assert isinstance(response["ControllerId"], int) and isinstance(response["Topics"], list)
    assert metadata["request"]["Topics"] is None and metadata["response_bytes"] > 0
