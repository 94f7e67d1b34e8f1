"""A released session fixture ends in the teardown of the last check that uses it, with the session
fixtures that depend on it, a check that gets it through an alias counts as its user, and a check
after the last which asks for it again gets a new one (harness.plugin.last_user)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = '''
import os
import pytest
from harness.plugin import last_user

def log(line):
    with open(os.environ["EVENTS"], "a") as f:
        f.write(line + "\\n")

def pytest_configure(config):
    last_user.release_after_last_user(config, "held", "getter")

@pytest.fixture(scope="session")
def held():
    log("held up")
    yield "held"
    log("held down")

@pytest.fixture
def getter(request):
    return request.getfixturevalue("held")

@pytest.fixture(scope="session")
def leaning(held):
    log("leaning up")
    yield held
    log("leaning down")
'''

CHECKS = '''
from conftest import log

def test_a(held):
    log("a")

def test_b(leaning):
    log("b")

def test_b2(getter):
    log("b2")

def test_c():
    log("c")

def test_d(request):
    request.getfixturevalue("held")
    log("d")

def test_e():
    log("e")
'''


def test_a_released_fixture_ends_after_its_last_user_and_comes_back_when_asked_again(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    events = tmp_path / "events"
    monkeypatch.setenv("EVENTS", str(events))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_order=CHECKS)
    result = pytester.runpytest_subprocess("--reports-dir", str(pytester.path / "reports"), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    # b2 gets `held` only through its alias `getter`, and still holds it.
    assert events.read_text().splitlines() == [
        "held up", "a", "leaning up", "b", "b2", "leaning down", "held down", "c", "held up", "d", "e", "held down",
    ]
