"""`kcts report` renders a run's Allure results with Allure's own tool, and the page shows what a
reader needs: the checks grouped by KIP, a failing check with its evidence attachments, and the
environment with broker and client versions. Read as rendered by headless Chromium, with screenshots
kept in the tests' own report folder (screenshots/)."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.plugin.run_folder import RUN_DIR_KEY
from harness.reporting.wire import readable
from tests.harness.browser import render

REPO = Path(__file__).resolve().parents[2]
ALTERED = REPO / "tests" / "sessions" / "altered_check.py"
FAILING = "test_altered_list_offsets_answers_a_newer_epoch_with_unknown_leader_epoch"


def kcts(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False)


def embedded(index: Path) -> dict[str, Any]:
    """The files a single-file Allure report carries inline, by their path: its data and widgets
    decoded from JSON, its text attachments as text."""
    out: dict[str, Any] = {}
    for name, blob in re.findall(r"d\('((?:data|widgets)/[^']+\.(?:json|txt))','([^']*)'\)", index.read_text()):
        raw = base64.b64decode(blob)
        out[name] = raw.decode() if name.endswith(".txt") else json.loads(raw)
    return out


def leaves(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The test results under a node of an Allure tree (behaviors.json, suites.json)."""
    children = node.get("children")
    return [node] if children is None else [leaf for c in children for leaf in leaves(c)]


def chromium(url: str, screenshot: Path) -> str:
    """The report page's DOM once its scripts ran, and its screenshot 1400 px wide."""
    return render(url, screenshot=screenshot, virtual_time_ms=8000)


@pytest.mark.live
@pytest.mark.heavy  # a kcts run, Allure's tool and headless Chromium: tox -e ci runs it, not the gate
def test_the_rendered_report_shows_kips_a_failing_check_with_evidence_and_the_environment(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    run = kcts("run", str(ALTERED), "--reports-dir", str(tmp_path), "--run-id", "altered")
    assert run.returncode == 1, f"the altered check should have failed the run:\n{run.stdout[-3000:]}"
    rendered = kcts("report", "altered", "--reports-dir", str(tmp_path))
    assert rendered.returncode == 0, rendered.stderr
    index = tmp_path / "altered" / "allure-report" / "index.html"
    assert f"kcts report: {index}" in rendered.stdout

    data = embedded(index)
    cases = {d["name"]: d for n, d in data.items() if n.startswith("data/test-cases/")}
    failing = cases[FAILING]
    assert failing["status"] == "failed"
    names = [a["name"] for a in failing["testStage"]["attachments"]]
    assert "broker 1 log, during the test" in names, names
    assert any(n.startswith("wire exchanges, readable") for n in names), names
    assert "wire exchanges (decoded JSON)" in names, names
    (wire,) = (a for a in failing["testStage"]["attachments"] if a["name"].startswith("wire exchanges, readable"))
    assert wire["type"] == "text/plain"
    text = data[f"data/attachments/{wire['source']}"]
    # The real answers (the alteration is the check's, not the wire's): the newer epoch refused, by name.
    assert re.search(r"broker \d \(127\.0\.0\.1:\d+\) +ListOffsets v4: UNKNOWN_LEADER_EPOCH\(75\)", text), text[:3000]
    assert [c["name"] for c in data["data/behaviors.json"]["children"]] == ["KIP-320"]
    environment = {e["name"]: e["values"] for e in data["widgets/environment.json"]}
    assert environment["broker_version"] == ["4.4.0"] and environment["librdkafka"], environment

    shots = request.config.stash[RUN_DIR_KEY] / "screenshots" if RUN_DIR_KEY in request.config.stash else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    overview = chromium(index.as_uri(), shots / "allure-overview.png")
    assert "ENVIRONMENT" in overview.upper() and "broker_version" in overview and "KIP-320" in overview
    page = chromium(f"{index.as_uri()}#testresult/{failing['uid']}", shots / "allure-failing-check.png")
    assert "Failed" in page and FAILING in page
    assert "wire exchanges, readable" in page and "broker 1 log, during the test" in page
    assert "expected UNKNOWN_LEADER_EPOCH" in page  # the assertion's evidence, as the reader sees it
    opened = chromium(f"{index.as_uri()}#testresult/{failing['uid']}?attachment={wire['uid']}",
                      shots / "allure-failing-wire.png")
    assert "in short (errors each answer carries" in opened and "UNKNOWN_LEADER_EPOCH(75)" in opened
    # The Behaviors tree (KIP > module > check) opened at the failing check, its page beside it.
    leaf = next(leaf for leaf in leaves(data["data/behaviors.json"]) if leaf["uid"] == failing["uid"])
    behaviors = chromium(f"{index.as_uri()}#behaviors/{leaf['parentUid']}/{leaf['uid']}",
                         shots / "allure-behaviors.png")
    assert "KIP-320" in behaviors and "epoch validation on ListOffsets" in behaviors and FAILING in behaviors


def test_the_readable_wire_exchanges_name_brokers_errors_and_failures() -> None:
    metadata = {"seq": 1, "broker": "127.0.0.1:9001", "api": "Metadata", "version": 12, "request": {"Topics": None},
                "response": {"Brokers": [{"NodeId": 2, "Host": "127.0.0.1", "Port": 9001, "Rack": None}],
                             "Topics": [{"ErrorCode": 3, "ErrorCode (name)": "UNKNOWN_TOPIC_OR_PARTITION"}]}}
    refused = {"seq": 2, "broker": "127.0.0.1:9001", "api": "ListOffsets", "version": 4, "request": {},
               "response": {"Topics": [{"Partitions": [{"ErrorCode": 75}, {"ErrorCode": 75}, {"ErrorCode": 0}]}]}}
    broken = {"seq": 3, "broker": "127.0.0.1:9009", "api": "Fetch", "version": 12, "request": {},
              "error": "ConnectionError: closed by the broker"}
    text = readable({"nodeid": "t.py::test_x", "exchanges_shown": 3, "exchanges_total": 3,
                     "exchanges": [metadata, refused, broken]})
    lines = text.splitlines()
    assert re.search(r"#1 +broker 2 \(127\.0\.0\.1:9001\) +Metadata v12: UNKNOWN_TOPIC_OR_PARTITION\(3\)$", lines[3])
    assert lines[4].endswith("ListOffsets v4: UNKNOWN_LEADER_EPOCH(75) x2")
    assert re.search(r"#3 +127\.0\.0\.1:9009 +Fetch v12: failed: ConnectionError: closed by the broker$", lines[5])
    assert '"ErrorCode": "UNKNOWN_TOPIC_OR_PARTITION(3)"' in text and "(name)" not in text
    assert "  failed:   ConnectionError: closed by the broker" in text


def test_a_folder_without_allure_results_is_one_clear_error(tmp_path: Path) -> None:
    result = kcts("report", str(tmp_path / "nothing"), "--reports-dir", str(tmp_path))
    assert result.returncode == 2
    assert "has no allure-results/" in result.stderr and "Traceback" not in result.stderr
