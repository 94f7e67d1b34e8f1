"""One transactional pipeline: generator -> processors (a group) -> several output topics.

Every client runs in a process of its own (the generator, each processor instance): a client that
crashes ends its process, not the test run. `Pipeline` wires the pieces and waits on broker state:
done means every group has committed past the generator's last committed record on every input
partition, and no output partition has an open transaction (last stable offset == high watermark).

`with Pipeline(...) as pipeline:` starts the processors and stops every client on the way out; a stop
that fails there is a note of the block's exception, never its replacement (harness.closing).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import TracebackType

from harness import progress
from harness.clients.jvm import java_reaches
from harness.closing import close_after, close_all
from harness.cluster.base import Cluster
from harness.errors import TargetRefused
from harness.kafka.dist import resolve
from harness.waiting import Owed, WaitTimeout, wait_until
from harness.workload.copier import CopierGroup
from harness.workload.generator import GeneratorSpec
from harness.workload.generator_process import GeneratorProcess
from harness.workload.pipeline_probe import ProgressProbe
from harness.workload.processor_group import ProcessorGroup, ProcessorHistory
from harness.workload.write_log import merge_ranges


class ProcessorKind(StrEnum):
    CONFLUENT = "confluent"  # confluent-kafka (librdkafka), harness.workload.processor
    JAVA = "java"  # kafka-tools TransactionalMessageCopier on the target's Java clients (--java-clients)


@dataclass(frozen=True)
class PipelineSpec:
    processor: ProcessorKind = ProcessorKind.CONFLUENT
    partitions: int = 3
    instances: int = 2
    keys: int = 30
    generator_txn: int = 100
    generator_aborts_every: int = 6
    processor_batch: int = 100
    processor_aborts_every: int = 5
    processor_pace: float = 0.0


class Pipeline:
    def __init__(
        self, cluster: Cluster, input_topic: str, outputs: list[str], group: str,
        spec: PipelineSpec | None = None, log_writes: bool = True,
    ) -> None:
        self.cluster = cluster
        self.probe = ProgressProbe(cluster)
        self.input_topic = input_topic
        self.outputs = outputs
        self.spec = spec or PipelineSpec()
        self.group = group
        self.generator = GeneratorProcess(GeneratorSpec(
            cluster.client_config(), input_topic, self.spec.partitions, keys=self.spec.keys,
            txn_size=self.spec.generator_txn, abort_every=self.spec.generator_aborts_every,
            transactional_id=f"{group}-generator", log_writes=log_writes,
        ))
        self.history = ProcessorHistory()
        self.processors: ProcessorGroup | None = None
        self.copiers: CopierGroup | None = None

    # -- processors ------------------------------------------------------------------------
    @property
    def groups(self) -> list[str]:
        return self.copiers.groups if self.copiers is not None else [self.group]

    def __enter__(self) -> Pipeline:
        """Start the processors; where they do not start, stop every client before raising."""
        try:
            return self.start()
        except BaseException as exc:
            close_after(exc, self.stop, "the pipeline")
            raise

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        close_after(exc, self.stop, "the pipeline")

    def start(self) -> Pipeline:
        """Start the processors (or the Java copiers). Kept before they start, so that `stop()` stops
        those that did start where the others did not."""
        if self.spec.processor is ProcessorKind.JAVA:
            # 'Not supported' at once where the Java client cannot talk to the target (harness.clients.jvm).
            java_reaches(self.cluster.bootstrap_servers, self.cluster.java_clients)
            self.copiers = CopierGroup(
                resolve(self.cluster.java_clients), self.cluster.bootstrap_servers, self.group, self.input_topic,
                self.outputs, instances=self.spec.instances, transaction_size=self.spec.processor_batch,
                work_left=self._work_left,
            )
            self.copiers.start()
            return self
        self.processors = ProcessorGroup(
            self.cluster.client_config(), self.group, self.input_topic, self.outputs, self.history,
            instances=self.spec.instances, abort_every=self.spec.processor_aborts_every,
            max_batch=self.spec.processor_batch, pace=self.spec.processor_pace,
        )
        self.processors.start()
        return self

    def check_processors(self) -> None:
        if self.processors is not None:
            self.processors.check()
        if self.copiers is not None:
            self.copiers.check()

    def stop(self) -> None:
        """Stop every client; all are stopped even when one of them fails to, and the first failure is
        raised with the later ones as its notes."""
        closes: list[tuple[str, Callable[[], object]]] = []
        if self.processors is not None:
            closes.append(("the processors", self.processors.stop))
        if self.copiers is not None:
            closes.append(("the copiers", self.copiers.stop))
        close_all(*closes, ("the generator", self.generator.close), ("the progress probe", self.probe.close))

    # -- progress --------------------------------------------------------------------------
    def committed_progress(self) -> dict[str, dict[int, int]]:
        return {
            g: self.probe.committed_offsets(g, self.input_topic, self.spec.partitions) for g in self.groups
        }

    def _work_left(self) -> bool:
        """Whether some group has not yet committed past the input's last stable offset."""
        try:
            lso = self.probe.end_offsets(self.input_topic, self.spec.partitions, committed=True)
            return any(
                offsets.get(p, -1) < end - 1 for offsets in self.committed_progress().values() for p, end in lso.items()
            )
        except Exception:  # noqa: BLE001 - unknown counts as work left: a spare start costs little
            return True

    def caught_up(self) -> bool:
        self.check_processors()
        last = self.generator.history.last_committed_offset
        progress_now = self.committed_progress()
        done = min((sum(1 for p, end in last.items() if offsets.get(p, -1) > end) for offsets in progress_now.values()),
                   default=0)
        progress.status(f"pipeline: {self.generator.next_id} records written; the processors are past the last "
                        f"committed input record on {done} of {len(last)} input partitions")
        for offsets in progress_now.values():
            if any(offsets.get(p, -1) <= last_offset for p, last_offset in last.items()):
                return False
        return not self.probe.open_transactions({t: self.spec.partitions for t in self.outputs})

    def finish(self, timeout: float = 120.0) -> None:
        """Write the tail, then wait until every group has processed it and no transaction is open."""
        self.generator.write_tail()
        try:
            wait_until(self.caught_up, timeout, self.describe, interval=0.25, owed=Owed.HARNESS)
        except WaitTimeout as exc:
            self._refuse_if_offsets_lost(exc)
            raise

    def _refuse_if_offsets_lost(self, timeout: WaitTimeout) -> None:
        """`TargetRefused` where the processors' transactions committed output (read_committed sees it)
        yet no group has any offset committed: the target keeps no offset committed in a transaction
        (librdkafka's mock: rd_kafka_mock_handle_TxnOffsetCommit stores nothing), so the pipeline
        cannot finish; that promise is judged by the committed-epoch checks of TxnOffsetCommit."""
        try:
            committed = self.committed_progress()
            visible = {t: self.probe.end_offsets(t, self.spec.partitions, committed=True) for t in self.outputs}
        except Exception:  # noqa: BLE001 - then the timeout says what it saw
            return
        if any(v > 0 for ends in visible.values() for v in ends.values()) and all(
                o < 0 for offsets in committed.values() for o in offsets.values()):
            raise TargetRefused(
                f"the processors' transactions committed output (read_committed end offsets {visible}) but no group "
                f"has an offset committed ({committed}): the target keeps no offset committed in a transaction "
                "(TxnOffsetCommit), so the pipeline never finishes") from timeout

    def describe(self) -> str:
        copiers = f"; copiers: {self.copiers.describe()}" if self.copiers is not None else ""
        try:
            opened = self.probe.open_transactions({t: self.spec.partitions for t in self.outputs})
            committed = self.committed_progress()
        except Exception as exc:  # noqa: BLE001 - describing must not hide the timeout it explains
            opened, committed = {"error": repr(exc)}, {}  # type: ignore[dict-item]
        return (
            f"generator last committed offsets {self.generator.history.last_committed_offset}; "
            f"group committed offsets {committed}; open transactions (partition, LSO, HW) {opened}; "
            f"processor events {self.events()[-8:]}{copiers}"
        )

    def save_client_logs(self, dest: Path) -> list[str]:
        """Copy every client's log (its stderr: client warnings, fault dumps) out of the session's
        scratch space, which is deleted at the end, into `dest`."""
        logs = [self.generator.worker.log_path]
        if self.processors is not None:
            logs += self.processors.logs()
        if self.copiers is not None:
            logs += [c.log_path for c in self.copiers.copiers]
        dest.mkdir(parents=True, exist_ok=True)
        saved = []
        for log in logs:
            if log.exists():
                shutil.copy(log, dest / log.name)
                saved.append(str(dest / log.name))
        return saved

    def events(self) -> list[dict[str, object]]:
        evs = list(self.history.events.events) + list(self.generator.history.events.events)
        if self.copiers is not None:
            evs += self.copiers.events.events
        return sorted(evs, key=lambda e: float(e["t"]))  # type: ignore[arg-type]

    def summary(self) -> dict[str, object]:
        gen = self.generator.history
        return {
            "processor": self.spec.processor.value,
            "instances": self.spec.instances,
            "input": self.input_topic,
            "outputs": self.outputs,
            "generator_ranges": [(r.first, r.end, r.outcome.value) for r in merge_ranges(gen.ranges)],
            "processor_committed_txns": self.history.committed_txns,
            "processor_deliberate_aborts": self.history.deliberate_aborts,
            "processor_error_aborts": self.history.error_aborts,
            "processor_aborted_records": self.history.aborted_records,
            "processor_client_hangs": self.history.client_hangs,
            "processor_client_crashes": self.history.client_crashes,
            "processor_crashes_on_stop": self.history.crashes_on_stop,
            "generator_crashes_on_stop": len(self.generator.history.events.of("crashed-on-stop")),
            "copier_restarts": self.copiers.restarts() if self.copiers is not None else None,
            "copier_crashes": self.copiers.crashes() if self.copiers is not None else None,
        }
