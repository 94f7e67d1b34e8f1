"""The kcts pytest plugin: options, markers, the run's report folder, Allure labels and evidence.

Loaded through the `pytest11` entry point (and by the root conftest.py when not installed).
Every run writes `reports/<run-id>/` with junit.xml, allure-results/ and nodes/ (broker logs),
and points `reports/latest` at it.
"""

from __future__ import annotations

import gc
import os
import platform
import re
import time
from collections.abc import Generator
from pathlib import Path

import pytest

from harness.kafka.dist import DEFAULT_VERSION
from harness.reports.evidence import Evidence
from harness.reports.results import RunResults

MARKERS = {
    "smoke": "basic produce/consume, failover and unclean-election behaviour of the target",
    "kip320": "KIP-320: leader epoch fencing and truncation detection",
    "kip359": "KIP-359: leader epoch in Produce",
    "kip1094": "KIP-1094: next offset and leader epoch after poll",
    "kip1319": "KIP-1319: TxnOffsetCommit v6 with topic IDs",
    "integrity": "record-level integrity of transactional pipelines under faults",
    "live": "a harness test that needs a real cluster",
    "needs_fault_control": "needs to stop, kill or pause nodes of the target",
}

EPICS = {"kip320": "KIP-320", "kip359": "KIP-359", "kip1094": "KIP-1094", "kip1319": "KIP-1319",
         "integrity": "Record integrity", "smoke": "Smoke"}

RUN_DIR_KEY = pytest.StashKey[Path]()
EVIDENCE_KEY = pytest.StashKey[Evidence]()
RESULTS_KEY = pytest.StashKey[RunResults]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcts", "Kafka conformance target")
    group.addoption("--kafka-version", default=os.environ.get("KCTS_KAFKA_VERSION", DEFAULT_VERSION),
                    help=f"Apache Kafka version of the local cluster (default {DEFAULT_VERSION})")
    group.addoption("--brokers", type=int, default=3, help="broker processes in the local cluster (default 3)")
    group.addoption("--backend", choices=("local", "external", "kfake"), default="local",
                    help="local: start a Kafka cluster here; external: use --bootstrap-servers; "
                    "kfake: build and start franz-go's kfake here")
    group.addoption("--bootstrap-servers", default=None, help="host:port[,...] of an external target")
    group.addoption("--security-protocol", default=None, help="external target: SASL_PLAINTEXT, SASL_SSL, ...")
    group.addoption("--sasl-mechanism", default=None, help="external target: PLAIN, SCRAM-SHA-256, ...")
    group.addoption("--sasl-username", default=os.environ.get("KCTS_SASL_USERNAME"), help="external target user")
    group.addoption("--sasl-password", default=os.environ.get("KCTS_SASL_PASSWORD"),
                    help="external target password (or KCTS_SASL_PASSWORD)")
    group.addoption("--spark-master", default=None,
                    help="Spark master of the integrity checker (default $KCTS_SPARK_MASTER or local[2])")
    group.addoption("--reports-dir", default=os.environ.get("KCTS_REPORTS", "reports"),
                    help="where reports/<run-id>/ is written (default ./reports)")
    group.addoption("--run-id", default=os.environ.get("KCTS_RUN_ID"), help="name of this run's report folder")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    if config.option.backend == "external" and not config.option.bootstrap_servers:
        raise pytest.UsageError("--backend external needs --bootstrap-servers host:port[,...]")
    if hasattr(config, "workerinput"):
        return
    run_id = config.option.run_id or time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    base = Path(config.option.reports_dir)
    run_dir = base / run_id
    (run_dir / "nodes").mkdir(parents=True, exist_ok=True)
    latest = base / "latest"
    try:
        if os.environ.get("KCTS_NO_LATEST"):  # a matrix run points latest at the matrix itself
            raise OSError
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(run_id)
    except OSError:
        pass
    config.stash[RUN_DIR_KEY] = run_dir.resolve()
    config.stash[EVIDENCE_KEY] = Evidence()
    config.stash[RESULTS_KEY] = RunResults(target=config.option.backend)
    if not getattr(config.option, "xmlpath", None):
        config.option.xmlpath = str(run_dir / "junit.xml")
    if hasattr(config.option, "allure_report_dir") and not config.option.allure_report_dir:
        config.option.allure_report_dir = str(run_dir / "allure-results")


def run_dir(config: pytest.Config) -> Path:
    return config.stash[RUN_DIR_KEY]


def evidence(config: pytest.Config) -> Evidence:
    return config.stash[EVIDENCE_KEY]


@pytest.fixture(autouse=True)
def _allure_labels(request: pytest.FixtureRequest) -> None:
    """epic = the KIP (from the marker), feature = the module's first docstring line, story = the test."""
    try:
        import allure
    except ImportError:
        return
    for marker, epic in EPICS.items():
        if request.node.get_closest_marker(marker):
            allure.dynamic.epic(epic)
            break
    module_doc = (request.module.__doc__ or "").strip().splitlines()
    if module_doc:
        allure.dynamic.feature(module_doc[0])
    allure.dynamic.story(re.sub(r"^test_", "", request.node.originalname).replace("_", " "))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if EVIDENCE_KEY in item.config.stash:
        evidence(item.config).mark(item.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Collect the test's cyclic garbage here, on the main thread, once its fixtures are torn down:
    a client in that garbage, collected later on one of librdkafka's threads, is destroyed there and
    takes the process with it (confluent-kafka-python #1761, #2129)."""
    gc.collect()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if EVIDENCE_KEY not in item.config.stash:
        return report
    if report.failed:
        for title, text in evidence(item.config).collect(item):
            report.sections.append((title, text))
            _attach(title, text)
    item.config.stash[RESULTS_KEY].record(item, report, run_dir(item.config))
    return report


def _attach(title: str, text: str) -> None:
    try:
        import allure
    except ImportError:
        return
    allure.attach(text, name=title, attachment_type=allure.attachment_type.TEXT)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if RUN_DIR_KEY not in config.stash:
        return
    env = evidence(config).environment
    env.setdefault("python", platform.python_version())
    try:
        import confluent_kafka

        env.setdefault("confluent_kafka", confluent_kafka.__version__)
        env.setdefault("librdkafka", confluent_kafka.libversion()[0])
    except ImportError:
        pass
    env.setdefault("backend", config.option.backend)
    results = config.stash[RESULTS_KEY]
    results.environment = dict(env)
    results.target = env.get("broker_version", config.option.backend)
    results.write(run_dir(config) / "results.json")
    allure_dir = getattr(config.option, "allure_report_dir", None)
    if allure_dir:
        Path(allure_dir).mkdir(parents=True, exist_ok=True)
        lines = "".join(f"{k}={v}\n" for k, v in sorted(env.items()))
        (Path(allure_dir) / "environment.properties").write_text(lines)


def pytest_report_header(config: pytest.Config) -> list[str]:
    if RUN_DIR_KEY not in config.stash:
        return []
    return [f"kcts: backend={config.option.backend} kafka={config.option.kafka_version} reports={run_dir(config)}"]
