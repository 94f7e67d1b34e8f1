"""Fixtures of the proxy's unit tests (no broker): the 4.4.0 specs."""

from __future__ import annotations

import pytest

from harness.protocol.spec import SpecSet, load_specs


@pytest.fixture(scope="session")
def specs() -> SpecSet:
    return load_specs("4.4.0")
