"""results.json: every check's verdict, the run's environment and the target's fingerprint; and the
same environment as Allure's environment.properties. At the end of the terminal's summary, the run's
FAILs as defects (harness.reporting.defects), where pytest counts only FAILs."""

from __future__ import annotations

import platform
from collections.abc import Generator
from pathlib import Path

import pytest

from harness.plugin.evidence import evidence
from harness.plugin.run_folder import RUN_DIR_KEY, run_dir, writes_reports
from harness.plugin.target import target_spec
from harness.reporting.defects import count_line, fails_text
from harness.reporting.results import RunResults

RESULTS_KEY = pytest.StashKey[RunResults]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if writes_reports(config):
        config.stash[RESULTS_KEY] = RunResults(target=target_spec(config).label)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if RESULTS_KEY in item.config.stash:
        item.config.stash[RESULTS_KEY].record(item, report, run_dir(item.config))
    return report


def _environment(config: pytest.Config) -> dict[str, str]:
    """What the run ran on: Python, the client libraries and stacks judged, and the target's account."""
    env = evidence(config).environment
    env.setdefault("python", platform.python_version())
    try:
        import confluent_kafka

        env.setdefault("confluent_kafka", confluent_kafka.__version__)
        env.setdefault("librdkafka", confluent_kafka.libversion()[0])
    except ImportError:
        pass
    from harness.clients import stacks

    choice = stacks.current()
    if choice.librdkafka != stacks.PINNED_CONFLUENT_KAFKA:
        env["librdkafka_driver"] = f"confluent-kafka {choice.librdkafka}"
    if choice.only:
        env["client_stack"] = choice.only
        env["client"] = stacks.get(choice.only).version()
    if stacks.GO in choice.judged():
        env["go_client"] = stacks.get(stacks.GO).version()
    for k, v in target_spec(config).environment().items():
        env.setdefault(k, v)
    return env


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if RUN_DIR_KEY not in config.stash:
        return
    env = _environment(config)
    results = config.stash[RESULTS_KEY]
    results.environment = dict(env)
    results.fingerprint = evidence(config).fingerprint
    results.target = env.get("broker_version", target_spec(config).label)
    results.write(run_dir(config) / "results.json")
    allure_dir = getattr(config.option, "allure_report_dir", None)
    if allure_dir:
        Path(allure_dir).mkdir(parents=True, exist_ok=True)
        lines = "".join(f"{k}={v}\n" for k, v in sorted(env.items()))
        (Path(allure_dir) / "environment.properties").write_text(lines)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """"kcts: 2 defects (3 FAILs)" and a line per defect, with the documents its promises come from."""
    if RESULTS_KEY not in config.stash:
        return
    found = config.stash[RESULTS_KEY].group_defects()
    if not found:
        return
    terminalreporter.write_sep("-", f"kcts: {count_line(found)}")
    for number, d in enumerate(found, 1):
        cites = f" ({d.cites()})" if d.documents else ""
        terminalreporter.write_line(f"D{number} {d.title}{cites}: {fails_text(len(d.checks))}")
