"""KIP-359 "Proposed Changes": the leader epoch in Produce, and the fencing a broker does without it.

KIP-359 adds CurrentLeaderEpoch to each partition of a Produce request. Whether a target has it
is read from the Produce schema of each version it speaks. What every target does is the leader
check: a Produce to a replica that does not lead the partition is NOT_LEADER_OR_FOLLOWER, and
from Produce v10 on (KIP-951) the refusal names the current leader and its epoch (CurrentLeader)
and where to reach it (NodeEndpoints).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.histories.former_leader import FormerLeaderAnswer
from harness.histories.kip359 import OldVersionProduce
from harness.protocol.errors import FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, describe

# Read by the suites from here: a check's inputs, though scenarios read them too.
from harness.protocol.produce_schema import partition_fields, versions_with_epoch

__all__ = ["LEADER_HINT_VERSION", "assert_old_versions_append", "assert_refused_with_leader_hint",
           "partition_fields", "schema_evidence", "versions_with_epoch"]

LEADER_HINT_VERSION = 10  # KIP-951: CurrentLeader and NodeEndpoints in Produce responses


def schema_evidence(fields: Mapping[int, Sequence[str]], advertised: tuple[int, int]) -> str:
    """`Produce v3-13 partition fields ['Index', 'Records']; the broker advertises Produce v0-13`."""
    groups: list[tuple[int, int, list[str]]] = []
    for v in sorted(fields):
        names = list(fields[v])
        if groups and groups[-1][2] == names and groups[-1][1] == v - 1:
            groups[-1] = (groups[-1][0], v, names)
        else:
            groups.append((v, v, names))
    parts = [f"Produce v{lo}-{hi} partition fields {names}" for lo, hi, names in groups]
    return "; ".join(parts) + f"; the broker advertises Produce v{advertised[0]}-{advertised[1]}"


def assert_refused_with_leader_hint(
    answers: Sequence[FormerLeaderAnswer], leader: int, epoch: int, endpoint: tuple[str, int]
) -> None:
    """Produce answers from a replica that no longer leads are NOT_LEADER_OR_FOLLOWER with nothing
    appended, and from v10 on name `leader` at `epoch` (the Metadata view) and its endpoint."""
    assert answers, "no Produce answers to judge"
    wrong = []
    for a in map(FormerLeaderAnswer.coerce, answers):
        v = a.version
        where = f"Produce v{v} to former leader {a.broker}"
        if a.unreadable is not None or a.partition is None:
            wrong.append(f"{where}: an answer that is not a Produce v{v} response ({a.unreadable})")
            continue
        p = a.partition
        # BaseOffset of a refused write is -1 on Apache Kafka and 0, the field's default, on kfake:
        # neither appends, and the KIP promises the error and the leader hint, not the offset field.
        if p["ErrorCode"] != 6 or p["BaseOffset"] > 0:
            wrong.append(f"{where}: {describe(p['ErrorCode'])} base offset {p['BaseOffset']}, "
                         "expected NOT_LEADER_OR_FOLLOWER(6) and nothing appended")
            continue
        if v < LEADER_HINT_VERSION:
            continue
        hint = p.get("CurrentLeader") or {}
        got = (hint.get("LeaderId"), hint.get("LeaderEpoch"))
        if got != (leader, epoch):
            wrong.append(f"{where}: CurrentLeader (id, epoch) {got}, Metadata says ({leader}, {epoch})")
        nodes = {n["NodeId"]: (n["Host"], n["Port"]) for n in a.node_endpoints or []}
        if nodes.get(leader) != tuple(endpoint):
            wrong.append(f"{where}: NodeEndpoints {nodes} do not give leader {leader} at {endpoint[0]}:{endpoint[1]}")
    assert not wrong, "a Produce to a former leader is not refused with the current leader's hint:\n  " + "\n  ".join(
        wrong[:12]
    )


def assert_old_versions_append(h: OldVersionProduce) -> None:
    """KIP-359, "Public Interfaces" ("For old versions, we will skip the epoch validation and retain
    the current behavior") and "Compatibility" ("Older versions of the produce API will skip the epoch
    check"): each Produce at a version without CurrentLeaderEpoch, sent to the leader of a partition
    whose epoch moved above 0, is acknowledged (no error, above all no FENCED_LEADER_EPOCH or
    UNKNOWN_LEADER_EPOCH) and its record is in the log at the acknowledged offset."""
    assert h.appends, f"no Produce without CurrentLeaderEpoch was sent to leader {h.leader} of {h.topic}"
    at = {r.offset: r.value for r in h.log}
    wrong = []
    for a in h.appends:
        where = f"Produce v{a.version} (no CurrentLeaderEpoch) to leader {h.leader} at epoch {h.leader_epoch}"
        if a.unreadable is not None:
            # No client reads an acknowledgement out of it: the version's behaviour is not retained.
            wrong.append(f"{where}: an answer that is not a Produce v{a.version} response ({a.unreadable})")
        elif a.error in (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH):
            wrong.append(f"{where}: {describe(a.error)}, an epoch check on a version without the epoch")
        elif a.error != 0 or a.base_offset < 0:
            wrong.append(f"{where}: {describe(a.error)} base offset {a.base_offset}, not appended")
        elif at.get(a.base_offset) != a.value:
            found = at.get(a.base_offset)
            wrong.append(f"{where}: acknowledged at offset {a.base_offset}, where the log holds "
                         f"{found!r} instead of {a.value!r}" if found is not None else
                         f"{where}: acknowledged at offset {a.base_offset}, which the log read back lacks "
                         f"({len(h.log)} records)")
    assert not wrong, (
        f"{len(wrong)} of {len(h.appends)} Produce versions without CurrentLeaderEpoch are not appended as "
        "before KIP-359:\n  " + "\n  ".join(wrong[:12]))
