"""Drive a pipeline: the generator writes at a steady rate while the nemesis works through its steps.

The nemesis runs in the calling thread (brokers it restarts are children of that thread, see
`schedule.py`), the generator in a worker thread. The generator keeps writing past `records` for
as long as the schedule runs, so that every fault lands on a moving pipeline; then the pipeline is
finished: every group past the last committed input record, no open transaction.
"""

from __future__ import annotations

import threading

from harness import progress
from harness.errors import WorkerHung
from harness.workload.pipeline import Pipeline
from harness.workload.schedule import FaultSchedule, FaultStep


def drive(
    pipeline: Pipeline,
    records: int,
    rate: float,
    steps: list[FaultStep] | None = None,
    deadline: float = 180.0,
    chunk: int = 100,
) -> FaultSchedule:
    """Generate at least `records` at `rate` records/s with the fault `steps` running; return the schedule."""
    watched = {t: pipeline.spec.partitions for t in [pipeline.input_topic, *pipeline.outputs]}
    schedule = FaultSchedule(
        pipeline.cluster, steps or [], lambda: pipeline.generator.next_id / records, watched, pipeline.history.events,
    )
    nemesis_done = threading.Event()
    failure: list[BaseException] = []

    def generate() -> None:
        try:
            while not pipeline.generator.halted:
                if pipeline.generator.next_id >= records and nemesis_done.is_set():
                    return
                pipeline.check_processors()
                pipeline.generator.write(chunk, rate)
                progress.status(f"pipeline: {pipeline.generator.next_id} records written (at least {records}); "
                                f"nemesis step {len(schedule.done)} of {len(schedule.steps)} done")
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread below
            failure.append(exc)
            schedule.halt.set()

    writer = threading.Thread(target=generate, name="generator", daemon=True)
    writer.start()
    try:
        schedule.run()
    finally:
        nemesis_done.set()
        writer.join(deadline)
        pipeline.history.events.add("generator", "done", records=pipeline.generator.next_id)
        if writer.is_alive():
            pipeline.generator.halt()
            writer.join(30)
    if failure:
        # Raised as it is, so that its type keeps its verdict: a refusal stays a refusal, and the
        # harness's own trouble (a write that timed out, a generator that died) an ERROR, not a FAIL.
        failure[0].add_note(f"the workload failed with it; nemesis did {schedule.done}; {pipeline.describe()}")
        raise failure[0]
    if writer.is_alive():
        raise WorkerHung(f"the generator did not finish within {deadline}s; {pipeline.describe()}")
    pipeline.finish()
    return schedule
