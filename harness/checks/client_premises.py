"""What the target owes a client before a check of the client can judge it (issue 41, "the wrong
party blamed"): where the target's part is missing, the client did what the KIP asks of a client in
that case, so the check ends as "target refused the premise", with what the target answered as the
evidence, never as the client's FAIL or lack.

The KIP-320 premises (a leader epoch in Metadata, in ListOffsets) are next to the checks that need
them (harness.checks.client_reactions, harness.checks.client_fetch_epochs); here are the others.
"""

from __future__ import annotations

from harness.errors import TargetRefused
from harness.histories.kip1319 import ClientRun
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
            f"{run.broker}")
