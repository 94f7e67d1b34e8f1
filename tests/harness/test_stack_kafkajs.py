"""The KafkaJS stack (harness.clients.stacks.kafkajs): its registration, its pinned release, the
driver command it builds, the npm install's errors, and (live) the installed driver's ready event."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.clients import kip320_releases, node_drivers, stacks
from harness.clients.stacks import kafkajs
from harness.clients.stacks.base import DriverRequest
from harness.errors import SetupError
from harness.histories.version_needs import truncation_detection
from harness.process import npm_install
from harness.scenarios import kip1319_clients
from harness.verdicts import known_gap


def test_kafkajs_is_a_stack_of_the_client_axis_with_every_scene_role() -> None:
    stack = stacks.get("kafkajs")
    assert "kafkajs" in stacks.STACKS
    assert stack.roles() == ("consumers", "producer", "copier")
    assert stack.version() == "kafkajs 2.2.4"
    assert stacks.RESETS["kafkajs"] == ("earliest", "latest", "none")


def test_the_lockfile_pins_the_release_package_json_asks_for() -> None:
    manifest = json.loads((kafkajs.SOURCE / "package.json").read_text())
    assert manifest["dependencies"] == {"kafkajs": "2.2.4"}
    assert node_drivers.pinned_version(kafkajs.SOURCE, "kafkajs") == "2.2.4"


def test_kafkajs_is_judged_on_truncation_and_never_fences_fetch() -> None:
    # No OffsetForLeaderEpoch at all: judged wherever the leader offers any version.
    assert truncation_detection("kafkajs").first == 0
    release = kip320_releases.client_release("kafkajs", "kafkajs 2.2.4", "4.4.0")
    assert release.release == "2.2.4" and release.fences() is False


def test_its_transactional_commits_below_v6_are_the_known_gap_and_the_v6_situations_not_supported() -> None:
    assert stacks.gap_version("kafkajs", "kafkajs 2.2.4") == "2.2.4"
    gap = known_gap(kip1319_clients.GAPS["kafkajs"], "2.2.4")
    assert gap.client == "kafkajs" and gap.applies
    assert "versions 0 and 1 only" in kip1319_clients.WITHOUT_V6["kafkajs"]


def test_the_driver_runs_main_js_of_the_installed_copy_with_the_marker_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(node_drivers, "node_package", lambda source, what, cache: tmp_path)
    driver = stacks.get("kafkajs").driver(DriverRequest("consumers", ["b:9092", "t", "0"], {"bootstrap.servers": "b"},
                                                        tmp_path / "log", ""))
    node, main, marker, *rest = driver.command
    assert Path(node).name == "node" and main == str(tmp_path / "main.js")
    assert marker.startswith("-Dkcts.session=") and rest == ["consumers", "b:9092", "t", "0"]


def test_a_missing_npm_is_one_setup_error_naming_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(npm_install.shutil, "which", lambda name: None)
    with pytest.raises(SetupError, match=r"install Node.js 18\+ with npm"):
        npm_install.node_package(kafkajs.SOURCE, "the kafkajs client drivers", tmp_path)


def test_an_installed_copy_is_reused_without_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = npm_install.installed_at(kafkajs.SOURCE, tmp_path)
    (folder / "node_modules").mkdir(parents=True)
    monkeypatch.setattr(npm_install.shutil, "which", lambda name: None)
    assert npm_install.node_package(kafkajs.SOURCE, "the kafkajs client drivers", tmp_path) == folder
    assert {f.name for f in npm_install.package_files(kafkajs.SOURCE)} >= {
        "package.json", "package-lock.json", "main.js", "consumers.js", "producer.js", "copier.js"}


@pytest.mark.heavy  # the clients env installs it, never the gate (the npm registry, or the kcts cache)
@pytest.mark.live
def test_the_installed_driver_names_the_pinned_kafkajs_in_its_ready_event(tmp_path: Path) -> None:
    folder = npm_install.node_package(kafkajs.SOURCE, "the kafkajs client drivers", tmp_path)
    assert npm_install.node_package(kafkajs.SOURCE, "the kafkajs client drivers", tmp_path) == folder  # cached
    out = subprocess.run(["node", str(folder / "main.js"), "-Dkcts.session=test", "consumers", "127.0.0.1:1", "t",
                          "0"], input="exit\n", capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[0] == {"event": "ready", "client": "kafkajs 2.2.4"}, out.stderr
    assert events[-1] == {"event": "exited"}
