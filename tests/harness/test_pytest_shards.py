"""The harness's tests in N pytest processes (harness/reporting/pytest_shards.py, harness/plugin/
shard.py): every test runs once, in one part; the modules that share a released session fixture run in
one part, which starts it once; the parts' reports are one run folder; a part takes the next module
from the pool whenever it is ready, the longest first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = '''
import os
import pytest
from harness.plugin import last_user

def pytest_configure(config):
    last_user.release_after_last_user(config, "held")

@pytest.fixture(scope="session")
def held():
    with open(os.environ["EVENTS"], "a") as f:
        f.write(f"held up in {os.getpid()}\\n")
    yield "held"
'''

USER = '''
def test_{name}(held):
    assert held == "held"
'''

OTHER = '''
import pytest

@pytest.mark.parametrize("n", range(3))
def test_{name}(n):
    assert n < 3
'''


def test_every_test_runs_once_and_the_users_of_a_session_fixture_share_one_part(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makeconftest(CONFTEST)
    for name in ("user_a", "user_b", "user_c"):
        pytester.makepyfile(**{f"test_{name}": USER.format(name=name)})
    for name in ("one", "two", "three", "four"):
        pytester.makepyfile(**{f"test_{name}": OTHER.format(name=name)})
    events = tmp_path / "events"
    env = {**os.environ, "EVENTS": str(events)}
    reports = pytester.path / "reports"
    # Twice with one run id: the second run's shards take from a pool of their own, not the first's.
    for _ in range(2):
        events.unlink(missing_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "harness.reporting.pytest_shards", "2", "-p", "no:cacheprovider", "-p", "pytester",
             str(pytester.path), "--rootdir", str(pytester.path), "--reports-dir", str(reports), "--run-id", "tests-x"],
            cwd=pytester.path, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        results = json.loads((reports / "tests-x" / "results.json").read_text())
        ran = sorted(c["nodeid"] for c in results["checks"])
        assert len(ran) == len(set(ran)) == 15, ran
    parts = {}
    for i in (0, 1):
        part = json.loads((reports / "tests-x" / "shards" / f"shard-{i}" / "results.json").read_text())
        parts[i] = {c["nodeid"].split("::")[0] for c in part["checks"]}
    # Which part takes what depends on which is ready first; no module is in both.
    assert not parts[0] & parts[1], parts
    users = {f"test_user_{n}.py" for n in "abc"}
    assert any(users <= {Path(m).name for m in p} for p in parts.values()), parts
    assert len(events.read_text().splitlines()) == 1, events.read_text()
    cases = list(ET.parse(reports / "tests-x" / "junit.xml").getroot().iter("testcase"))
    assert len(cases) == 15


def test_a_part_that_is_not_one_of_n_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--shard", "2/2", "-p", "no:cacheprovider",
                                           "--reports-dir", str(pytester.path / "reports"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--shard 2/2: give I/N with 0 <= I < N, such as 0/2*"])


def _part(pytester: pytest.Pytester, spec: str, pool: Path, weights: Path) -> pytest.RunResult:
    return pytester.runpytest_subprocess("--shard", spec, "--shard-pool", str(pool), "--shard-weights", str(weights),
                                         "-p", "no:cacheprovider", "--reports-dir", str(pytester.path / "reports"),
                                         "--rootdir", str(pytester.path))  # from which the weights name modules


ORDERED = '''
import os

def test_{name}():
    with open(os.environ["EVENTS"], "a") as f:
        f.write("{name}\\n")
'''


def test_a_part_takes_each_module_no_part_has_taken_the_longest_first(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first part to be ready takes every module while no other part takes any; the second, run
    after it, finds the pool empty. Modules are taken the longest first by the weights."""
    for name in ("a", "b", "c"):
        pytester.makepyfile(**{f"test_{name}": ORDERED.format(name=name)})
    weights = tmp_path / "weights.json"
    weights.write_text(json.dumps({"test_a.py": 1.0, "test_b.py": 30.0, "test_c.py": 5.0}))
    events, pool = tmp_path / "events", tmp_path / "pool"
    monkeypatch.setenv("EVENTS", str(events))
    first = _part(pytester, "1/2", pool, weights)
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    assert events.read_text().split() == ["b", "c", "a"]
    second = _part(pytester, "0/2", pool, weights)
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()
    second.stdout.fnmatch_lines(["*3 deselected*"])
    assert events.read_text().split() == ["b", "c", "a"]
