"""Hand-built histories for the checker's tests: rows as the Kafka reader would produce them."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.workload import pipeline_record
from harness.workload.write_log import IdRange, TxnOutcome

IN, OUT = "in", "out"


@dataclass
class Log:
    """Topic logs under construction: `append` gives each record the next offset of its partition."""

    rows: list[tuple[str, int, int, str]] = field(default_factory=list)
    writes: list[tuple[int, str, int, int]] = field(default_factory=list)
    _next: dict[tuple[str, int], int] = field(default_factory=dict)

    def append(self, topic: str, partition: int, value: bytes | str, skip: int = 0) -> int:
        offset = self._next.get((topic, partition), 0) + skip
        self._next[(topic, partition)] = offset + 1
        raw = value.decode() if isinstance(value, bytes) else value
        self.rows.append((topic, partition, offset, raw))
        return offset

    def write(self, topic: str, partition: int, rec: pipeline_record.PipelineRecord, logged: bool = True) -> int:
        """Append and, like a processor's delivery report, log the acknowledged offset."""
        offset = self.append(topic, partition, rec.encode())
        if logged:
            self.writes.append((rec.id, topic, partition, offset))
        return offset


def pipeline(n: int = 12, keys: int = 3, partitions: int = 2, outputs: tuple[str, ...] = (OUT,)) -> Log:
    """A correct run: ids 0..n-1 in the input, copied once to every output in the same order."""
    log = Log()
    seq = [0] * keys
    made = []
    for i in range(n):
        k = i % keys
        rec = pipeline_record.make(i, f"k{k}", seq[k])
        seq[k] += 1
        made.append((k % partitions, rec))
        log.write(IN, k % partitions, rec)
    for topic in outputs:
        for p, rec in made:
            log.write(topic, p, rec.restage("proc>0", pipeline_record.COMMIT))
    return log


def committed(n: int) -> tuple[IdRange, ...]:
    return (IdRange(0, n, TxnOutcome.COMMITTED),)
