"""The aiokafka stack (harness.clients.stacks.aiokafka): its registration, its pinned release and
dependencies, the driver command it builds, what the tables of per-client facts say of it, and (live)
the cached virtualenv's driver's ready event and its refusal of a seek with an epoch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.clients import kip320_releases, pypi_env, stacks
from harness.clients.stacks import aiokafka
from harness.clients.stacks.base import DriverRequest
from harness.histories.version_needs import truncation_detection
from harness.scenarios import kip1319_clients
from harness.verdicts import known_gap


def test_aiokafka_is_a_stack_of_the_client_axis_with_every_scene_role() -> None:
    stack = stacks.get("aiokafka")
    assert "aiokafka" in stacks.STACKS
    assert stack.roles() == ("consumers", "producer", "copier")
    assert stack.version() == "aiokafka 0.14.0"
    assert stacks.RESETS["aiokafka"] == ("earliest", "latest", "none")
    assert stack.lacks == {}  # what it lacks is said command by command (seekepoch) and by situation (v6)
    assert aiokafka.CLIENT.requirements[0] == "aiokafka==0.14.0"
    assert all("==" in r for r in aiokafka.CLIENT.requirements)  # every dependency pinned, none resolved


def test_the_tables_of_client_facts_name_aiokafka() -> None:
    assert truncation_detection("aiokafka").first == 2  # no OffsetForLeaderEpoch: judged where KIP-320's is offered
    release = kip320_releases.client_release("aiokafka", "aiokafka 0.14.0", "4.4.0")
    assert release.release == "0.14.0" and release.fences() is False
    assert stacks.gap_version("aiokafka", "aiokafka 0.14.0") == "0.14.0"
    assert "TxnOffsetCommitRequest_v0" in kip1319_clients.WITHOUT_V6["aiokafka"]
    assert known_gap(kip1319_clients.GAPS["aiokafka"], "0.14.0").applies


def test_the_driver_runs_the_module_under_the_cached_interpreter_with_the_marker_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(aiokafka, "interpreter", lambda client: tmp_path / "bin" / "python")
    driver = stacks.get("aiokafka").driver(DriverRequest("producer", ["b:9092", "t", "15"],
                                                         {"bootstrap.servers": "b"}, tmp_path / "log", ""))
    python, _, _, _, module, marker, *rest = driver.command
    assert python == str(tmp_path / "bin" / "python")
    assert module == "harness.clients.python_drivers.aiokafka_producer" and marker.startswith("-Dkcts.session=")
    assert rest == ["b:9092", "t", "15"]


@pytest.mark.heavy  # the clients env installs it, never the gate (PyPI, or the kcts cache)
@pytest.mark.live
def test_the_cached_virtualenv_runs_the_driver_naming_the_pinned_aiokafka() -> None:
    python = pypi_env.interpreter(aiokafka.CLIENT)
    out = subprocess.run([str(python), "-m", aiokafka.MODULES["consumers"], "test", "127.0.0.1:1", "t", "0"],
                         input="exit\n", capture_output=True, text=True, timeout=60, env={"PYTHONPATH": ""})
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events == [{"event": "ready", "client": "aiokafka 0.14.0"}, {"event": "exited"}], out.stderr
