"""Closing on the way out of a block (harness.closing), and the workload's closes that use it.

A close that fails on the way out of a block that raised is a note of the block's exception, never
its replacement: a scene's WaitTimeout (an ERROR), TargetRefused (its premise refused) or failed
assertion (a FAIL) keeps its verdict. After a clean block the close's own exception leaves, and a
harness process that would not stop is the harness's error (`WorkerHung`, an ERROR), never an
AssertionError (a FAIL). No broker: the wedged generator is a real child that ignores its stop.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import verdicts
from harness.closing import close_all, closed_on_exit
from harness.errors import TargetRefused, WorkerHung
from harness.process.events import EventLog, Message
from harness.process.worker import WorkerProcess
from harness.waiting import WaitTimeout, wait_until
from harness.workload import drive as drive_module
from harness.workload import generator_process
from harness.workload.generator_process import GeneratorHistory, GeneratorProcess
from harness.workload.pipeline import Pipeline
from tests.harness.test_workload_processes import IGNORES_STOP

# The scene's own exceptions, one per verdict they stand for (made afresh per test: notes stick).
SCENE_EXCEPTIONS = [
    pytest.param(lambda: WaitTimeout("timed out after 60.0s waiting; last state: 3 of 6 partitions"), "error",
                 id="wait-timeout"),
    pytest.param(lambda: TargetRefused("the target would not move the leader of t-0"), "target-refused",
                 id="target-refused"),
    pytest.param(lambda: AssertionError("record 17 lost"), "fail", id="broken-promise"),
]

class Closes:
    """Closes that record their calls; `fails` names those that raise."""

    def __init__(self, *fails: str) -> None:
        self.fails = fails
        self.called: list[str] = []

    def __call__(self, what: str) -> None:
        self.called.append(what)
        if what in self.fails:
            raise WorkerHung(f"{what} did not stop")

    def of(self, what: str) -> tuple[str, Callable[[], None]]:
        return what, lambda: self(what)


@pytest.mark.parametrize(("make", "verdict"), SCENE_EXCEPTIONS)
def test_a_close_that_fails_after_the_block_raised_is_a_note_of_the_blocks_exception(
    make: Callable[[], BaseException], verdict: str
) -> None:
    scene = make()
    closes = Closes("the generator")
    with pytest.raises(type(scene)) as raised, closed_on_exit(lambda: closes("the generator"), "the generator"):
        raise scene
    assert raised.value is scene
    assert raised.value.__notes__ == ["closing the generator then raised too: the generator did not stop"]
    assert closes.called == ["the generator"]
    assert _cell(scene) == verdict


def test_a_close_that_fails_after_a_clean_block_raises_its_own_error() -> None:
    closes = Closes("the generator")
    with pytest.raises(WorkerHung, match="the generator did not stop") as raised, \
            closed_on_exit(lambda: closes("the generator"), "the generator"):
        pass
    assert not isinstance(raised.value, AssertionError)
    assert _cell(raised.value) == "error"


def test_a_close_outside_the_noted_types_still_replaces_the_blocks_exception() -> None:
    """`noted` narrows the notes to the failures a close is known to raise (the producer's fatal
    KafkaException); anything else from the close is a harness defect and shows as itself."""

    def close() -> None:
        raise RuntimeError("closed twice")

    with pytest.raises(RuntimeError, match="closed twice"), closed_on_exit(close, "the producer", noted=(KeyError,)):
        raise WaitTimeout("the scene's")


def test_close_all_closes_everything_and_raises_the_first_failure_with_the_later_ones_as_notes() -> None:
    closes = Closes("the processors", "the generator")
    with pytest.raises(WorkerHung, match="the processors did not stop") as raised:
        close_all(closes.of("the processors"), closes.of("the copiers"), closes.of("the generator"),
                  closes.of("the progress probe"))
    assert closes.called == ["the processors", "the copiers", "the generator", "the progress probe"]
    assert raised.value.__notes__ == ["closing the generator then raised too: the generator did not stop"]


# -- the generator: a real child that ignores its stop -------------------------------------------
def wedged_generator(tmp_path: Path) -> GeneratorProcess:
    """A GeneratorProcess around a child that says it is ready, then ignores every command."""
    received: list[Message] = []
    gen = object.__new__(GeneratorProcess)
    gen.history = GeneratorHistory("t")
    gen.worker = WorkerProcess("generator", [sys.executable, "-X", "faulthandler", "-c", IGNORES_STOP],
                               tmp_path / "generator.log", received.append).start()
    wait_until(lambda: received, 30, gen.worker.describe)
    return gen


def test_a_generator_that_will_not_stop_after_a_clean_block_is_the_harness_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(generator_process, "STOP_TIMEOUT_S", 1.0)
    gen = wedged_generator(tmp_path)
    with pytest.raises(WorkerHung, match="the generator did not stop") as hung, gen:
        pass
    assert gen.worker.hung and not gen.worker.running(), gen.worker.describe()
    assert not isinstance(hung.value, AssertionError)
    assert _cell(hung.value) == "error"


@pytest.mark.parametrize(("make", "verdict"), SCENE_EXCEPTIONS)
def test_a_scene_that_raised_keeps_its_exception_when_its_generator_will_not_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Callable[[], BaseException], verdict: str
) -> None:
    scene = make()
    monkeypatch.setattr(generator_process, "STOP_TIMEOUT_S", 1.0)
    gen = wedged_generator(tmp_path)
    with pytest.raises(type(scene)) as raised, gen:
        raise scene
    assert raised.value is scene and _cell(raised.value) == verdict
    (note,) = raised.value.__notes__
    assert note.startswith("closing the generator then raised too: the generator did not stop"), note
    assert not gen.worker.running(), gen.worker.describe()


# -- the pipeline ---------------------------------------------------------------------------------
class Part:
    """A pipeline's client: `stop()`/`close()` call `closes(name)`."""

    def __init__(self, name: str, closes: Closes) -> None:
        self.name, self.closes = name, closes
        self.history = GeneratorHistory("t")

    def stop(self) -> None:
        self.closes(self.name)

    close = stop


def pipeline_of(closes: Closes) -> Pipeline:
    pipeline = object.__new__(Pipeline)
    pipeline.processors = Part("the processors", closes)  # type: ignore[assignment]
    pipeline.copiers = None
    pipeline.generator = Part("the generator", closes)  # type: ignore[assignment]
    pipeline.probe = Part("the progress probe", closes)  # type: ignore[assignment]
    return pipeline


def test_a_pipeline_stops_every_client_and_raises_the_first_failure() -> None:
    closes = Closes("the processors", "the generator")
    with pytest.raises(WorkerHung, match="the processors did not stop") as raised:
        pipeline_of(closes).stop()
    assert closes.called == ["the processors", "the generator", "the progress probe"]
    assert raised.value.__notes__ == ["closing the generator then raised too: the generator did not stop"]


def test_a_pipeline_whose_processors_do_not_start_stops_its_generator_and_keeps_the_refusal() -> None:
    closes = Closes("the generator")
    pipeline = pipeline_of(closes)
    pipeline.processors = None

    def start() -> Pipeline:
        raise TargetRefused("InitProducerId of a processor: TRANSACTIONAL_ID_AUTHORIZATION_FAILED")

    pipeline.start = start  # type: ignore[method-assign]
    with pytest.raises(TargetRefused) as refused, pipeline:
        pytest.fail("the block runs only once the pipeline started")
    assert closes.called == ["the generator", "the progress probe"]
    assert refused.value.__notes__ == ["closing the pipeline then raised too: the generator did not stop"]


@pytest.mark.parametrize(("make", "verdict"), SCENE_EXCEPTIONS)
def test_a_pipeline_scene_that_raised_keeps_its_exception_when_stopping_fails(
    make: Callable[[], BaseException], verdict: str
) -> None:
    scene = make()
    closes = Closes("the generator")
    pipeline = pipeline_of(closes)
    pipeline.start = lambda: pipeline  # type: ignore[method-assign]
    with pytest.raises(type(scene)) as raised, pipeline:
        raise scene
    assert raised.value is scene and _cell(raised.value) == verdict
    assert raised.value.__notes__ == ["closing the pipeline then raised too: the generator did not stop"]


# -- drive: the writer thread's failure keeps its type ----------------------------------------------
class NoFaults:
    def __init__(self, *_args: object, **_kwargs: object) -> None:
        self.done: list[object] = []
        self.steps: list[object] = []
        self.halt = threading.Event()

    def run(self) -> None:
        pass


class FailingGenerator:
    def __init__(self, failure: BaseException) -> None:
        self.failure = failure
        self.next_id = 0
        self.halted = False

    def write(self, n: int, rate: float | None = None) -> None:
        raise self.failure

    def halt(self) -> None:
        self.halted = True


class DrivenPipeline:
    def __init__(self, failure: BaseException) -> None:
        self.cluster = None
        self.spec = type("Spec", (), {"partitions": 3})()
        self.input_topic, self.outputs = "in", ["out"]
        self.generator = FailingGenerator(failure)
        self.history = type("History", (), {"events": EventLog()})()

    def check_processors(self) -> None:
        pass

    def describe(self) -> str:
        return "generator last committed offsets {}"


@pytest.mark.parametrize(("make", "verdict"), SCENE_EXCEPTIONS)
def test_drive_raises_the_workloads_failure_as_it_is(
    monkeypatch: pytest.MonkeyPatch, make: Callable[[], BaseException], verdict: str
) -> None:
    """A write that timed out stays an ERROR and a refusal a refusal: wrapped in an AssertionError,
    both read as the target's FAIL."""
    scene = make()
    monkeypatch.setattr(drive_module, "FaultSchedule", NoFaults)
    with pytest.raises(type(scene)) as raised:
        drive_module.drive(DrivenPipeline(scene), records=10, rate=100.0, deadline=30.0)  # type: ignore[arg-type]
    assert raised.value is scene and _cell(raised.value) == verdict
    assert any(n.startswith("the workload failed with it; nemesis did []") for n in raised.value.__notes__)


def _cell(exc: BaseException) -> str:
    """The matrix cell a check's body raising `exc` ends in (a refusal becomes a skip in the plugin)."""
    if isinstance(exc, TargetRefused):
        return "target-refused"
    return verdicts.classify("failed", None, type(exc))



class BrokenInstances:
    """A supervisor's instance list that fails as it is walked: a bug of the supervisor itself."""

    def __iter__(self) -> BrokenInstances:
        raise RuntimeError("supervisor bug")


def test_a_processor_supervisor_that_failed_is_the_harness_error() -> None:
    """The supervisor thread itself failing (not a processor or its client) is the harness's trouble:
    an ERROR of the check, never its FAIL."""
    from harness.errors import KctsError
    from harness.workload.processor_group import ProcessorGroup, ProcessorHistory

    group = ProcessorGroup.__new__(ProcessorGroup)
    group.instances = BrokenInstances()  # type: ignore[assignment]
    group._halt = threading.Event()
    group.error, group.harness_fault, group.refused = None, False, None
    group.history = ProcessorHistory()
    with pytest.raises(RuntimeError):
        group._supervise()  # its finally walks the instances again, and that raises out of it
    assert group.error is not None and group.harness_fault
    with pytest.raises(KctsError, match="the processor supervisor failed") as info:
        group.check()
    assert _cell(info.value) == "error"
