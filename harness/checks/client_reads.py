"""What a consumer hands the application of a log the harness wrote.

KIP-98 ("Public Interfaces", the consumer's isolation.level) gives the two levels: read_uncommitted
"consume both committed and uncommitted messages in offset ordering", read_committed "only consume
non-transactional messages or committed transactional messages in offset order". Whatever a Fetch
answer's AbortedTransactions holds, and in whatever order, the records handed are those.

KIP-1094's guide ("Offsets"): the committed offset "is then used to resume consumption from the
correct position in case the consumer restarts or a rebalance occurs within the consumer group".
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.client_reactions import require_answers_readable
from harness.histories.client_reads import GroupResume, IsolationRead
from harness.protocol.records import RecordBatch, committed_data, describe_log


def data_offsets(batches: Sequence[RecordBatch]) -> list[int]:
    """Every data record's offset (control records left out), in offset order."""
    return [r.offset for b in batches if not b.is_control for r in b.records]


def committed_offsets(batches: Sequence[RecordBatch]) -> list[int]:
    """The offsets of the data records a read_committed consumer is handed, in offset order."""
    return [r.offset for b in committed_data(batches) for r in b.records]


def _span(offsets: Sequence[int]) -> str:
    return f"{len(offsets)}: {list(offsets)}" if len(offsets) <= 12 else f"{len(offsets)}, {offsets[0]}..{offsets[-1]}"


def _reported(read: IsolationRead | GroupResume) -> str:
    return "; ".join(str(e) for e in read.errors[:3]) or "no error"


def handed_wrongly(read: IsolationRead, expected: Sequence[int]) -> bool:
    """Whether what the consumer handed so far is more than a prefix of `expected` (those it must hand,
    in order): a record it must not, one twice, out of offset order, or one past a record it left out.
    A consumer that has not read through yet hands a prefix."""
    handed = list(read.read)
    return bool(handed) and handed != [o for o in expected if o <= max(handed)]


def assert_hands(read: IsolationRead, expected: Sequence[int], batches: Sequence[RecordBatch]) -> None:
    """The consumer handed exactly `expected`, each once, in offset order."""
    require_answers_readable(read.client, read.errors)
    handed = list(read.read)
    if handed == list(expected):
        return
    missing = sorted(set(expected) - set(handed))
    extra = sorted(set(handed) - set(expected))
    repeated = sorted({o for o in handed if handed.count(o) > 1})
    trouble = ([f"it left out {_span(missing)}"] if missing else []) + \
        ([f"it handed {_span(extra)}, which {read.isolation} must not"] if extra else []) + \
        ([f"it handed {repeated} more than once"] if repeated else []) + \
        ([] if missing or extra or repeated else [f"out of offset order: {handed}"])
    stalled = "" if read.through else f", and handed nothing more within {read.waited:.0f} s"
    raise AssertionError(f"{read.client} at {read.isolation}: " + "; ".join(trouble) +
                         f" (it reported {_reported(read)}{stalled}); log {describe_log(batches)}")


def assert_read_uncommitted_hands_every_record(read: IsolationRead, batches: Sequence[RecordBatch]) -> None:
    """read_uncommitted: every data record, those of aborted transactions included, in offset order."""
    assert_hands(read, data_offsets(batches), batches)


def assert_read_committed_hands_committed_records_only(read: IsolationRead, batches: Sequence[RecordBatch]) -> None:
    """read_committed: the committed data records, none of an aborted transaction, in offset order."""
    assert_hands(read, committed_offsets(batches), batches)


def assert_resumes_from_the_committed_offset(resume: GroupResume) -> None:
    """The member's first record is the one at the group's committed offset, and it reads on from there
    to the log end, each record once."""
    require_answers_readable(resume.client, resume.errors)
    expected = list(range(resume.committed, resume.end))
    handed = list(resume.read)
    assert handed, (
        f"{resume.client} joined a group that had committed offset {resume.committed} (OffsetFetch read it back) "
        f"and handed the application nothing within {resume.waited:.0f} s; it reported {_reported(resume)}")
    assert handed == expected, (
        f"{resume.client} resumed the group's partition, committed at offset {resume.committed}, by handing "
        f"{_span(handed)}; from the committed offset to the log end is {_span(expected)} "
        f"(it reported {_reported(resume)})")
