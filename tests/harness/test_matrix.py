"""The compatibility matrix: merged verdicts per target, and an offline page that shows exactly them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from harness.kafka.dist import DEFAULT_VERSION
from harness.pytest_plugin import run_dir
from harness.reports.matrix import Target, build, to_markdown, write_all
from harness.reports.matrix_run import target_args

CHECKS = [
    ("suites/kip1319/test_v6.py::test_v6_commit", "kip1319", "v6 with a TopicId commits.",
     {"a": ("pass", "passed", ""), "b": ("not-supported", "skipped", "NOT_SUPPORTED: max version 5")}),
    ("suites/kip320/test_fetch.py::test_fenced", "kip320", "An older epoch is fenced.",
     {"a": ("fail", "failed", "AssertionError: error 0 != 74"),
      "b": ("client-gap", "xfailed", "KNOWN_CLIENT_GAP: #5158")}),
    ("suites/smoke/test_smoke.py::test_round_trip", "smoke", "Records come back.",
     {"a": ("pass", "passed", ""), "b": ("skipped", "skipped", "needs fault control; the target is kfake")}),
]


def results_for(target: str) -> dict:
    checks = []
    for nodeid, area, promise, cells in CHECKS:
        cell, outcome, reason = cells[target]
        checks.append({"nodeid": nodeid, "area": area, "promise": promise, "outcome": outcome, "cell": cell,
                       "reason": reason, "duration_s": 0.1, "evidence": None if cell == "pass" else "evidence/x.txt"})
    return {"target": target, "environment": {"backend": target}, "checks": checks}


def sample_matrix() -> dict:
    return build([(Target("a", "targets/a"), results_for("a")), (Target("b", "targets/b"), results_for("b"))])


def test_rows_are_grouped_by_kip_in_a_fixed_order_with_one_cell_per_target() -> None:
    m = sample_matrix()
    assert [r["area"] for r in m["rows"]] == ["smoke", "kip320", "kip1319"]
    kip320 = m["rows"][1]
    assert kip320["cells"]["a"]["cell"] == "fail" and kip320["cells"]["b"]["cell"] == "client-gap"
    assert kip320["cells"]["a"]["evidence"] == "targets/a/evidence/x.txt"
    assert m["summary"]["b"] == {"skipped": 1, "client-gap": 1, "not-supported": 1}


def test_a_check_missing_from_one_target_is_shown_as_not_run() -> None:
    only_a = results_for("a")
    only_a["checks"].append({**only_a["checks"][0], "nodeid": "suites/x.py::test_extra"})
    m = build([(Target("a", "targets/a"), only_a), (Target("b", "targets/b"), results_for("b"))])
    extra = next(r for r in m["rows"] if r["nodeid"] == "suites/x.py::test_extra")
    assert extra["cells"]["b"]["cell"] == "absent"


def test_markdown_links_every_non_pass_cell_to_its_evidence() -> None:
    md = to_markdown(sample_matrix())
    assert "[FAIL](targets/a/evidence/x.txt)" in md and "[known client gap](targets/b/evidence/x.txt)" in md


@pytest.mark.parametrize(("spec", "args"), [
    ("4.4.0", ["--kafka-version", "4.4.0", "--brokers", "3", "--java-clients", "4.4.0"]),
    ("4.0.x", ["--kafka-version", "4.0.2", "--brokers", "3", "--java-clients", "4.0.2"]),
    ("kfake", ["--backend", "kfake", "--brokers", "3", "--java-clients", DEFAULT_VERSION]),
    ("external:127.0.0.1:9092", ["--backend", "external", "--bootstrap-servers", "127.0.0.1:9092",
                                 "--java-clients", DEFAULT_VERSION]),
])
def test_target_specs_select_a_backend(spec: str, args: list[str]) -> None:
    assert target_args(spec) == args


def test_html_page_shown_in_chromium_matches_the_json(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Headless Chromium renders matrix.html offline; every cell it shows equals matrix.json's verdict."""
    chromium = shutil.which("chromium")
    assert chromium, "chromium is not installed; scripts/bootstrap installs it (apt-get install chromium)"
    matrix = sample_matrix()
    write_all(matrix, tmp_path)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tempfile.mkdtemp(dir=tmp_path)}"]
    page = f"file://{tmp_path / 'matrix.html'}"
    dom = subprocess.run([chromium, *flags, "--dump-dom", page], capture_output=True, text=True, timeout=60).stdout
    rows = re.findall(r'<tr data-nodeid="([^"]+)">(.*?)</tr>', dom, flags=re.S)
    cell = re.compile(r'data-target="([^"]+)" data-cell="([^"]+)"')
    shown = {(nodeid, t): c for nodeid, row in rows for t, c in cell.findall(row)}
    expected = {(r["nodeid"], t): c["cell"] for r in matrix["rows"] for t, c in r["cells"].items()}
    assert shown == expected, f"page shows {shown}, JSON says {expected}"
    shot = run_dir(request.config) / "matrix-screenshot.png"
    subprocess.run([chromium, *flags, "--window-size=1400,700", f"--screenshot={shot}", page],
                   capture_output=True, timeout=60)
    assert shot.stat().st_size > 10_000, "the screenshot is empty"
    assert json.loads((tmp_path / "matrix.json").read_text()) == matrix
