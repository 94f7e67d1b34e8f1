"""What Jepsen's anomaly checks found in one consumer's history across a forced unclean election.

The history (harness.histories.history) is the scene's (harness.scenarios.truncation): every record
the harness's writers sent, acknowledged or not, and every record the one consumer's driver reported,
before the election and after it. Jepsen's checks (harness.integrity.anomaly_checks) name what they
find in it; `ConsumerAnomalies` keeps their verdict with where the election truncated the log.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnomalySeen:
    """One case of a Jepsen anomaly class: the class (`lost-write`, `nonmonotonic-poll`, ...), the
    offset and value it is about, and the checker's words on it."""

    anomaly: str
    offset: int | None
    value: str | None
    detail: str


@dataclass(frozen=True)
class ConsumerAnomalies:
    """One consumer's history as judged: the consumer (`<stack>/<reset>`), its client and version as
    its driver named them, how many records it polled, the count of each class found, every case, the
    election's divergence offset, the position the consumer had reached before it, and where the new
    leader's acknowledged writes begin."""

    consumer: str
    client: str | None
    polls: int
    counts: dict[str, int]
    cases: tuple[AnomalySeen, ...]
    divergence: int
    position_before: int
    first_rewritten: int | None  # the offset of the new leader's first acknowledged write (None: none was)
