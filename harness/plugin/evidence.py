"""What a check leaves to read: the broker log written while it ran (attached when it fails), every
RawClient exchange it made (evidence/<check>.wire.json when it does not pass), and the run's event log."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from harness import attach
from harness.plugin.run_folder import RUN_DIR_KEY, run_dir, writes_reports
from harness.reporting.evidence import Evidence

EVIDENCE_KEY = pytest.StashKey[Evidence]()


def evidence(config: pytest.Config) -> Evidence:
    return config.stash[EVIDENCE_KEY]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if writes_reports(config):
        config.stash[EVIDENCE_KEY] = Evidence()


# A wrapper, so that the logs are marked before the check's own fixtures write to them.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    if EVIDENCE_KEY in item.config.stash:
        evidence(item.config).mark(item.nodeid)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """Record every RawClient exchange of the check, setup to teardown; RunResults.record writes them
    as evidence/<check>.wire.json when the check does not pass. Only where results are written."""
    if RUN_DIR_KEY not in item.config.stash:
        return (yield)
    from harness.reporting.wire import recording

    attach.open_event_log(run_dir(item.config) / "events.jsonl")
    attach.set_check(item.nodeid)
    with recording(item):
        return (yield)


# trylast: the innermost wrapper, so the log excerpts are in the report's sections before
# harness.plugin.results_file records the report (its evidence file copies them).
@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if EVIDENCE_KEY in item.config.stash and report.failed:
        for title, text in evidence(item.config).collect(item):
            report.sections.append((title, text))
            attach.text(title, text)
    return report
