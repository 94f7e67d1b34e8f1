"""Record-integrity situations: transactional pipelines under faults, and damage done to a finished one.

- `clean_faults`: a generator writes keyed, checksummed records into a 3-partition input; two
  instances of one exactly-once processor copy them into two outputs; meanwhile the nemesis
  crashes the leader of an output partition, bounces the leader of an input partition and pauses
  the leader of another output partition, healing each in turn.
- `unclean_pipeline`: the confluent-kafka pipeline into two outputs, one of which loses records in
  a forced unclean election between its second and third batch.
- `finished_pipeline`, `copy_into_output`, `delete_output_head`: a small fault-free pipeline, then
  a record copied byte for byte into one output, or the first records of one output deleted.

Each returns what the checker (harness.integrity, run by the integrity fixtures) is told: the
pipeline, its truncation windows or the narrowed expectation, and the report's metadata; and what
the scenario itself did (the nemesis steps, the election, the damage). The checker's findings are
judged by the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import NewTopic

from harness import attach, confluent
from harness.clients.produce_read import produce, read_partition
from harness.cluster.base import Cluster
from harness.errors import NotSupported, TargetRefused
from harness.histories.observations import TimelineEvent
from harness.integrity.model import Expectation, Findings, ReportMeta, TruncationWindow
from harness.integrity.run import expectation
from harness.nemesis.unclean import UncleanElection, force_unclean_election
from harness.process.events import EventLog
from harness.scenarios.premises import require_transactions
from harness.waiting import Owed, wait_until
from harness.workload.drive import drive
from harness.workload.pipeline import Pipeline, PipelineSpec, ProcessorKind
from harness.workload.schedule import FaultStep

__all__ = [
    "CleanFaults", "CopiedRecord", "CopyMeta", "Damage", "DeletedHead", "ElectionMeta", "FaultsMeta",
    "FinishedPipeline", "ProcessorKind", "UncleanPipeline", "clean_faults", "copy_into_output", "cut_off_pipeline",
    "delete_output_head", "finished_pipeline", "require_clean", "require_deleted_head", "unclean_pipeline",
]

RECORDS = 2000  # the generator writes at least this many, and keeps going until the nemesis is done
RATE = 200.0  # records/s: about 10 s of input, so that every fault lands mid-pipeline


@dataclass(frozen=True)
class FaultsMeta(ReportMeta):
    """The report's account of a scene under scheduled faults: the nemesis's injection events."""

    faults: list[TimelineEvent]


@dataclass(frozen=True)
class ElectionMeta(ReportMeta):
    """The report's account of a scene with a forced unclean election: the election, as its repr."""

    election: str


@dataclass(frozen=True)
class CopyMeta(ReportMeta):
    """The report's account of a record copied into an output: its offset and the copy's."""

    copied_offset: int
    copy_offset: int


@dataclass(frozen=True)
class CleanFaults:
    """A finished pipeline run under the clean-fault schedule; `done` the steps the nemesis completed,
    `faults` its injection events, `generator_done` the generator's "done" events."""

    pipeline: Pipeline
    input_topic: str
    outputs: list[str]
    done: list[FaultStep]
    faults: list[TimelineEvent]
    generator_done: list[TimelineEvent]
    windows: tuple[TruncationWindow, ...] = ()

    @property
    def meta(self) -> FaultsMeta:
        return FaultsMeta("clean faults", self.faults)


def clean_faults(
    cluster: Cluster, input_topic: str, outputs: list[str], group: str, processor: ProcessorKind
) -> CleanFaults:
    """Run the pipeline (`processor`, two instances) from `input_topic` into `outputs` (3 partitions each)
    while the nemesis crashes the leader of outputs[0]-0, bounces that of input-1 and pauses that of
    outputs[1]-2; return once every group is past the last committed input record."""
    return _scheduled_pipeline(cluster, input_topic, outputs, group, processor, ("crash", "bounce", "pause"))


def cut_off_pipeline(
    cluster: Cluster, input_topic: str, outputs: list[str], group: str, processor: ProcessorKind
) -> CleanFaults:
    """`clean_faults`, with links cut instead of processes stopped: the leader of outputs[0]-0, then
    that of input-1, then that of outputs[1]-2 is cut off from the controller and every other broker
    (clients still reach it) until another broker leads, then reconnected."""
    return _scheduled_pipeline(cluster, input_topic, outputs, group, processor, ("cut-off",) * 3)


def _scheduled_pipeline(
    cluster: Cluster, input_topic: str, outputs: list[str], group: str, processor: ProcessorKind,
    faults: tuple[str, str, str],
) -> CleanFaults:
    """The pipeline with `faults` (keys of harness.workload.schedule.FAULTS) fired in turn at the
    leaders of outputs[0]-0, input-1 and outputs[1]-2, at 15 %, 40 % and 65 % of the input.

    Each fault must move the partition's leader to another broker (the nemesis waits for that): on a
    target with one log per partition and no way of its own to move a leader (Tansu: every broker
    names itself leader at epoch 0) there is no such move, so the scene is "not supported" with the
    target's own account, decided from its capabilities before anything runs."""
    caps = cluster.capabilities
    if caps.leader_moves is None and caps.replication is False:
        raise NotSupported("a broker fault that moves a partition's leader to another broker", caps.no_replication)
    require_transactions(cluster)
    steps = [FaultStep(0.15, faults[0], outputs[0], 0), FaultStep(0.4, faults[1], input_topic, 1),
             FaultStep(0.65, faults[2], outputs[1], 2)]
    with Pipeline(cluster, input_topic, outputs, group, PipelineSpec(processor=processor)) as pipeline:
        schedule = drive(pipeline, RECORDS, RATE, steps)
    return CleanFaults(
        pipeline, input_topic, list(outputs), list(schedule.done), [TimelineEvent.of(e) for e in schedule.injected()],
        [TimelineEvent.of(e) for e in pipeline.history.events.of("done")],
    )


@dataclass(frozen=True)
class UncleanPipeline:
    """A finished pipeline whose `victim` output lost records in `election`; `truncated` the ids of
    committed writes that landed in the truncation window before the election."""

    pipeline: Pipeline
    victim: str
    election: UncleanElection
    window: TruncationWindow
    truncated: list[int]

    @property
    def windows(self) -> tuple[TruncationWindow, ...]:
        return (self.window,)

    @property
    def meta(self) -> ElectionMeta:
        return ElectionMeta("unclean election", repr(self.election))


def unclean_pipeline(cluster: Cluster, victim: str, input_topic: str, other: str, group: str) -> UncleanPipeline:
    """Create `victim` (3 partitions, RF 2, min.insync.replicas 1, unclean election enabled, only
    partition 0 on brokers the recipe stops), run the confluent-kafka pipeline from `input_topic`
    into `victim` and `other`: a first batch processed; the unclean-election recipe on victim-0
    with a second batch processed while its ISR is the leader alone; a third batch; finished."""
    require_transactions(cluster)
    a, b, c = cluster.broker_ids[:3]
    # Only partition 0 has both replicas on brokers the recipe stops; the others keep a live leader (c).
    with confluent.admin(cluster.client_config()) as admin:
        confluent.admin_result(admin, admin.create_topics([NewTopic(
            victim, num_partitions=3, replication_factor=-1, replica_assignment=[[a, b], [c, a], [c, b]],
            config={"min.insync.replicas": "1", "unclean.leader.election.enable": "true"},
        )])[victim], 30)
    for p in range(3):
        cluster.state.wait_for_partition(victim, p, lambda s: len(s.isr) == 2, "both replicas in sync")
    # What the nemesis did and when, for the report: the election is this pipeline's only fault.
    timeline = EventLog()
    with Pipeline(cluster, input_topic, [victim, other], group, PipelineSpec()) as pipeline:
        try:
            pipeline.generator.write(600)
            # The pipeline's processors are the harness's own clients: one that falls behind is its
            # trouble (a target that keeps no transactional offsets is told apart in Pipeline.finish).
            wait_until(pipeline.caught_up, 60, pipeline.describe, owed=Owed.HARNESS)
            timeline.add("pipeline", "first batch processed", records=600)

            def second_batch() -> None:
                timeline.add("nemesis", "old leader alone in the ISR; second batch written to it", records=400)
                pipeline.generator.write(400)
                wait_until(pipeline.caught_up, 60, pipeline.describe, owed=Owed.HARNESS)

            timeline.add("nemesis", "unclean election begins", topic=victim, partition=0)
            election = force_unclean_election(cluster, victim, 0, write_divergent=second_batch)
            timeline.add("nemesis", "unclean election done", old_leader=election.old_leader,
                         new_leader=election.new_leader, epoch=f"{election.epoch_before}->{election.epoch_after}",
                         truncated=f"[{election.truncated.start},{election.truncated.stop})")
            before_third = len(pipeline.history.writes)
            pipeline.generator.write(400)
            pipeline.finish()
            timeline.add("pipeline", "third batch processed; pipeline finished", records=400)
        finally:
            attach.timeline("nemesis timeline (seconds since the pipeline started)", timeline.events)
    window = TruncationWindow(victim, 0, election.truncated.start, election.truncated.stop)
    # The third batch reuses the truncated offsets on the new leader: only earlier writes were lost.
    truncated = sorted(
        {w[0] for w in pipeline.history.writes.rows()[:before_third] if (w[1], w[2], w[3]) in window}
    )
    return UncleanPipeline(pipeline, victim, election, window, truncated)


@dataclass(frozen=True)
class FinishedPipeline:
    """A small fault-free pipeline into two outputs, finished."""

    pipeline: Pipeline
    windows: tuple[TruncationWindow, ...] = ()

    @property
    def meta(self) -> ReportMeta:
        return ReportMeta("fault-free pipeline")


def finished_pipeline(cluster: Cluster, input_topic: str, outputs: list[str], group: str) -> FinishedPipeline:
    """One confluent-kafka processor copies 500 generated records from `input_topic` into `outputs`.

    The generator writes them in transactions of 50 and aborts its sixth: with the default 100,
    500 records are five transactions and the tail the sixth, which is never aborted, so the input
    held no aborted record and "no aborted record visible" would have been vacuous."""
    require_transactions(cluster)
    spec = PipelineSpec(instances=1, generator_txn=50, generator_aborts_every=6)
    with Pipeline(cluster, input_topic, outputs, group, spec) as pipeline:
        pipeline.generator.write(500)
        pipeline.finish()
    return FinishedPipeline(pipeline)


@dataclass(frozen=True)
class Damage:
    """What was done to one output of a finished pipeline, and what the checker is told of it:
    `expect` narrowed to that output (with its truncation windows), and the report's `meta`. The
    checker reads the processors' write log of `pipeline`."""

    pipeline: Pipeline
    output: str
    expect: Expectation
    meta: ReportMeta


@dataclass(frozen=True)
class CopiedRecord(Damage):
    """The first committed record of output-0, at `original_offset`, appended again at `copy_offset`."""

    original_offset: int
    copy_offset: int


@dataclass(frozen=True)
class DeletedHead(Damage):
    """Output-0's records before `cut` deleted (the ids in `deleted`); `window`, on another partition,
    the only truncation window reported."""

    cut: int
    deleted: set[int]
    window: TruncationWindow


def require_clean(findings: Findings, report: str) -> None:
    """The checker found nothing in a finished pipeline before any damage was done to it.

    A can-fail check asserts that the damage it does is all the checker reports; on a target whose
    fault-free pipeline already shows anomalies (Tansu's read_committed shows aborted records), the
    damage cannot be told from them: a premise of the target's, with the findings as evidence.
    The target itself is judged on them by test_fault_free_pipeline_keeps_every_record_exactly_once."""
    if not findings.ok:
        raise TargetRefused(
            "a can-fail check damages a clean output, and the fault-free pipeline on this target shows "
            f"{dict(sorted((k.value, n) for k, n in findings.failures.items()))} before any damage:\n"
            f"{findings.describe_failures()}\nfull report: {report}"
        )


def _watermarks(cluster: Cluster, topic: str, partition: int) -> tuple[int, int]:
    """(log start, high watermark) of one partition, as ListOffsets answers them."""
    with confluent.consumer({**cluster.client_config(), "group.id": f"{topic}-watermarks"}) as consumer:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
    return int(low), int(high)


def require_deleted_head(topic: str, cut: int, before: tuple[int, int], after: tuple[int, int]) -> None:
    """The damage happened as asked: the partition now starts at `cut` and still ends where it did.

    A DeleteRecords answered without error that left other records gone (or none) is not the damage
    the checker is judged on, so the check cannot say whether the checker found it: a refused
    premise, with both ListOffsets answers as evidence (KIP-107: the records before the offset are
    deleted, the log start offset becomes that offset)."""
    if after != (cut, before[1]):
        raise TargetRefused(
            f"DeleteRecords of {topic}-0 before offset {cut} answered without error, but the partition went from "
            f"log start {before[0]}, high watermark {before[1]} to log start {after[0]}, high watermark "
            f"{after[1]}; KIP-107 leaves it at log start {cut}, high watermark {before[1]}"
        )


def _only_output(pipeline: Pipeline, output: str, windows: tuple[TruncationWindow, ...] = ()) -> Expectation:
    full = expectation(pipeline, windows)
    return Expectation(full.inputs, (output,), full.ranges, windows)


def copy_into_output(cluster: Cluster, finished: FinishedPipeline, group: str, output_index: int = 0) -> CopiedRecord:
    """Read the first committed record of the output's partition 0 (read_committed, as `group`), and
    append a byte-for-byte copy to that partition with a plain (non-transactional) producer."""
    pipeline = finished.pipeline
    out = pipeline.outputs[output_index]
    first = min(w[3] for w in pipeline.history.writes.rows() if w[1] == out and w[2] == 0)
    with confluent.consumer({**cluster.client_config(), "group.id": group, "isolation.level": "read_committed",
                         "enable.partition.eof": True}) as consumer:
        (original,) = read_partition(consumer, out, 0, first, first + 1)
    with confluent.producer(cluster.client_config()) as producer:
        history = produce(producer, out, [original.value], partition=0)
    (copy,) = history.acked
    meta = CopyMeta("one record copied into an output", original.offset, copy.offset)
    return CopiedRecord(pipeline, out, _only_output(pipeline, out), meta, original.offset, copy.offset)


def delete_output_head(cluster: Cluster, finished: FinishedPipeline, output_index: int = 1) -> DeletedHead:
    """Delete (DeleteRecords) the records of the output's partition 0 before its 6th committed write,
    and report a truncation window on another partition only."""
    pipeline = finished.pipeline
    out = pipeline.outputs[output_index]
    writes = sorted(w for w in pipeline.history.writes.rows() if w[1] == out and w[2] == 0)
    cut = sorted(w[3] for w in writes)[5]
    deleted = {w[0] for w in writes if w[3] < cut}
    before = _watermarks(cluster, out, 0)
    head = TopicPartition(out, 0, cut)
    with confluent.admin(cluster.client_config()) as admin:
        try:
            confluent.delete_records(admin, head)
        except (KafkaException, TimeoutError) as exc:
            # Tansu's memory engine panics on DeleteRecords (a todo!()): no answer to any attempt.
            raise TargetRefused(
                f"the damage the check needs is a DeleteRecords of {out}-0 before offset {cut} (KIP-107), "
                f"and the target did not do it: {type(exc).__name__}: {exc}"
            ) from None
    require_deleted_head(out, cut, before, _watermarks(cluster, out, 0))
    elsewhere = TruncationWindow(out, 1, 0, 1_000_000)
    meta = ReportMeta(f"records before offset {cut} of {out}-0 deleted")
    return DeletedHead(pipeline, out, _only_output(pipeline, out, (elsewhere,)), meta, cut, deleted, elsewhere)
