"""KIP-1319 errors that v6 must not leak into v0-v5, nor borrow from the consumer protocol.

- "Public Interfaces" (the error table: UNKNOWN_TOPIC_ID's prior behaviour is "N/A (topic names
  used)") and "For v0-5, all existing error mappings are preserved": a v0-v5 commit naming a topic
  no broker knows gets UNKNOWN_TOPIC_OR_PARTITION for it, never UNKNOWN_TOPIC_ID, and the known topic
  of the same request is answered NONE.
- "Public Interfaces" (GenerationIdOrMemberEpoch: "The generation of the group if using the classic
  group protocol") and "Proposed Changes > Broker-Side > Error mapping" (STALE_MEMBER_EPOCH is for "the
  new consumer group protocol"): in a classic group a stale generation is ILLEGAL_GENERATION at v6
  as at v5, v4 and v3, and the current generation commits at each.
"""

from __future__ import annotations

from harness.checks.kip1319 import (
    dump_exchange,
    fail_if,
    partition_problems,
    requested,
    stale_and_current_problems,
)
from harness.errors import NotSupported, TargetRefused
from harness.histories.kip1319 import ClassicGenerationAnswers, UnknownNameAnswers

LAST_BY_NAME = 5


def assert_unknown_topic_name_is_unknown_topic_or_partition(answers: UnknownNameAnswers) -> None:
    """At every version v0-v5 asked, the never-created name gets UNKNOWN_TOPIC_OR_PARTITION and the
    known topic NONE."""
    exchanges = answers.exchanges
    if not exchanges:
        raise NotSupported("TxnOffsetCommit v0-v5", "the coordinator speaks none of them")
    wrong = []
    for name, ex in sorted(exchanges.items()):
        if ex.version > LAST_BY_NAME:
            wrong.append(f"{name}: the exchange is v{ex.version}, not one of v0-v{LAST_BY_NAME}")
            continue
        expected = {k: ("UNKNOWN_TOPIC_OR_PARTITION", "v0-5 name topics: an unknown name keeps its old error, "
                                                      "UNKNOWN_TOPIC_ID is v6's")
                    if k[0] == answers.missing else ("NONE", "a known topic commits")
                    for k in requested(ex)}
        wrong += [f"{name} {w}" for w in partition_problems(ex, expected)]
    fail_if(wrong, f"TxnOffsetCommit v0-v{LAST_BY_NAME} must answer the unknown topic name "
                   f"{answers.missing!r} with UNKNOWN_TOPIC_OR_PARTITION",
            "\n".join(dump_exchange(ex) for _, ex in sorted(exchanges.items())))


def assert_classic_stale_generation_is_illegal_generation(answers: ClassicGenerationAnswers) -> None:
    """In a classic group, the member's previous generation gets ILLEGAL_GENERATION at v6 and at every
    older version asked, and its current generation commits at each: the generation alone decides."""
    at, stale, current = answers.generation, answers.stale, answers.current
    if at < 2:
        raise TargetRefused(f"classic group member {answers.member_id} did not reach a second generation "
                            f"(generation {at}), so no earlier one is stale")
    wrong = stale_and_current_problems(stale, current, at, "generation", "ILLEGAL_GENERATION")
    evidence = "\n".join(dump_exchange(ex) for r in (stale, current) for _, ex in r.all())
    fail_if(wrong, f"classic group at generation {at}: a stale generation is ILLEGAL_GENERATION at every "
                    "version, v6 included (STALE_MEMBER_EPOCH is the consumer protocol's)", evidence)
