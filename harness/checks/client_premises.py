"""What the target owes a client before a check of the client can judge it: where the target's part
is missing, the client did what the KIP asks of a client in that case, so the check ends as "target
refused the premise", with what the target answered as the evidence, never as the client's FAIL or lack.

The KIP-320 premises (a leader epoch in Metadata, in ListOffsets) are next to the checks that need
them (harness.checks.client_reactions, harness.checks.client_fetch_epochs); here are the others.
"""

from __future__ import annotations

from harness.checks.kip1319 import TRANSIENT
from harness.errors import TargetRefused
from harness.histories.kip1319 import ClientRun
from harness.protocol.client import Exchange
from harness.protocol.errors import UNSUPPORTED_VERSION, describe
from harness.protocol.types import ZERO_UUID


def require_topic_ids(run: ClientRun) -> None:
    """KIP-1319 "Proposed Changes > Producer-Side > Topic ID resolution": a producer sends
    TxnOffsetCommit v6 keyed by the topic IDs its Metadata gives, and ("Fallback") v5 for the whole
    request when a topic of the offsets has none. So a check of what a client does with v6 is judged
    only where the target has an ID for every topic of the offsets, as its Metadata answered the
    harness (`run.asked`, before the client ran); the zero UUID there is the target's missing part:
    "target refused the premise". (A scene whose proxy withholds an ID from the client needs the same:
    the withheld ID must be the proxy's doing.)"""
    zero = sorted({a.topic for a in run.asked if a.topic_id == ZERO_UUID})
    if zero:
        raise TargetRefused(
            f"the target's Metadata gives no topic ID (the zero UUID) for {zero}, the topics {run.client} was to "
            f"commit offsets of: a client keys TxnOffsetCommit v6 by topic ID and sends v5 without one (KIP-1319 "
            f"\"Producer-Side > Fallback\"), so what it sent judges nothing of it; asked {list(run.asked)}; "
            f"{run.broker.describe()}")


def require_commits_accepted(run: ClientRun) -> None:
    """A client check of what a client does around its TxnOffsetCommits presumes the target accepts a
    well-formed one at all. Where it accepted none of the client's commits past the harness's own
    injected answers, and every answer it gave was one only the broker owns (a retriable error that
    never cleared, which KIP-1319 "Producer-Side" has the client retry; UNSUPPORTED_VERSION at a
    version the broker advertised, which the client was entitled to use: the protocol guide's
    "Versioning and Compatibility"), the client had nothing to be judged on: "target refused the
    premise", with the answers. The broker's part is judged by the raw checks of suites/kip1319/
    test_broker_v6.py. Any other answer stays for the client checks to judge: UNSUPPORTED_VERSION at a
    version the broker did not advertise is the client's doing."""
    injected = run.injected.fired if run.injected is not None else 0
    commits = run.commits[injected:]
    answers = [_codes(c) for c in commits]
    if not answers or any(codes == [0] for codes in answers):
        return
    for commit, codes in zip(commits, answers, strict=True):
        if not set(codes) <= TRANSIENT | {UNSUPPORTED_VERSION}:
            return
        if UNSUPPORTED_VERSION in codes and not run.broker.supports(commit.version):
            return
    raise TargetRefused(
        f"the target accepted none of the {len(answers)} TxnOffsetCommits {run.client} sent (past "
        f"{injected} injected answers): each was answered {sorted({describe(c) for a in answers for c in a})}, "
        f"which only the broker owns (at versions {sorted({c.version for c in commits})}), so what the client "
        f"does with an accepted commit cannot be judged; {run.broker.describe()}")


def _codes(commit: Exchange) -> list[int]:
    return sorted({p["ErrorCode"] for t in (commit.response or {}).get("Topics") or [] for p in t["Partitions"]})
