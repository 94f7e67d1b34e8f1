"""The check tests' recorded answers: real answers from a live 4.4.0 run, in tests/checks/data/.

Refresh them with one recording run of the suites (it rewrites every file):

    KCTS_RECORD_CHECKS=$PWD/tests/checks/data python -m pytest suites/kip320 suites/kip359 suites/kip1094 \
        suites/kip1319 suites/partition
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from recordings import DATA, Recording

from harness.histories.store import load_untyped


@pytest.fixture
def recording() -> Recording:
    """`recording(name)` -> a fresh copy of tests/checks/data/<name>.json, free to alter."""

    def read(name: str) -> dict[str, Any]:
        path = DATA / f"{name}.json"
        if not path.exists():
            pytest.fail(f"no recorded answer {path.name}; refresh tests/checks/data (see tests/checks/conftest.py)")
        return copy.deepcopy(load_untyped(path))

    return read
