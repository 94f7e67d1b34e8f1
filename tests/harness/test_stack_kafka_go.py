"""The kafka-go stack (harness.clients.stacks.kafka_go): its registration, its pinned release, the roles
it lacks and their evidence, the driver command it builds, what the tables of per-client facts say of
it, and (live) the built driver's ready event."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.clients import kip320_releases, stacks
from harness.clients.stacks import kafka_go
from harness.clients.stacks.base import DriverRequest
from harness.clients.stacks.sarama import module_version
from harness.errors import ClientLacks
from harness.histories.version_needs import truncation_detection


def _request(role: str, tmp_path: Path) -> DriverRequest:
    return DriverRequest(role, ["b:9092", "t", "0"], {"bootstrap.servers": "b"}, tmp_path / "log", "")


def test_kafka_go_is_a_stack_of_the_client_axis_with_a_consumers_driver() -> None:
    stack = stacks.get("kafka-go")
    assert "kafka-go" in stacks.STACKS
    assert stack.roles() == ("consumers",)
    assert stack.version() == "kafka-go v0.4.51"
    assert stacks.RESETS["kafka-go"] == ("earliest", "latest", "none")


def test_go_mod_pins_the_release_and_go_sum_holds_it() -> None:
    assert module_version(kafka_go.SOURCE, kafka_go.MODULE) == "v0.4.51"
    assert "github.com/segmentio/kafka-go v0.4.51 h1:" in (kafka_go.SOURCE / "go.sum").read_text()


@pytest.mark.parametrize("role", ["producer", "copier"])
def test_the_producer_roles_are_lacking_with_kafka_gos_source_as_evidence(role: str, tmp_path: Path) -> None:
    with pytest.raises(ClientLacks) as lacked:
        stacks.get("kafka-go").driver(_request(role, tmp_path))
    assert lacked.value.client == "kafka-go v0.4.51"
    assert "writer.go" in lacked.value.evidence


def test_kafka_go_is_judged_on_truncation_and_never_fences_fetch() -> None:
    assert truncation_detection("kafka-go").first == 2
    release = kip320_releases.client_release("kafka-go", "kafka-go v0.4.51", "4.4.0")
    assert release.release == "0.4.51" and release.fences() is False


def test_the_driver_runs_the_built_binary_with_the_marker_first(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kafka_go, "binary", lambda: tmp_path / "kcts-kafka-go")
    binary, tag, role, *rest = stacks.get("kafka-go").driver(_request("consumers", tmp_path)).command
    assert binary == str(tmp_path / "kcts-kafka-go") and tag.startswith("-tag=-Dkcts.session=")
    assert role == "consumers" and rest == ["b:9092", "t", "0"]


@pytest.mark.heavy  # the clients env installs it, never the gate (the Go module proxy, or its cache)
@pytest.mark.live
def test_the_built_driver_names_the_pinned_kafka_go_in_its_ready_event() -> None:
    binary = kafka_go.binary()
    assert kafka_go.binary() == binary  # cached by source
    out = subprocess.run([str(binary), "-tag=test", "consumers", "127.0.0.1:1", "t", "0"],
                         input="seekepoch c none 5 1\n", capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[0] == {"event": "ready", "client": "kafka-go v0.4.51"}, out.stderr
    assert events[1]["event"] == "command_failed" and events[1]["lacks"] is True, events[1]
    assert events[-1] == {"event": "exited"}
