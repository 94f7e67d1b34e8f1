"""Probes whose answers are judged together, asked while the partition stays as the scene left it.

A check that compares answers with each other (Metadata v0 with the same broker's v13, ListOffsets
with the epoch Metadata gave) needs the partition's leader and every broker's view of it unchanged
while it asks. A cluster may move a leader of its own accord at any time: a broker that missed its
heartbeats is fenced and its leaderships move (KIP-631), which a loaded machine makes happen in the
middle of a probe. Answers given across such a move are each legal and judged together mean nothing,
so the probe is asked again, and a cluster that moves the partition during every try refuses the
check's premise, with the views it gave.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from harness.cluster.base import Cluster
from harness.errors import KctsError, TargetRefused

STEADY_TRIES = 3

T = TypeVar("T")
View = tuple[tuple[int, str], ...]


def views(cluster: Cluster, topic: str, partition: int = 0) -> View:
    """Each running broker's view of the partition's leader and epoch (or why it gave none)."""
    out = []
    for b in cluster.state.running_brokers():
        try:
            s = cluster.state.partition_state(topic, partition, b)
            out.append((b, f"leader {s.leader} epoch {s.leader_epoch}"))
        except KctsError:
            # Without its message: a timeout's text may differ from one read to the next, a lack of view not.
            out.append((b, "no view"))
    return tuple(out)


def while_steady(cluster: Cluster, topic: str, probe: Callable[[], T], what: str, tries: int = STEADY_TRIES) -> T:
    """`probe()`'s answers, from a try during which every running broker's view of the partition stayed
    the same; `TargetRefused` with the views before and after each try when none did."""
    moved = []
    for _ in range(tries):
        before = views(cluster, topic)
        answers = probe()
        after = views(cluster, topic)
        if before == after:
            return answers
        moved.append(f"before {_describe(before)}; after {_describe(after)}")
    raise TargetRefused(f"{what} needs {topic}-0 to stay as the scene left it while it asks, and the cluster "
                        f"moved it during each of {tries} tries:\n  " + "\n  ".join(moved))


def _describe(view: View) -> str:
    return ", ".join(f"broker {b}: {v}" for b, v in view)
