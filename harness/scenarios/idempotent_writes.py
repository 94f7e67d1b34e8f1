"""The idempotent pipeline: keyed, checksummed records from an idempotent producer, under leader moves.

The generator (harness.workload.generator, `transactional=False`) writes records into a 3-partition
topic at a steady rate through one idempotent producer (enable.idempotence, acks=all), no
transaction. Meanwhile the leader of each partition in turn is moved to another broker (the
target's own way, or reassignment and a preferred election: harness.nemesis.leadership), at 25 %,
50 % and 75 % of the records, and the writes go on until the last move is done. Where the target
cannot move a leader (one broker, or one log per partition and no way of its own to move it) the
scene runs fault-free and says why.

It returns what the checker is told (the topic as the only input, the acknowledged ids as the
committed ones, the others as unknown; the write log) and what the scene did (the moves, the
producer's epoch bumps). It needs no transaction, so it judges targets that have none.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from confluent_kafka import TopicPartition

from harness import confluent, progress
from harness.cluster.base import Cluster
from harness.confluent import LIBRDKAFKA_VERSION
from harness.errors import WorkerHung
from harness.histories.observations import TimelineEvent
from harness.integrity.model import Expectation, ReportMeta
from harness.nemesis.leadership import move_leader_away
from harness.scenarios.kip359 import EPOCH_BUMP
from harness.waiting import Owed, wait_until
from harness.workload.generator import GeneratorSpec
from harness.workload.generator_process import GeneratorProcess
from harness.workload.write_log import TxnOutcome, WriteLog, merge_ranges

__all__ = ["IdempotentMeta", "IdempotentWrites", "MidStreamMove", "PartitionEnd", "idempotent_writes",
           "partition_ends", "why_no_leader_moves"]

PARTITIONS = 3
RECORDS = 3000
RATE = 300.0  # records/s: about 10 s of writes, so that every move lands mid-stream
MOVES_AT = (0.25, 0.5, 0.75)  # fraction of the records handed to the producer when each move starts
CHUNK = 100  # records per write command: the writer checks between two whether the moves are done


@dataclass(frozen=True)
class MidStreamMove:
    """One leader move the scene made: partition, leader and epoch before and after, and the ids
    handed to the producer when it began."""

    partition: int
    before: tuple[int, int]  # (leader, epoch)
    after: tuple[int, int]
    at_id: int

    def __str__(self) -> str:
        return (f"partition {self.partition}: leader {self.before[0]}@{self.before[1]} -> "
                f"{self.after[0]}@{self.after[1]} at id {self.at_id}")


@dataclass(frozen=True)
class PartitionEnd:
    """Where one partition ends: ListOffsets LATEST (`listed`) and the offset after its last
    acknowledged write (`acknowledged`); the checker reads up to the higher of the two."""

    partition: int
    listed: int
    acknowledged: int

    def __str__(self) -> str:
        return (f"partition {self.partition}: ListOffsets LATEST {self.listed}, below the offset after its last "
                f"acknowledged write, {self.acknowledged}")


@dataclass(frozen=True)
class IdempotentMeta(ReportMeta):
    """The report's account of the idempotent scene: the leader moves (or why none), how many ids were
    acknowledged and not, the producer's first epoch bumps and last events, and the partitions whose
    ListOffsets LATEST answered short of the last acknowledged write."""

    leader_moves: list[str]
    no_leader_moves: str | None
    acknowledged: int
    unacknowledged: int
    epoch_bumps: list[str]
    producer_events: list[TimelineEvent]
    log_end_listed_short: list[str]


@dataclass(frozen=True)
class IdempotentWrites:
    """A finished idempotent pipeline: `expect` and `writes` for the checker; the `moves` made (none
    where `no_moves` says why); `epoch_bumps`, the producer's log lines of epoch bumps."""

    topic: str
    client_config: dict[str, str]  # how the checker reaches the target
    expect: Expectation
    writes: WriteLog
    moves: tuple[MidStreamMove, ...]
    no_moves: str | None
    epoch_bumps: tuple[str, ...]
    events: tuple[TimelineEvent, ...]  # the generator's
    ends: tuple[PartitionEnd, ...]
    library: str = LIBRDKAFKA_VERSION  # the producer's librdkafka

    @property
    def read_to(self) -> dict[str, dict[int, int]]:
        """Per partition, the offset the checker's read must reach: the end of what was acknowledged."""
        return {self.topic: {e.partition: e.acknowledged for e in self.ends}}

    @property
    def acknowledged(self) -> int:
        return self.expect.expected_per_topic

    @property
    def unacknowledged(self) -> int:
        return sum(len(r) for r in self.expect.of(TxnOutcome.UNKNOWN))

    @property
    def meta(self) -> IdempotentMeta:
        return IdempotentMeta(
            "idempotent producer under leader moves" if self.moves else "idempotent producer, fault-free",
            [str(m) for m in self.moves], self.no_moves, self.acknowledged, self.unacknowledged,
            list(self.epoch_bumps[:5]), list(self.events[-10:]),
            # Not this check's promise (the KIP-320 ListOffsets checks judge it), but why the read
            # goes past the log end the target names.
            [str(e) for e in self.ends if e.listed < e.acknowledged],
        )


def why_no_leader_moves(cluster: Cluster) -> str | None:
    """Why no leader of this target can be moved, from its capabilities before anything runs; None
    where it can (a failed move is then the target's refusal, as in any leader-moves scene)."""
    caps = cluster.capabilities
    if caps.leader_moves is None and caps.replication is False:
        return f"one log per partition and no way of its own to move a leader: {caps.no_replication}"
    if len(cluster.broker_ids) < 2:
        return f"{cluster.target.label} runs {len(cluster.broker_ids)} broker, so no leader can move to another"
    return None


def idempotent_writes(cluster: Cluster, topic: str, records: int = RECORDS, rate: float = RATE) -> IdempotentWrites:
    """Write at least `records` keyed records into `topic` (PARTITIONS partitions) through one
    idempotent producer at `rate`, moving the leader of partition 0, 1, 2 at MOVES_AT of the records
    where the target allows it, and writing on until the last move is done (so every move lands on
    a moving stream); return once every record has an outcome."""
    no_moves = why_no_leader_moves(cluster)
    generator = GeneratorProcess(GeneratorSpec(
        cluster.client_config(), topic, PARTITIONS, keys=30, txn_size=50, abort_every=0, transactional=False,
    ))
    moves: list[MidStreamMove] = []
    moved = threading.Event()
    failure: list[BaseException] = []

    def write() -> None:
        try:
            while not generator.halted and not (moved.is_set() and generator.next_id >= records):
                generator.write(CHUNK, rate)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the scene's thread below
            failure.append(exc)

    # Closed on the way out; a close that fails there is a note of the scene's own exception, which
    # is the finding (the generator of a scene that already timed out is stopped hard).
    with generator:
        writer = threading.Thread(target=write, name="idempotent-generator", daemon=True)
        writer.start()
        try:
            for partition, at in enumerate(MOVES_AT if no_moves is None else ()):
                # The generator's own pace (the target's refusal of a write ends it as `failure`).
                wait_until(lambda at=at: failure or generator.next_id >= at * records, records / rate * 4 + 60,
                           lambda: f"{generator.next_id} of {records} records handed over", owed=Owed.HARNESS)
                if failure:
                    break
                at_id = generator.next_id
                before, after = move_leader_away(cluster, topic, partition)
                moves.append(MidStreamMove(partition, (before.leader, before.leader_epoch),
                                        (after.leader, after.leader_epoch), at_id))
                progress.step(f"idempotent pipeline: {moves[-1]}")
        except BaseException:
            generator.halt()  # a move failed: the writes end at their next batch, and its failure is raised
            raise
        finally:
            moved.set()
            writer.join(records / rate * 4 + 180)
        if failure:
            raise failure[0]
        if writer.is_alive():
            raise WorkerHung(f"the idempotent generator did not finish: {generator.worker.describe()}")
    history = generator.history
    expect = Expectation((topic,), (), tuple(merge_ranges(history.ranges)))
    log = generator.worker.log_path
    bumps = tuple(line.strip()[:400] for line in log.read_text(errors="replace").splitlines()
                  if any(m in line for m in EPOCH_BUMP)) if log.exists() else ()
    return IdempotentWrites(topic, cluster.client_config(), expect, history.writes, tuple(moves), no_moves, bumps,
                            tuple(TimelineEvent.of(e) for e in history.events.events),
                            partition_ends(cluster, topic, history.writes))


def partition_ends(cluster: Cluster, topic: str, writes: WriteLog) -> tuple[PartitionEnd, ...]:
    """ListOffsets LATEST of every partition beside the offset after its last acknowledged write."""
    acknowledged = [0] * PARTITIONS
    for _, _, partition, offset in writes.rows():
        acknowledged[partition] = max(acknowledged[partition], offset + 1)
    with confluent.consumer({**cluster.client_config(), "group.id": f"{topic}-ends"}) as consumer:
        listed = [consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(PARTITIONS)]
    return tuple(PartitionEnd(p, int(listed[p]), acknowledged[p]) for p in range(PARTITIONS))
