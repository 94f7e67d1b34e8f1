"""Progress while a run goes on: a live line on the terminal for long checks, and progress.jsonl in
the run folder, which `kcts matrix` follows."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from typing import TextIO

import pytest

from harness import progress
from harness.plugin.results_file import RESULTS_KEY
from harness.plugin.run_folder import RUN_DIR_KEY, run_dir, writes_reports

PROGRESS_STREAM_KEY = pytest.StashKey[TextIO]()
STARTED_KEY = pytest.StashKey[float]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not writes_reports(config):
        return
    config.stash[STARTED_KEY] = time.monotonic()
    # pytest captures fd 2 while a check runs; a duplicate taken now (capture is suspended during
    # configure) still reaches the terminal or CI log, for the progress of long checks.
    try:
        config.stash[PROGRESS_STREAM_KEY] = os.fdopen(os.dup(2), "w", buffering=1, closefd=True)
    except OSError:
        pass


def _progress_line(config: pytest.Config, data: dict[str, object]) -> None:
    """One line of `progress.jsonl` in the run folder."""
    started = config.stash.setdefault(STARTED_KEY, time.monotonic())
    line = json.dumps({**data, "elapsed_s": round(time.monotonic() - started, 1)})
    with open(run_dir(config) / "progress.jsonl", "a") as f:
        f.write(line + "\n")


def pytest_collection_finish(session: pytest.Session) -> None:
    if RUN_DIR_KEY in session.config.stash:
        _progress_line(session.config, {"collected": len(session.items)})


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    if RESULTS_KEY not in item.config.stash:
        return (yield)
    stream = item.config.stash.get(PROGRESS_STREAM_KEY, None)
    if stream is not None:
        reporter = item.config.pluginmanager.get_plugin("terminalreporter")
        writer = getattr(reporter, "_tw", None)
        progress.begin(stream, item.name, column=lambda: int(getattr(writer, "width_of_current_line", 0)))
    try:
        return (yield)
    finally:
        progress.end()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The live progress line goes before pytest writes the check's outcome beside its file name."""
    if report.when == "call" or report.failed or report.skipped:
        progress.end()


# tryfirst: the outermost wrapper, so the check's cell is in RunResults (harness.plugin.results_file
# records it) when its line is written.
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "teardown" and RESULTS_KEY in item.config.stash:
        checked = item.config.stash[RESULTS_KEY].checks.get(item.nodeid)
        _progress_line(item.config, {"nodeid": item.nodeid, "cell": checked.cell if checked else "pass"})
    return report
