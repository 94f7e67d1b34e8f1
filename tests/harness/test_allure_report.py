"""`kcts report` renders a run's Allure results with Allure's own tool, and the page shows what a
reader needs: the checks grouped by KIP, a failing check with its evidence attachments, and the
environment with broker and client versions. Read as rendered by headless Chromium, with screenshots
kept in the tests' own report folder (screenshots/)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from harness.pytest_plugin import RUN_DIR_KEY

REPO = Path(__file__).resolve().parents[2]
ALTERED = REPO / "tests" / "sessions" / "altered_check.py"
FAILING = "test_altered_list_offsets_answers_a_newer_epoch_with_unknown_leader_epoch"


def kcts(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False)


def embedded(index: Path) -> dict[str, Any]:
    """The data files a single-file Allure report carries inline, decoded, by their path."""
    out = {}
    for name, blob in re.findall(r"d\('(data/[^']+\.json|widgets/[^']+\.json)','([^']*)'\)", index.read_text()):
        out[name] = json.loads(base64.b64decode(blob))
    return out


def chromium(url: str, screenshot: Path | None = None) -> str:
    """The DOM of `url` once its scripts ran, and a screenshot 1400 px wide if asked."""
    browser = shutil.which("chromium")
    if browser is None:
        pytest.skip("chromium is not installed (scripts/bootstrap installs it)")
    profile = tempfile.mkdtemp(prefix="kcts-chromium-")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--window-size=1400,1100", "--virtual-time-budget=8000"]
    try:
        if screenshot is not None:
            subprocess.run([*flags, f"--screenshot={screenshot}", url], capture_output=True, timeout=90, check=True)
        return subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True, timeout=90,
                              check=True).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.live
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
    behaviors = chromium(f"{index.as_uri()}#behaviors")
    assert "KIP-320" in behaviors


def test_a_folder_without_allure_results_is_one_clear_error(tmp_path: Path) -> None:
    result = kcts("report", str(tmp_path / "nothing"), "--reports-dir", str(tmp_path))
    assert result.returncode == 2
    assert "has no allure-results/" in result.stderr and "Traceback" not in result.stderr
