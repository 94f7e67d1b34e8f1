"""What a broker owes about ended and open transactions, read on the wire.

- read_committed (KIP-98 defines LastStableOffset and AbortedTransactions in Fetch v4; the KIP-1094
  guide, "Control Records vs Data Records", relies on them: "either fully committed or aborted",
  the control records "not directly visible to applications"; KIP-320's Fetch schema keeps
  IsolationLevel): a Fetch at IsolationLevel 1 names each aborted transaction in its range
  (producer id, first offset), reports the first offset of the oldest open transaction as
  LastStableOffset, below the high watermark, and returns no batch at or past it.
- An aborted transaction commits no offset (the KIP-1094 guide, "Committing Specific Offsets": "When
  a transaction is aborted, the corresponding offsets are not committed either"): after a
  TxnOffsetCommit in an aborted transaction, every OffsetFetch version reads the offset committed
  before it.

The probes are the histories harness.scenarios.read_committed returns
(harness.histories.transactions_on_the_wire).
"""

from __future__ import annotations

from harness.errors import TargetRefused, require_scene, require_target
from harness.histories.offset_commits import CommitRead, SentCommit
from harness.histories.transactions_on_the_wire import AbortedCommits, ReadCommittedLog
from harness.protocol.errors import error_name
from harness.protocol.records import parse_batches

READ_COMMITTED = 1


def assert_read_committed_hides_aborted_and_open(log: ReadCommittedLog) -> None:
    """Every read_committed Fetch answer (v4+) as the module says; the scene's own offsets are the truth."""
    aborted, opened = log.aborted, log.open
    require_scene(log.before.last < aborted.first <= aborted.last < opened.first <= opened.last < log.after.first,
                  f"the writes did not land in the scene's order: before {log.before}, aborted {aborted}, "
                  f"open {opened}, after {log.after}")
    judged = [a for a in log.answers if a.isolation == READ_COMMITTED]
    require_scene(judged, "the scene sent no read_committed Fetch")
    lso, hw = opened.first, log.log_end
    wanted = {"ProducerId": aborted.producer_id, "FirstOffset": aborted.first}
    wrong = []
    for a in judged:
        p, where = a.partition, f"Fetch v{a.version} read_committed from 0"
        if p["ErrorCode"]:
            wrong.append(f"{where}: {error_name(p['ErrorCode'])}")
            continue
        if p["LastStableOffset"] != lso or p["HighWatermark"] != hw:
            wrong.append(f"{where}: LastStableOffset {p['LastStableOffset']}, HighWatermark {p['HighWatermark']}; "
                         f"expected LastStableOffset {lso} (the open transaction's first offset), HighWatermark {hw}")
        listed = [dict(t) for t in p["AbortedTransactions"] or []]
        if wanted not in listed or any(t["ProducerId"] == opened.producer_id for t in listed):
            wrong.append(f"{where}: AbortedTransactions {listed}; expected {wanted} (and not the open producer "
                         f"{opened.producer_id})")
        past = [(b.base_offset, b.last_offset) for b in parse_batches(p["Records"]) if b.last_offset >= lso]
        if past:
            wrong.append(f"{where}: batches {past} at or past LastStableOffset {lso}")
    assert not wrong, (
        f"{log.topic} (leader {log.leader}): aborted transaction {aborted}, open transaction {opened}, "
        f"high watermark {hw}:\n  " + "\n  ".join(wrong))


def _same(got: CommitRead, sent: SentCommit) -> bool:
    """The read names the sent offset (and its epoch, where the read version has the field)."""
    return got.offset == sent.offset and got.epoch in (None, sent.epoch)


def assert_aborted_commit_leaves_offsets_unchanged(commits: AbortedCommits) -> None:
    """After each aborted TxnOffsetCommit, every OffsetFetch reads the baseline; see the module."""
    base = commits.baseline
    require_target(base.code == 0 and _same(base.got, base.sent),
                   f"the baseline OffsetCommit {base.sent} of {commits.group} did not take: "
                   f"{error_name(base.code)}, read back {base.got}")
    control = commits.committed
    require_target(control.code == 0 and all(_same(r.got, control.sent) for r in control.reads),
                   f"a TxnOffsetCommit v{control.version} in a committed transaction did not commit either "
                   f"({error_name(control.code)}, read back {[r.got for r in control.reads]}): nothing "
                   "tells an aborted commit from one the coordinator ignores")
    require_scene(commits.rounds, "the scene aborted no transactional commit")
    wrong, refused = [], []
    for r in commits.rounds:
        if r.code:
            refused.append(f"TxnOffsetCommit v{r.version}: {error_name(r.code)}")
            continue
        for read in r.reads:
            if read.got.error or not _same(read.got, base.sent):
                wrong.append(f"after TxnOffsetCommit v{r.version} of {r.sent} was aborted, OffsetFetch "
                             f"v{read.version} read {read.got}")
    assert not wrong, (
        f"{commits.group}/{commits.topic}-0 committed {base.sent} before; an aborted transaction must "
        "leave it (the KIP-1094 guide, \"Committing Specific Offsets\"):\n  " + "\n  ".join(wrong))
    if refused:
        raise TargetRefused(f"the coordinator refused the transactional commit the check aborts at "
                            f"{', '.join(refused)}; the other versions kept the baseline")
