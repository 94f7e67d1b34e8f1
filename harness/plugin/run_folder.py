"""The run's report folder: reports/<run-id>/ (junit.xml, allure-results/, nodes/ for broker logs),
and reports/latest pointing at it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.reporting.run_names import new_run_id, point_latest

RUN_DIR_KEY = pytest.StashKey[Path]()


def writes_reports(config: pytest.Config) -> bool:
    """True in the process that writes the run folder: pytest-xdist's workers do not."""
    return not hasattr(config, "workerinput")


def run_dir(config: pytest.Config) -> Path:
    return config.stash[RUN_DIR_KEY]


# tryfirst: junitxml and allure-pytest read their paths in their own pytest_configure.
@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not writes_reports(config):
        return
    run_id = config.option.run_id or new_run_id()
    base = Path(config.option.reports_dir)
    folder = base / run_id
    (folder / "nodes").mkdir(parents=True, exist_ok=True)
    if not os.environ.get("KCTS_NO_LATEST"):  # a matrix run points latest at the matrix itself
        try:
            point_latest(base, run_id)
        except OSError:
            pass
    config.stash[RUN_DIR_KEY] = folder.resolve()
    if not getattr(config.option, "xmlpath", None):
        config.option.xmlpath = str(folder / "junit.xml")
    if hasattr(config.option, "allure_report_dir") and not config.option.allure_report_dir:
        config.option.allure_report_dir = str(folder / "allure-results")
