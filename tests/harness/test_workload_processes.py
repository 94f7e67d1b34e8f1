"""Workload clients run in processes of their own: a client that crashes ends its process, not pytest."""

from __future__ import annotations

import os
import signal
import sys
import uuid
from pathlib import Path

import pytest

from fixtures.topics import TopicFactory
from harness.cluster.base import Cluster
from harness.process.events import Message
from harness.process.worker import WorkerProcess
from harness.waiting import wait_until
from harness.workload.generator import GeneratorSpec
from harness.workload.generator_process import GeneratorDied, GeneratorProcess
from harness.workload.pipeline import Pipeline, PipelineSpec

CRASHES = """
import os, signal
print('{"event": "ready"}', flush=True)
os.kill(os.getpid(), signal.SIGSEGV)
"""

IGNORES_STOP = """
import faulthandler, signal, sys, time
faulthandler.register(signal.SIGUSR1, all_threads=True)
print('{"event": "ready"}', flush=True)
def wedged():
    while True:
        time.sleep(0.1)
wedged()
"""


def child(tmp_path: Path, code: str, received: list[Message]) -> WorkerProcess:
    return WorkerProcess("child", [sys.executable, "-X", "faulthandler", "-c", code], tmp_path / "child.log",
                         received.append)


def test_a_child_killed_by_a_signal_is_named_and_its_fault_dump_kept(tmp_path: Path) -> None:
    received: list[Message] = []
    worker = child(tmp_path, CRASHES, received).start()
    worker.proc.wait(30)  # type: ignore[union-attr]
    worker.drain()
    assert received == [{"event": "ready"}]
    assert "killed by SIGSEGV" in worker.describe(), worker.describe()
    assert any("Segmentation fault" in line for line in worker.tail()), worker.tail()


def test_a_child_that_will_not_stop_has_its_threads_dumped_then_is_killed(tmp_path: Path) -> None:
    received: list[Message] = []
    worker = child(tmp_path, IGNORES_STOP, received).start()
    wait_until(lambda: received, 30, lambda: worker.describe())
    code = worker.stop(timeout=1.0)
    assert worker.hung and code == -signal.SIGKILL, worker.describe()
    assert any("in wedged" in line for line in worker.tail(40)), worker.tail(40)


@pytest.mark.live
def test_a_processor_whose_client_crashes_is_replaced_and_the_pipeline_finishes(
    cluster: Cluster, topic_factory: TopicFactory
) -> None:
    """SIGSEGV in one processor's process: the pytest process lives on, the instance is started
    again with its transactional id, and the group processes every input record."""
    inp = topic_factory(partitions=3, replication_factor=3)
    outs = [topic_factory(partitions=3, replication_factor=3)]
    with Pipeline(cluster, inp, outs, f"kcts-crash-{uuid.uuid4().hex[:6]}", PipelineSpec(instances=2)) as pipeline:
        pipeline.generator.write(300)
        wait_until(lambda: pipeline.history.committed_txns > 0, 60, pipeline.describe)
        assert pipeline.processors is not None
        victim = pipeline.processors.instances[0]
        os.kill(victim.worker.proc.pid, signal.SIGSEGV)  # type: ignore[union-attr]
        wait_until(lambda: pipeline.history.events.of("restarted"), 30, pipeline.describe)
        pipeline.generator.write(300)
        pipeline.finish()
    (crash,) = pipeline.history.events.of("client-crashed")
    assert crash["who"] == victim.name and crash["exit"] == "killed by SIGSEGV", crash
    assert any("Segmentation fault" in line for line in crash["stderr"]), crash  # type: ignore[union-attr]
    assert pipeline.summary()["processor_client_crashes"] == 1


@pytest.mark.live
def test_a_generator_crash_fails_its_write_naming_the_signal(cluster: Cluster, topic_factory: TopicFactory) -> None:
    topic = topic_factory(partitions=1, replication_factor=3)
    with GeneratorProcess(GeneratorSpec(cluster.client_config(), topic, 1, keys=4, txn_size=10)) as generator:
        generator.write(20)
        # The premise is a working generator. On a loaded machine a transaction may fail and be
        # aborted (the generator's documented answer to a failed transaction): that is not the subject.
        outcomes = [r.outcome.value for r in generator.history.ranges]
        assert "committed" in outcomes and set(outcomes) <= {"committed", "aborted"}, outcomes
        os.kill(generator.worker.proc.pid, signal.SIGSEGV)  # type: ignore[union-attr]
        with pytest.raises(GeneratorDied, match="killed by SIGSEGV"):
            generator.write(20)
