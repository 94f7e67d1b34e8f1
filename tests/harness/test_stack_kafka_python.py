"""The kafka-python stack (harness.clients.stacks.kafka_python): its registration, its pinned release,
the driver command it builds, what the tables of per-client facts say of it, and (live) the cached
virtualenv's driver's ready event."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.checks.truncation import RAISED_TRUNCATION
from harness.clients import kip320_releases, pypi_env, stacks
from harness.clients.stacks import kafka_python
from harness.clients.stacks.base import DriverRequest
from harness.histories.version_needs import truncation_detection
from harness.scenarios import kip1319_clients
from harness.verdicts import known_gap


def test_kafka_python_is_a_stack_of_the_client_axis_with_every_scene_role() -> None:
    stack = stacks.get("kafka-python")
    assert "kafka-python" in stacks.STACKS
    assert stack.roles() == ("consumers", "producer", "copier")
    assert stack.version() == "kafka-python 3.0.12"
    assert stacks.RESETS["kafka-python"] == ("earliest", "latest", "none")
    assert stack.lacks == {}  # what it lacks is said command by command (seekepoch) and by situation (v6)
    assert kafka_python.CLIENT.requirements == ("kafka-python==3.0.12",)
    assert kafka_python.CLIENT.version == "3.0.12"


def test_the_tables_of_client_facts_name_kafka_python() -> None:
    assert truncation_detection("kafka-python").first == 2  # OffsetForLeaderEpochRequest.json: 2-4
    assert RAISED_TRUNCATION["kafka-python"] == "kafka.errors.LogTruncationError"
    release = kip320_releases.client_release("kafka-python", "kafka-python 3.0.12", "4.4.0")
    assert release.release == "3.0.12" and release.fences() is True
    assert stacks.gap_version("kafka-python", "kafka-python 3.0.12") == "3.0.12"
    assert "max_version=3" in kip1319_clients.WITHOUT_V6["kafka-python"]
    gap = known_gap(kip1319_clients.GAPS["kafka-python"], "3.0.12")
    assert gap.client == "kafka-python" and gap.applies


def test_the_driver_runs_the_module_under_the_cached_interpreter_with_the_marker_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kafka_python, "interpreter", lambda client: tmp_path / "bin" / "python")
    driver = stacks.get("kafka-python").driver(DriverRequest("copier", ["b:9092", "s", "k", "g", "t", "20", "5", "1"],
                                                             {"bootstrap.servers": "b"}, tmp_path / "log", ""))
    python, x, faulthandler, m, module, marker, *rest = driver.command
    assert python == str(tmp_path / "bin" / "python") and (x, faulthandler, m) == ("-X", "faulthandler", "-m")
    assert module == "harness.clients.python_drivers.kafka_python_copier"
    assert marker.startswith("-Dkcts.session=")
    assert rest == ["b:9092", "s", "k", "g", "t", "20", "5", "1"]


def test_a_failed_install_is_one_setup_error_naming_pypi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.errors import SetupError

    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    missing = pypi_env.PypiClient("no-such", ("kcts-no-such-dist==0.0.0",), "print(0)", "0.0.0")
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens: pip fails at once
    monkeypatch.setenv("PIP_RETRIES", "0")
    with pytest.raises(SetupError, match="could not be installed from PyPI"):
        pypi_env.interpreter(missing)
    assert not (tmp_path / "clients" / f"no-such-py{sys.version_info.major}{sys.version_info.minor}").exists()


@pytest.mark.heavy  # the clients env installs it, never the gate (PyPI, or the kcts cache)
@pytest.mark.live
def test_the_cached_virtualenv_runs_the_driver_naming_the_pinned_kafka_python() -> None:
    python = pypi_env.interpreter(kafka_python.CLIENT)
    assert pypi_env.interpreter(kafka_python.CLIENT) == python  # cached
    out = subprocess.run([str(python), "-m", kafka_python.MODULES["consumers"], "test", "127.0.0.1:1", "t", "0"],
                         input="exit\n", capture_output=True, text=True, timeout=60, env={"PYTHONPATH": ""})
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events == [{"event": "ready", "client": "kafka-python 3.0.12"}, {"event": "exited"}], out.stderr


def test_a_member_left_without_its_assignment_is_the_known_gap_of_kafka_python_3() -> None:
    """The stall of run kafka-python-2 (a member whose last assignment held no partition, reading
    nothing) is recognised from the driver's `assigned` events and named by kafka-python's gap; a
    member that was given the partition, or that read, is left to the caller."""
    from harness.checks.client_reactions import AssignmentNeverCompleted, require_assignment_completed
    from harness.histories.observations import ClientEvent

    unassigned = (ClientEvent("assigned", {"consumer": "c", "partitions": []}),)
    with pytest.raises(AssignmentNeverCompleted, match="the last with no partition"):
        require_assignment_completed("kafka-python 3.0.12", unassigned, 0, "waited 60 s")
    given = (*unassigned, ClientEvent("assigned", {"consumer": "c", "partitions": ["t-0"]}))
    require_assignment_completed("kafka-python 3.0.12", given, 0, "waited 60 s")
    require_assignment_completed("kafka-python 3.0.12", unassigned, 3, "waited 60 s")
    require_assignment_completed("kafka-python 3.0.12", (), 0, "waited 60 s")  # a driver reporting no assignments
    gap = known_gap(AssignmentNeverCompleted.GAPS["kafka-python"], "3.0.12")
    assert gap.client == "kafka-python" and "#1695" in gap.upstream
