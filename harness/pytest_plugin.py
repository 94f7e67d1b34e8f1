"""The kcts pytest plugin: options, markers, the run's report folder, Allure labels and evidence.

Loaded through the `pytest11` entry point (and by the root conftest.py when not installed).
Every run writes `reports/<run-id>/` with junit.xml, allure-results/ and nodes/ (broker logs),
and points `reports/latest` at it.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import re
import time
from collections.abc import Generator
from pathlib import Path
from typing import TextIO

import pytest

from harness import attach, confluent, progress, verdicts
from harness.areas import AREAS
from harness.cluster.target import SECURITY_OPTIONS, TargetSpec, from_options, security_from
from harness.errors import FaultControlUnavailable, KctsError, VerdictError
from harness.kafka.dist import DEFAULT_VERSION
from harness.reports.evidence import Evidence
from harness.reports.results import RunResults

MARKERS = {
    **{a.marker: a.description for a in AREAS},
    "live": "a harness test that needs a real cluster",
    "tansu": "a harness test of the Tansu target (skipped until its binary is built: tox -e vendor)",
    "docker": "a harness test that needs a Docker engine",
    "needs_fault_control": "needs to stop, kill or pause nodes of the target",
    "promise": "promise(id, ...): the promises of harness/promises.toml that the check judges",
    "client_axis": "its client parts run in the driver of the client version asked for (--librdkafka, "
                   "--java-clients, --go-client); other librdkafka checks run on the pinned confluent-kafka",
    "client_stack": "client_stack(name): the client stack a check judges, for checks without a client parameter",
    "heavy": "a long scene the gate leaves out (its area's own tox env runs it: tox -e partition, tox -e integrity)",
}

RUN_DIR_KEY = pytest.StashKey[Path]()
EVIDENCE_KEY = pytest.StashKey[Evidence]()
RESULTS_KEY = pytest.StashKey[RunResults]()
TARGET_KEY = pytest.StashKey[TargetSpec]()
OPEN_CLIENTS_KEY = pytest.StashKey[frozenset[int]]()
CLIENT_ACTIVITY_KEY = pytest.StashKey[int]()
PROGRESS_STREAM_KEY = pytest.StashKey[TextIO]()
STARTED_KEY = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcts", "Kafka conformance target")
    group.addoption("--kafka-version", default=os.environ.get("KCTS_KAFKA_VERSION"),
                    help=f"broker version of the local Apache Kafka cluster (default {DEFAULT_VERSION})")
    group.addoption("--java-clients", default=os.environ.get("KCTS_JAVA_CLIENTS"),
                    help="kafka-clients version of the Java drivers (default: the broker's on a local "
                    f"cluster, {DEFAULT_VERSION} on other targets)")
    group.addoption("--librdkafka", default=os.environ.get("KCTS_LIBRDKAFKA"),
                    help="the confluent-kafka release (librdkafka bundled) of the client-axis checks' librdkafka "
                    "driver, from PyPI into a cached virtualenv (default: the one kcts is installed with)")
    group.addoption("--go-client", action="store_true", default=bool(os.environ.get("KCTS_GO_CLIENT")),
                    help="judge franz-go too (its driver is built through the Go module proxy)")
    group.addoption("--client-stack", default=None, choices=("librdkafka", "java", "franz-go"),
                    help="a client-only run: judge only this stack's checks (a column of kcts matrix's client axis)")
    group.addoption("--target", default=None, help="the target in one word, as `kcts matrix --targets` "
                    "spells it: 4.4.0, kfake, external:HOST:PORT")
    group.addoption("--target-profile", default=None,
                    help="a TOML file with a [target] table (see harness/cluster/target.py)")
    group.addoption("--brokers", type=int, default=3, help="broker processes in the local cluster (default 3)")
    group.addoption("--backend", choices=("local", "docker", "external", "kfake", "librdkafka-mock"), default="local",
                    help="local: start a Kafka cluster here; docker: start it in containers; external: use "
                    "--bootstrap-servers; kfake: build and start franz-go's kfake here; librdkafka-mock: hold "
                    "librdkafka's mock cluster here")
    group.addoption("--image", default=os.environ.get("KCTS_IMAGE"),
                    help="docker backend: the Apache Kafka image to run (default: one kcts builds offline)")
    group.addoption("--publish-from", type=int, default=None,
                    help="docker backend: publish the brokers' client ports on 127.0.0.1 from this port on "
                    "(default: free ports)")
    group.addoption("--bootstrap-servers", default=None, help="host:port[,...] of an external target")
    for flag, env, text in SECURITY_OPTIONS:
        group.addoption(flag, default=os.environ.get(env) if env else None, help=text)
    group.addoption("--spark-master", default=None,
                    help="Spark master of the integrity checker (default $KCTS_SPARK_MASTER or local[2])")
    group.addoption("--reports-dir", default=os.environ.get("KCTS_REPORTS", "reports"),
                    help="where reports/<run-id>/ is written (default ./reports)")
    group.addoption("--run-id", default=os.environ.get("KCTS_RUN_ID"), help="name of this run's report folder")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    opt = config.option
    try:
        spec = from_options(
            opt.backend, opt.kafka_version, opt.brokers, opt.bootstrap_servers,
            security_from(opt),
            opt.java_clients, opt.target, opt.target_profile, opt.image, opt.publish_from,
        )
    except KctsError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[TARGET_KEY] = spec
    from harness.clients import stacks

    stacks.configure(stacks.ClientChoice(opt.librdkafka or stacks.PINNED_CONFLUENT_KAFKA, opt.go_client,
                                         opt.client_stack))
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
    config.stash[STARTED_KEY] = time.monotonic()
    # pytest captures fd 2 while a check runs; a duplicate taken now (capture is suspended during
    # configure) still reaches the terminal or CI log, for the progress of long checks.
    try:
        config.stash[PROGRESS_STREAM_KEY] = os.fdopen(os.dup(2), "w", buffering=1, closefd=True)
    except OSError:
        pass
    config.stash[EVIDENCE_KEY] = Evidence()
    config.stash[RESULTS_KEY] = RunResults(target=spec.label)
    if not getattr(config.option, "xmlpath", None):
        config.option.xmlpath = str(run_dir / "junit.xml")
    if hasattr(config.option, "allure_report_dir") and not config.option.allure_report_dir:
        config.option.allure_report_dir = str(run_dir / "allure-results")


def run_dir(config: pytest.Config) -> Path:
    return config.stash[RUN_DIR_KEY]


def evidence(config: pytest.Config) -> Evidence:
    return config.stash[EVIDENCE_KEY]


def target_spec(config: pytest.Config) -> TargetSpec:
    """The run's target, parsed once from the options."""
    return config.stash[TARGET_KEY]


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    item.stash[OPEN_CLIENTS_KEY] = confluent.open_keys()
    item.stash[CLIENT_ACTIVITY_KEY] = confluent.activity()
    if EVIDENCE_KEY in item.config.stash:
        evidence(item.config).mark(item.nodeid)
    try:
        return (yield)
    except (VerdictError, FaultControlUnavailable) as exc:
        verdicts.from_exception(exc)
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A refusal raised below the pytest layer (a scenario, the nemesis) ends the check with its verdict."""
    try:
        return (yield)
    except (VerdictError, FaultControlUnavailable) as exc:
        verdicts.from_exception(exc)
        raise


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """Fail a check that leaves a confluent-kafka client open once its fixtures are torn down
    (clients are closed where they are made: harness.confluent). Clients of wider-scoped
    fixtures still in use are not the check's. Then collect the test's cyclic garbage here, on
    the main thread, as a safety net: a client in that garbage, collected later on one of
    librdkafka's threads, is destroyed there and takes the process with it
    (confluent-kafka-python #1761, #2129). Only a test (or a fixture torn down with it) that made
    or closed a client can leave one in its garbage: the others skip a full collection, which
    costs a tenth of a second on this process's heap."""
    try:
        result = yield
    finally:
        if confluent.activity() != item.stash.get(CLIENT_ACTIVITY_KEY, -1):
            gc.collect()
    left = confluent.left_open(item.stash.get(OPEN_CLIENTS_KEY, frozenset()))
    if left:
        raise AssertionError(f"the check left {len(left)} client(s) open: " + "; ".join(map(str, left)))
    return result


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
            attach.text(title, text)
    item.config.stash[RESULTS_KEY].record(item, report, run_dir(item.config))
    if report.when == "teardown":
        checked = item.config.stash[RESULTS_KEY].checks.get(item.nodeid)
        _progress_line(item.config, {"nodeid": item.nodeid, "cell": checked.cell if checked else "pass"})
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The live progress line goes before pytest writes the check's outcome beside its file name."""
    if report.when == "call" or report.failed or report.skipped:
        progress.end()


def _progress_line(config: pytest.Config, data: dict[str, object]) -> None:
    """One line of `progress.jsonl` in the run folder: what `kcts matrix` follows while a run goes on."""
    started = config.stash.setdefault(STARTED_KEY, time.monotonic())
    line = json.dumps({**data, "elapsed_s": round(time.monotonic() - started, 1)})
    with open(run_dir(config) / "progress.jsonl", "a") as f:
        f.write(line + "\n")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A check that names a promise the catalogue does not list is a usage error, before anything runs."""
    from harness.promises import CATALOGUE, catalogue

    known = catalogue()
    unknown = sorted({f"{item.nodeid}: {i}" for item in items for m in item.iter_markers("promise")
                      for i in m.args if i not in known})
    if unknown:
        raise pytest.UsageError(f"checks name promises that {CATALOGUE.name} does not list: {'; '.join(unknown[:5])}")
    _select_client_stacks(config, items)


def item_stack(item: pytest.Item) -> str | None:
    """The client stack a check judges: its `client` parameter, or its client_stack marker."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "client" in callspec.params:
        return str(callspec.params["client"])
    marker = item.get_closest_marker("client_stack")
    return str(marker.args[0]) if marker else None


def _select_client_stacks(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the checks of stacks the run does not judge (franz-go without --go-client; every
    other stack in a client-only run), and skip, with the reason, librdkafka checks that would run on
    the pinned confluent-kafka when another release was asked for."""
    from harness.clients import stacks

    choice = stacks.current()
    judged = choice.judged()
    keep, drop = [], []
    for item in items:
        stack = item_stack(item)
        wanted = stack in judged if stack is not None else choice.only is None
        (keep if wanted else drop).append(item)
        if (wanted and stack == stacks.LIBRDKAFKA and choice.librdkafka != stacks.PINNED_CONFLUENT_KAFKA
                and item.get_closest_marker("client_axis") is None):
            item.add_marker(pytest.mark.skip(reason=(
                f"runs librdkafka in the harness's own process, on the pinned confluent-kafka "
                f"{stacks.PINNED_CONFLUENT_KAFKA}, not the {choice.librdkafka} asked for; only client_axis checks "
                "run a driver of another release")))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    if RUN_DIR_KEY in session.config.stash:
        _progress_line(session.config, {"collected": len(session.items)})


# ---- wire evidence and ERROR vs FAIL (issue 13; harness/reports/wire.py, harness/reports/results.py) ----
@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """Record every RawClient exchange of the check, setup to teardown; RunResults.record writes them
    as evidence/<check>.wire.json when the check does not pass. Only where results are written."""
    if RESULTS_KEY not in item.config.stash:
        return (yield)
    from harness.reports.wire import recording

    attach.open_event_log(run_dir(item.config) / "events.jsonl")
    attach.set_check(item.nodeid)
    stream = item.config.stash.get(PROGRESS_STREAM_KEY, None)
    if stream is not None:
        reporter = item.config.pluginmanager.get_plugin("terminalreporter")
        writer = getattr(reporter, "_tw", None)
        progress.begin(stream, item.name, column=lambda: int(getattr(writer, "width_of_current_line", 0)))
    try:
        with recording(item):
            return (yield)
    finally:
        progress.end()


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Remember the type of what the check's body raised: a failed assertion is a FAIL, anything
    else (StopIteration, a ProtocolError, a KeyError) an ERROR (harness.verdicts.classify)."""
    from harness.reports.results import RAISED_KEY

    try:
        return (yield)
    except BaseException as exc:
        pyfuncitem.stash[RAISED_KEY] = type(exc)
        raise
# ---- end of wire evidence and ERROR vs FAIL ----


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
    from harness.clients import stacks

    choice = stacks.current()
    if choice.librdkafka != stacks.PINNED_CONFLUENT_KAFKA:
        env["librdkafka_driver"] = f"confluent-kafka {choice.librdkafka}"
    if choice.only:
        env["client_stack"] = choice.only
    if stacks.GO in choice.judged():
        env["go_client"] = f"franz-go {stacks.go_module_version()}"
    spec = target_spec(config)
    for k, v in spec.environment().items():
        env.setdefault(k, v)
    results = config.stash[RESULTS_KEY]
    results.environment = dict(env)
    results.fingerprint = evidence(config).fingerprint
    results.target = env.get("broker_version", spec.label)
    results.write(run_dir(config) / "results.json")
    allure_dir = getattr(config.option, "allure_report_dir", None)
    if allure_dir:
        Path(allure_dir).mkdir(parents=True, exist_ok=True)
        lines = "".join(f"{k}={v}\n" for k, v in sorted(env.items()))
        (Path(allure_dir) / "environment.properties").write_text(lines)


def pytest_report_header(config: pytest.Config) -> list[str]:
    if RUN_DIR_KEY not in config.stash:
        return []
    spec = target_spec(config)
    return [f"kcts: target={spec.label} ({spec.kind}) java-clients={spec.java_clients} reports={run_dir(config)}"]
