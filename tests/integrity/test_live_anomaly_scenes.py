"""The anomaly checker on real histories: a local Apache Kafka cluster, made through the protocol proxy to
serve (or acknowledge) what a broker with each fault would, shows each of Jepsen's anomaly classes to
the checker in a real client's history, and nothing without the fault.

Each scene of harness.scenarios.anomaly_scenes runs twice, on two topics: with its rule in force,
and without it (the same client calls). Every history goes to one folder, judged in one Spark query
(each check is local to a partition, so topics are judged apart); each test reads its topic's
findings. Exactly the intended class must be found, with its evidence (where, which value, which
operations); Jepsen's classes nest where a lost write is also unseen, and the test expects both.

Each test writes what the checker found in its history beside it (counts and first examples per
class, and the timeline with the proxy's rule as the nemesis: harness.integrity.anomaly_report),
attached to its Allure result and named in results.json.

Heavy (a cluster, Spark, 24 scene runs and 4 of cycles): `tox -e integrity` runs it, the gate does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fixtures.integrity import AnomalyReporter
from fixtures.module_scope import module_topic
from fixtures.topics import RunNames
from harness.cluster.base import Cluster
from harness.histories.history import OpType, read_file, read_folder
from harness.integrity.anomaly_checks import AnomalyFindings, Case, JepsenAnomaly, all_cases, summarize_by_topic
from harness.integrity.anomaly_frames import load_jsonl
from harness.plugin.run_folder import run_dir
from harness.scenarios.anomaly_scenes import CYCLE_SCENES, PARTITIONS, PHANTOM, SCENES, SceneRun, run_scene

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.live, pytest.mark.heavy, pytest.mark.integrity]

A = JepsenAnomaly


@dataclass(frozen=True)
class Expected:
    """What a scene's ruled history must show: every class found with its count, and of `kind`'s one
    case, where it is (offset, value) and a word of its detail."""

    found: dict[str, int]
    kind: JepsenAnomaly
    offset: int | None
    value: str
    detail: str
    roles: tuple[str, ...]


EXPECTED: dict[str, Expected] = {
    "duplicate": Expected({"duplicate": 1}, A.DUPLICATE, 3, "v3", "value at offsets 3, 4", ("poll", "poll", "send")),
    "inconsistent-offsets": Expected({"inconsistent-offsets": 1}, A.INCONSISTENT_OFFSETS, 4,
                                     f"{PHANTOM.decode()},v4", "offset holds", ("poll", "poll", "send")),
    "G1a": Expected({"G1a": 1}, A.G1A, None, "aborted", "aborted or failed writer", ("send", "poll")),
    "lost-write": Expected({"lost-write": 1, "unseen": 1}, A.LOST_WRITE, 5, "v5", "at or below offset 9",
                           ("send", "poll")),
    "unseen": Expected({"unseen": 1}, A.UNSEEN, 9, "v9", "never polled", ("send",)),
    "poll-skip": Expected({"poll-skip": 1}, A.POLL_SKIP, 6, "v6", "offset 6 after offset 4", ("poll", "poll")),
    "int-poll-skip": Expected({"int-poll-skip": 1}, A.INT_POLL_SKIP, 6, "v6", "offset 6 after offset 4",
                              ("poll", "poll")),
    "nonmonotonic-poll": Expected({"nonmonotonic-poll": 1}, A.NONMONOTONIC_POLL, 0, "v0", "offset 0 after offset 4",
                                  ("poll", "poll")),
    "int-nonmonotonic-poll": Expected({"int-nonmonotonic-poll": 1}, A.INT_NONMONOTONIC_POLL, 4, "v4",
                                      "offset 4 after offset 4", ("poll", "poll")),
    "nonmonotonic-send": Expected({"nonmonotonic-send": 1}, A.NONMONOTONIC_SEND, 3, "b",
                                  "sent after a value at offset 4, placed at offset 3", ("send", "send")),
    "int-nonmonotonic-send": Expected({"int-nonmonotonic-send": 1}, A.INT_NONMONOTONIC_SEND, 3, "b",
                                      "sent after a value at offset 4, placed at offset 3", ("send", "send")),
    "precommitted-read": Expected({"precommitted-read": 1}, A.PRECOMMITTED_READ, 0, "v0",
                                  "polled before transaction", ("send", "poll")),
}
assert set(EXPECTED) == set(SCENES)

Outcome = SceneRun | BaseException


def _selected(request: pytest.FixtureRequest, names: list[str]) -> list[str]:
    """The scenes of `names` this session runs a test of (every one in a full run), so that a narrow
    selection (-k) drives only its own scenes' clients, not the other scenes' too."""
    chosen = {item.callspec.params.get("scene") for item in request.session.items
              if item.path == request.path and hasattr(item, "callspec")}
    return [n for n in names if n in chosen]


@pytest.fixture(scope="module")
def history_folder(pytestconfig: pytest.Config) -> Path:
    """`<run dir>/history-anomalies/`: every scene's client histories, kept as the run's evidence."""
    return run_dir(pytestconfig) / "history-anomalies"


def _run_all(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames, scenes: list[str],
             folder: Path) -> dict[tuple[str, bool], Outcome]:
    """Every scene, ruled and not, each on its own topic. A scene that could not run keeps its error,
    which its tests raise (the other scenes still run)."""
    done: dict[tuple[str, bool], Outcome] = {}
    for scene in scenes:
        for ruled in (True, False):
            what = f"{scene}-{'ruled' if ruled else 'clean'}"
            try:
                topic = module_topic(request, what, 3, partitions=PARTITIONS.get(scene, 1))
                done[(scene, ruled)] = run_scene(cluster, scene, topic, folder, ruled,
                                                 run_names.transactional_id(what))
            except Exception as exc:  # noqa: BLE001 - raised again by the scene's own test
                done[(scene, ruled)] = exc
    return done


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames,
         history_folder: Path) -> dict[tuple[str, bool], Outcome]:
    return _run_all(request, cluster, run_names, _selected(request, list(SCENES)), history_folder)


@pytest.fixture(scope="module")
def judged(spark: SparkSession, runs: dict[tuple[str, bool], Outcome],
           history_folder: Path) -> dict[str, AnomalyFindings]:
    """The findings of every history in the folder, by topic: one Spark query."""
    if not any(isinstance(r, SceneRun) for r in runs.values()):
        pytest.fail("no scene ran: " + "; ".join(f"{k}: {v}" for k, v in runs.items())[:2000])
    return summarize_by_topic(all_cases(load_jsonl(spark, history_folder)))


def _run(runs: dict[tuple[str, bool], Outcome], scene: str, ruled: bool) -> SceneRun:
    run = runs[(scene, ruled)]
    if isinstance(run, BaseException):
        raise run
    return run


def _findings(judged: dict[str, AnomalyFindings], run: SceneRun) -> AnomalyFindings:
    return judged.get(run.topic, AnomalyFindings({}, {}))


def _report(reporter: AnomalyReporter, run: SceneRun, findings: AnomalyFindings, folder: Path) -> None:
    """The run's findings and timeline, kept beside its history before anything is asserted of them."""
    ops = [op for op in read_folder(folder) if op.process.startswith(f"{run.topic}.")]
    reporter.report(run.topic, findings, ops, folder, run.faults)  # the topic names the scene, ruled or not


def _explain(run: SceneRun, findings: AnomalyFindings) -> str:
    errors = run.client_errors[:3]
    return f"{run.scene} on {run.topic} (rule {run.rule}; client errors {errors}):\n{findings.describe()}"


@pytest.mark.parametrize("scene", list(EXPECTED))
def test_a_broker_made_to_show_the_class_shows_it_to_the_checker(
    runs: dict[tuple[str, bool], Outcome], judged: dict[str, AnomalyFindings], history_folder: Path, scene: str,
    anomaly_reporter: AnomalyReporter,
) -> None:
    """With the scene's rule in force the rule acted, and the checker finds exactly the scene's class
    (a lost write with its unseen), once, at the offset and value the rule made it, naming the
    operations of the client calls behind it."""
    run = _run(runs, scene, True)
    want = EXPECTED[scene]
    findings = _findings(judged, run)
    _report(anomaly_reporter, run, findings, history_folder)
    assert run.fired >= 1, f"the rule never acted: {run.rule}"
    assert findings.found == want.found, _explain(run, findings)
    (case,) = findings.examples[want.kind]
    _holds(case, want, run)


def _holds(case: Case, want: Expected, run: SceneRun) -> None:
    where = (case.topic, case.partition, case.value)
    assert where == (run.topic, 0, want.value), case
    if want.offset is not None:
        assert case.offset == want.offset, case
    assert want.detail in case.detail, case
    assert sorted(o.role for o in case.ops) == sorted(want.roles), case
    assert all(o.process.startswith(f"{run.topic}.") and o.start_ns <= o.end_ns for o in case.ops), case


@pytest.mark.parametrize("scene", list(EXPECTED))
def test_the_same_scene_without_its_rule_shows_nothing(
    runs: dict[tuple[str, bool], Outcome], judged: dict[str, AnomalyFindings], history_folder: Path, scene: str,
    anomaly_reporter: AnomalyReporter,
) -> None:
    """The same client calls against the broker as it is: no class at all (the control that the
    finding above is the rule's, not the scene's or the checker's), from a history that holds sends
    and polls."""
    run = _run(runs, scene, False)
    findings = _findings(judged, run)
    _report(anomaly_reporter, run, findings, history_folder)
    assert findings.found == {}, _explain(run, findings)
    ops = [op for path in history_folder.glob(f"{run.topic}.*.jsonl") for op in read_file(path)]
    assert {op.type for op in ops} >= {OpType.SEND, OpType.POLL}, f"{run.topic}: {len(ops)} operations"


@pytest.fixture(scope="module")
def cycle_runs(request: pytest.FixtureRequest, cluster: Cluster, run_names: RunNames,
               history_folder: Path) -> tuple[Path, dict[tuple[str, bool], Outcome]]:
    """The cycle scenes, in a folder of their own: the cycle search costs rounds of Spark jobs, so it
    runs over these histories only."""
    folder = history_folder.parent / "history-cycles"
    return folder, _run_all(request, cluster, run_names, _selected(request, list(CYCLE_SCENES)), folder)


@pytest.fixture(scope="module")
def cycles_judged(spark: SparkSession,
                  cycle_runs: tuple[Path, dict[tuple[str, bool], Outcome]]) -> dict[str, AnomalyFindings]:
    folder, runs = cycle_runs
    if not any(isinstance(r, SceneRun) for r in runs.values()):
        pytest.fail("no cycle scene ran: " + "; ".join(f"{k}: {v}" for k, v in runs.items())[:2000])
    return summarize_by_topic(all_cases(load_jsonl(spark, folder), with_cycles=True))


@pytest.mark.parametrize("scene", list(CYCLE_SCENES))
def test_interleaved_transactions_on_a_correct_broker_make_the_cycle(
    cycle_runs: tuple[Path, dict[tuple[str, bool], Outcome]], cycles_judged: dict[str, AnomalyFindings], scene: str,
    anomaly_reporter: AnomalyReporter,
) -> None:
    """Kafka does not isolate transactions' writes from each other (Jepsen allows G0, and G1c where
    ww edges are inferred): two transactions interleaved as the scene says make exactly that cycle,
    named by the two transactions, and the same transactions one after the other make none."""
    folder, runs = cycle_runs
    run = _run(runs, scene, True)
    findings = _findings(cycles_judged, run)
    _report(anomaly_reporter, run, findings, folder)
    assert findings.found == {scene: 1}, _explain(run, findings)
    (case,) = findings.examples[JepsenAnomaly(scene)]
    assert case.detail.startswith("cycle among") and case.value is not None, case
    assert sorted(n.rsplit(".", 1)[0] for n in case.value.split()) == [f"{run.topic}.p1", f"{run.topic}.p2"], case
    assert {o.role for o in case.ops} <= {"send", "poll"} and case.ops, case
    clean = _run(runs, scene, False)
    findings = _findings(cycles_judged, clean)
    _report(anomaly_reporter, clean, findings, folder)
    assert findings.found == {}, _explain(clean, findings)
