"""Allure's epic, feature and story of each check, from its area marker, its module and its name."""

from __future__ import annotations

import re

import pytest

from harness.areas import AREAS


@pytest.fixture(autouse=True)
def _allure_labels(request: pytest.FixtureRequest) -> None:
    """epic = the KIP (from the marker), feature = the module's first docstring line, story = the test."""
    try:
        import allure
    except ImportError:
        return
    for area in AREAS:
        if request.node.get_closest_marker(area.marker):
            allure.dynamic.epic(area.epic)
            allure.dynamic.parent_suite(area.title)
            break
    # The module's first sentence (up to its first period or colon), on one line: its subject.
    module_doc = re.split(r"(?<=[.:])\s", " ".join((request.module.__doc__ or "").split()), maxsplit=1)[0]
    if module_doc:
        allure.dynamic.feature(module_doc.rstrip(".:"))
        allure.dynamic.suite(module_doc.rstrip(".:"))
    allure.dynamic.story(re.sub(r"^test_", "", request.node.originalname).replace("_", " "))
