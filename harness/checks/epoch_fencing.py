"""KIP-320 epoch validation: which error a replica owes a request carrying a CurrentLeaderEpoch.

The rule (KIP-320, "Leader Fetch Handling"; OffsetsForLeaderEpoch and ListOffsets "validate it
similarly"): an epoch older than the replica's is FENCED_LEADER_EPOCH, a newer one
UNKNOWN_LEADER_EPOCH, and -1 skips the check. Only then does the replica's role count. The KIP
says a follower answers a fetch with one of the epoch errors where it used to say
NOT_LEADER_FOR_PARTITION; KIP-392 (fetch from follower, Kafka 2.4) later let a follower serve
consumer fetches of version 11 and up, so a follower with a matching epoch serves those, and
answers NOT_LEADER_OR_FOLLOWER below v11 and to every OffsetsForLeaderEpoch and ListOffsets.

An answer here is one request's outcome, an EpochProbe (harness.histories.epoch_validation).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import require_scene
from harness.histories.authorization import OffsetsForEpochAsUser
from harness.histories.epoch_validation import EpochProbe
from harness.histories.observations import Body
from harness.histories.version_needs import FETCH_FROM_FOLLOWER
from harness.protocol.errors import error_name
from harness.protocol.records import count_entries
from harness.protocol.sentinels import NO_EPOCH

FETCH_FROM_FOLLOWER_VERSION = FETCH_FROM_FOLLOWER.first  # KIP-392: a follower serves consumer fetches from v11 on
SERVED = "NONE"
FENCED = "FENCED_LEADER_EPOCH"
UNKNOWN = "UNKNOWN_LEADER_EPOCH"
NOT_LEADER = "NOT_LEADER_OR_FOLLOWER"


def expected_epoch_error(requested: int, current: int) -> str:
    """The epoch check alone: FENCED for older, UNKNOWN for newer, NONE for equal or -1."""
    if requested == NO_EPOCH or requested == current:
        return SERVED
    return FENCED if requested < current else UNKNOWN


def expected_answer(api: str, role: str, version: int, requested: int, current: int) -> str:
    """The error name a replica in `role` owes `api` at `version` for CurrentLeaderEpoch `requested`."""
    epoch_error = expected_epoch_error(requested, current)
    if epoch_error != SERVED or role == "leader":
        return epoch_error
    if api == "Fetch" and version >= FETCH_FROM_FOLLOWER_VERSION:
        return SERVED
    return NOT_LEADER


def _served_problem(api: str, p: Body) -> str | None:
    """Why a served answer carries no data, or why an error answer carries some (None if consistent)."""
    ok = p["ErrorCode"] == 0
    if api == "Fetch":
        # Counted, not decoded: Fetch below v4 answers 3.x's down-converted magic 0/1 messages.
        batches = count_entries(p.get("Records"))
        if ok and not batches:
            return f"served but returned no record batch (HighWatermark {p['HighWatermark']})"
        # The KIP promises the error and no records; the HighWatermark of a refused fetch is -1 on
        # Apache Kafka and 0 on kfake, and no promise of the KIP's (read against kfake, 2026-11).
        if not ok and batches:
            return f"refused but returned {batches} batch(es), HighWatermark {p['HighWatermark']}"
    elif api == "ListOffsets":
        if ok and p["Offset"] < 0:
            return f"served but returned offset {p['Offset']}"
        if not ok and (p["Offset"], p["LeaderEpoch"]) != (-1, -1):
            return f"refused but returned offset {p['Offset']} epoch {p['LeaderEpoch']}"
    elif api == "OffsetForLeaderEpoch":
        if ok and p["EndOffset"] < 0:
            return f"served but returned end offset {p['EndOffset']}"
        # The KIP promises the error and no end offset; the LeaderEpoch beside them is -1 on Apache
        # Kafka and the one asked on librdkafka's mock (rd_kafka_mock_handle_OffsetForLeaderEpoch writes
        # the request's whatever the error), and no promise of the KIP's (read against the mock, 2026-11).
        if not ok and p["EndOffset"] != -1:
            return f"refused but returned epoch {p['LeaderEpoch']} end offset {p['EndOffset']}"
    elif api == "Produce":
        if ok and p["BaseOffset"] < 0:
            return f"accepted but returned base offset {p['BaseOffset']}"
        if not ok and p["BaseOffset"] > 0:  # -1 on Apache Kafka, 0 (the field's default) on kfake
            return f"refused but appended at {p['BaseOffset']}"
    return None


def describe_answer(a: EpochProbe) -> str:
    return (
        f"{a.api} v{a.version} to {a.role} {a.broker} with CurrentLeaderEpoch {a.requested_epoch} "
        f"(partition epoch {a.current_epoch}): {error_name(a.partition['ErrorCode'])}"
        f"({a.partition['ErrorCode']})"
    )


def assert_epoch_validation(answers: Sequence[EpochProbe], context: str = "") -> None:
    """Every answer is the one `expected_answer` gives, and carries data exactly when it is served."""
    assert answers, f"no answers to judge {context}".rstrip()
    wrong = []
    for a in map(EpochProbe.coerce, answers):
        want = expected_answer(a.api, a.role, a.version, a.requested_epoch, a.current_epoch)
        got = error_name(a.partition["ErrorCode"])
        if got != want:
            wrong.append(f"{describe_answer(a)}, expected {want}")
            continue
        problem = _served_problem(a.api, a.partition)
        if problem:
            wrong.append(f"{describe_answer(a)}: {problem}")
    assert not wrong, (
        f"{len(wrong)} of {len(answers)} answers break the KIP-320 epoch rule {context}:\n  " + "\n  ".join(wrong[:12])
    )


def assert_covers(answers: Sequence[EpochProbe], needed: set[str]) -> None:
    """The probe reached each case it is meant to judge (stale, newer, current, -1)."""
    seen = set()
    for a in map(EpochProbe.coerce, answers):
        r, c = a.requested_epoch, a.current_epoch
        seen.add("unset" if r == NO_EPOCH else "current" if r == c else "older" if r < c else "newer")
    missing = needed - seen
    assert not missing, f"the probe never sent a CurrentLeaderEpoch that is {sorted(missing)}; sent {sorted(seen)}"


CONSUMER = -1  # the ReplicaId of a consumer's request


def assert_offsets_for_epoch_authorized_by_describe(answers: Sequence[OffsetsForEpochAsUser], user: str) -> None:
    """KIP-320 "Consumer Handling" made OffsetsForLeaderEpoch a consumer API: a user who may describe a
    topic is answered (its epoch and end offset) as a consumer (ReplicaId -1), and is refused no
    authorization whatever ReplicaId the request carries (the debug id -2, a broker's id); a user who
    may not gets TOPIC_AUTHORIZATION_FAILED and no offset. What a target answers a non-consumer
    ReplicaId otherwise is not KIP-320's: a broker with no followers may not serve a follower's
    request (kfake: "Only supports consumer replica ID (-1)")."""
    require_scene(answers and {a.allowed for a in answers} == {True, False},
                  f"the harness asked OffsetsForLeaderEpoch of no allowed and no denied topic: "
                  f"{sorted({(a.topic, a.allowed) for a in answers})}")
    wrong = []
    for a in answers:
        p, name = a.partition, error_name(a.partition["ErrorCode"])
        refused_as_other = a.replica_id != CONSUMER and name != SERVED and "AUTHORIZATION" not in name
        if a.allowed and not refused_as_other and (name, p["LeaderEpoch"], p["EndOffset"]) != (
                SERVED, a.epoch, a.log_end):
            wrong.append(f"ReplicaId {a.replica_id} on {a.topic} (DESCRIBE allowed): {name}, epoch "
                         f"{p['LeaderEpoch']} end offset {p['EndOffset']}; expected NONE, epoch {a.epoch} end "
                         f"offset {a.log_end}")
        if not a.allowed and (name, p["EndOffset"]) != ("TOPIC_AUTHORIZATION_FAILED", -1):
            wrong.append(f"ReplicaId {a.replica_id} on {a.topic} (no ACL): {name}, end offset {p['EndOffset']}; "
                         "expected TOPIC_AUTHORIZATION_FAILED")
    assert not wrong, f"OffsetsForLeaderEpoch as {user}:\n  " + "\n  ".join(wrong)
