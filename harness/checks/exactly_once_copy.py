"""An exactly-once copy as its output and its group's commit show it (KIP-98 transactions, KIP-447).

A consume-transform-produce loop commits the offsets it consumed in the transaction that writes its
output, so the two move together: an input record below the group's committed offset has its copy
in the output, visible to read_committed, once; the output holds nothing else. A client that takes an
unconfirmed EndTxn for a commit moves its consumed offsets past records whose copies were rolled back
(franz-go before v1.21.4); one that redoes such a transaction keeps both in step.
"""

from __future__ import annotations

from collections import Counter

from harness.histories.kip1319 import ClientRun
from harness.protocol.errors import describe


def _reported(run: ClientRun) -> int:
    """How many records the copier said its committed transactions copied."""
    return sum(int(e.get("records") or 0) for e in run.named("transaction_committed"))


def assert_copied_exactly_once(run: ClientRun) -> None:
    """The output (read_committed) holds each input record once, in input order, nothing else: every
    input record below the group's committed offset is in it, and so is every record the copier
    reported copied in a transaction it took for committed (a copier redoes what was rolled back)."""
    written, visible = list(run.written), list(run.visible)
    trouble = []
    twice = sorted(v.decode(errors="replace") for v, n in Counter(visible).items() if n > 1)
    if twice:
        trouble.append(f"copied more than once: {twice[:10]}")
    foreign = [v.decode(errors="replace") for v in visible if v not in written]
    if foreign:
        trouble.append(f"in the output but no input record: {foreign[:10]}")
    if not twice and not foreign and visible != [v for v in written if v in visible]:
        trouble.append(f"out of input order: {[v.decode(errors='replace') for v in visible[:20]]}")
    reported = _reported(run)
    if reported > len(visible):
        trouble.append(f"it reported {reported} record(s) copied in transactions it took for committed, of which "
                       f"read_committed shows {len(visible)}: the application moved on past input it believes "
                       f"copied")
    for f in run.fetched:
        if f.error != 0:
            trouble.append(f"the group's commit of {f.topic}-{f.partition} read back as {describe(f.error)}")
            continue
        lost = [v.decode(errors="replace") for v in written[:max(f.offset, 0)] if v not in visible]
        if lost:
            trouble.append(f"the group committed {f.topic}-{f.partition} at offset {f.offset}, past {len(lost)} "
                           f"input record(s) whose copy read_committed does not show: {lost[:10]}")
    if not trouble and visible != written:
        trouble.append(f"the copy is not whole: {len(written) - len(visible)} input record(s) have no copy, "
                       f"{[v.decode(errors='replace') for v in written if v not in visible][:10]}")
    assert not trouble, (
        f"{run.client}: " + "; ".join(trouble) + f". It reported {_reported(run)} record(s) copied in committed "
        f"transactions and ended {run.outcome()!r} (exit {run.exit_code}); read_committed shows {len(visible)} of "
        f"the {len(written)} input records. Driver: {run.driver}\nProxy: {run.proxy}")
