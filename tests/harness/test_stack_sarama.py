"""The sarama stack (harness.clients.stacks.sarama): its registration, its pinned release, the driver
command it builds, what the tables of per-client facts say of it, and (live) the built driver's ready
event."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.clients import kip320_releases, stacks
from harness.clients.stacks import sarama
from harness.clients.stacks.base import DriverRequest
from harness.histories.version_needs import truncation_detection


def test_sarama_is_a_stack_of_the_client_axis_with_every_scene_role() -> None:
    stack = stacks.get("sarama")
    assert "sarama" in stacks.STACKS
    assert stack.roles() == ("consumers", "producer", "copier")
    assert stack.version() == "sarama v1.61.1"
    assert stacks.RESETS["sarama"] == ("earliest", "latest", "none")
    assert stack.lacks == {}  # what sarama lacks is said command by command, by its consumers driver


def test_go_mod_pins_the_release_and_go_sum_holds_it() -> None:
    assert sarama.module_version(sarama.SOURCE, sarama.MODULE) == "v1.61.1"
    assert "github.com/IBM/sarama v1.61.1 h1:" in (sarama.SOURCE / "go.sum").read_text()
    assert {f.name for f in sarama.SOURCE.glob("*.go")} == {"main.go", "consumers.go", "producer.go", "copier.go"}


def test_sarama_is_judged_on_truncation_and_fences_fetch_since_1_38() -> None:
    # No OffsetForLeaderEpoch at all: judged wherever the leader offers KIP-320's consumer version.
    assert truncation_detection("sarama").first == 2
    release = kip320_releases.client_release("sarama", "sarama v1.61.1", "4.4.0")
    assert release.release == "1.61.1" and release.fences() is True
    assert stacks.gap_version("sarama", "sarama v1.61.1") == "1.61.1"


def test_the_driver_runs_the_built_binary_with_the_marker_first(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sarama, "binary", lambda: tmp_path / "kcts-sarama")
    driver = stacks.get("sarama").driver(DriverRequest("copier", ["b:9092", "s", "k", "g", "t", "20", "5", "1000"],
                                                       {"bootstrap.servers": "b"}, tmp_path / "log", ""))
    binary, tag, role, *rest = driver.command
    assert binary == str(tmp_path / "kcts-sarama") and tag.startswith("-tag=-Dkcts.session=")
    assert role == "copier" and rest == ["b:9092", "s", "k", "g", "t", "20", "5", "1000"]


@pytest.mark.heavy  # the clients env installs it, never the gate (the Go module proxy, or its cache)
@pytest.mark.live
def test_the_built_driver_names_the_pinned_sarama_in_its_ready_event() -> None:
    binary = sarama.binary()
    assert sarama.binary() == binary  # cached by source
    out = subprocess.run([str(binary), "-tag=test", "consumers", "127.0.0.1:1", "t", "0"],
                         input="seekepoch c none 5 1\n", capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[0] == {"event": "ready", "client": "sarama v1.61.1"}, out.stderr
    refused = events[1]
    assert refused["event"] == "command_failed" and refused["lacks"] is True, refused
    assert events[-1] == {"event": "exited"}
