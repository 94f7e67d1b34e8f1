"""KIP-320 "Consumer Handling" in Jepsen's terms: a consumer's history across an unclean election.

An unclean election truncates what the old leader alone held, and the new leader writes other records
at those offsets. Jepsen's anomaly checks over the history of every acknowledged send and one
consumer's polls then find two things that are the election's and the KIP's, not the consumer's:

- inconsistent-offsets at each truncated offset (the divergence offset up to the consumer's position
  before the election): the old record read there, the new leader's written there;
- one nonmonotonic-poll to the divergence offset: the consumer "resets to the divergence point"
  (KIP-320, "Consumer Handling": a truncation found by OffsetsForLeaderEpoch is reset "as precisely as
  possible"), re-reading from there what the new leader holds.

Anything else is the consumer's: a lost-write or unseen (a record the new leader holds, never read),
a poll-skip, a duplicate, a rewind elsewhere (to the log start: earliest applied blindly) or a second
one. A consumer without truncation detection reads on from its old position and shows the new
leader's records below it as lost writes.
"""

from __future__ import annotations

from harness.errors import require_scene, require_target
from harness.histories.unclean_anomalies import AnomalySeen, ConsumerAnomalies

INCONSISTENT, REWIND = "inconsistent-offsets", "nonmonotonic-poll"


def beyond_the_truncation(seen: ConsumerAnomalies) -> list[AnomalySeen]:
    """The cases the election and KIP-320's reset do not account for (see the module docstring)."""
    truncated = range(seen.divergence, seen.position_before)
    rewinds = [i for i, c in enumerate(seen.cases) if c.anomaly == REWIND and c.offset == seen.divergence]
    return [c for i, c in enumerate(seen.cases)
            if not (c.anomaly == INCONSISTENT and c.offset in truncated) and i not in rewinds[:1]]


def assert_only_the_truncation(seen: ConsumerAnomalies) -> None:
    """The consumer's history shows nothing but the truncation itself and at most one rewind, to the
    divergence offset; `seen.cases` must hold every case (the counts say how many there were).

    Its premise: the new leader acknowledged writes from the divergence offset on, below where the
    consumer was, so that a consumer reading on from its old position skips acknowledged records (a
    lost write); without them such a consumer would show nothing to judge."""
    require_target(seen.first_rewritten is not None,
                   f"{seen.consumer}: the new leader acknowledged none of the writes after the election")
    require_scene(seen.first_rewritten == seen.divergence < seen.position_before,
                  f"the harness's scene needs the new leader's first write at the divergence offset {seen.divergence} "
                  f"and the consumer beyond it: the first write is at {seen.first_rewritten}, the consumer was at "
                  f"{seen.position_before}")
    listed = sum(seen.counts.values())
    assert listed == len(seen.cases), f"{seen.consumer}: {listed} cases counted, {len(seen.cases)} listed"
    beyond = beyond_the_truncation(seen)
    shown = "; ".join(f"{c.anomaly} at {c.offset} ({c.value}): {c.detail}" for c in beyond[:6])
    assert not beyond, (
        f"{seen.consumer} ({seen.client}): its history across the unclean election (divergence at "
        f"{seen.divergence}, the consumer at {seen.position_before}, {seen.polls} records polled) shows "
        f"{len(beyond)} anomalies beyond the truncation: {shown}; all found: {seen.counts}"
    )
