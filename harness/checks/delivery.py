"""One producer's writes against the log: the anomalies an idempotent producer must never show.

Names follow Jepsen's Kafka checker: a lost write (acknowledged, not in the log), a duplicate (in
the log twice), a gap (a later write is in the log, an earlier one is not), a reorder (the log
holds the producer's writes out of send order), inconsistent offsets (the ack named an offset
that holds something else; an ack that names no offset claims none), and failed sends (an
idempotent producer retries until delivered).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

from harness.histories.text_records import Ack, LogRecord


def anomalies(
    sent: Sequence[str], acks: Sequence[Ack], failures: Sequence[str], log: Sequence[LogRecord]
) -> dict[str, list[object]]:
    """`sent`: values in send order; `acks`: what the producer was told; `log`: every record of the
    partition (other writers' too). Returns each anomaly with its cases."""
    sent_at = {v: i for i, v in enumerate(sent)}
    in_log = [r for r in log if r.value in sent_at]
    counts = Counter(r.value for r in in_log)
    present = set(counts)
    at_offset = {r.offset: r.value for r in log}
    last_present = max((sent_at[v] for v in present), default=-1)
    order = [sent_at[r.value] for r in sorted(in_log, key=lambda r: r.offset)]
    found: dict[str, list[object]] = {
        "lost": [a.value for a in acks if a.value not in present],
        "duplicate": [v for v, n in counts.items() if n > 1],
        "gap": [v for v in sent[: last_present + 1] if v not in present],
        "reorder": [(sent[a], sent[b]) for a, b in itertools.pairwise(order) if b < a],
        # An ack without an offset claims none: librdkafka reports a retried batch that the broker
        # answers with DUPLICATE_SEQUENCE_NUMBER (already written) as delivered at an unknown offset.
        "inconsistent_offset": [
            (a.value, a.offset, at_offset.get(a.offset))
            for a in acks
            if a.offset is not None and a.offset >= 0 and at_offset.get(a.offset) != a.value
        ],
        "failed_send": list(failures),
    }
    return {name: cases for name, cases in found.items() if cases}


def assert_exactly_once_in_order(
    client: str,
    sent: Sequence[str],
    acks: Sequence[Ack],
    failures: Sequence[str],
    log: Sequence[LogRecord],
) -> None:
    """Every write sent is acknowledged and in the log once, in send order, at its acknowledged offset."""
    assert sent, f"{client} sent nothing"
    found = anomalies(sent, acks, failures, log)
    if len(acks) != len(sent) and "failed_send" not in found:
        acked = {a.value for a in acks}
        found["unacknowledged"] = [v for v in sent if v not in acked][:5]
    assert not found, (
        f"{client}: {len(sent)} sent, {len(acks)} acknowledged, {_records_of(sent, log)} of its records in the "
        f"log of {len(log)}; anomalies: "
        + "; ".join(f"{name} x{len(cases)} (first {cases[:3]})" for name, cases in found.items())
    )


def _records_of(sent: Sequence[str], log: Sequence[LogRecord]) -> int:
    """How many records of the partition's log, which other clients' writes may share, are this client's."""
    ours = set(sent)
    return sum(1 for r in log if r.value in ours)
