"""Epoch-validation probes: one request per (version, CurrentLeaderEpoch), answers shaped for the checks.

Each answer is what `harness.checks.epoch_fencing` judges: the API, version, broker, its role,
the epoch sent, the partition's epoch in Metadata at the time, and the partition response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.clients import raw as rr
from harness.protocol.client import RawClient
from suites.kip320.histories import EpochHistory

# Every case the KIP names: no epoch (-1), the current one, an older one, a newer one.
CASES = ("unset", "current", "older", "newer")


def requested_epochs(current: int) -> list[int]:
    return [rr.NO_EPOCH, current, current - 1, current + 1]


def probe(
    client: RawClient, broker: int, role: str, api: str, lowest: int, current: int,
    send: Callable[[int, int], dict[str, Any]], epoch_field_from: int,
) -> list[dict[str, Any]]:
    """Send `send(version, epoch)` for each version from `lowest` and each requested epoch; versions
    before `epoch_field_from` carry no CurrentLeaderEpoch and are sent once, without one."""
    answers = []
    for version in rr.versions(client, api, lowest):
        epochs = requested_epochs(current) if version >= epoch_field_from else [rr.NO_EPOCH]
        for epoch in epochs:
            answers.append({
                "api": api, "version": version, "broker": broker, "role": role,
                "requested_epoch": epoch, "current_epoch": current, "partition": send(version, epoch),
            })
    return answers


def fetch_answers(client: RawClient, broker: int, role: str, h: EpochHistory, current: int) -> list[dict[str, Any]]:
    return probe(
        client, broker, role, "Fetch", 0, current,
        lambda v, e: rr.fetch(client, v, h.topic, h.topic_id, 0, 0, current_epoch=e), epoch_field_from=9,
    )


def offsets_for_leader_epoch_answers(
    client: RawClient, broker: int, role: str, h: EpochHistory, current: int
) -> list[dict[str, Any]]:
    return probe(
        client, broker, role, "OffsetForLeaderEpoch", 2, current,
        lambda v, e: rr.offsets_for_leader_epoch(client, v, h.topic, 0, current, current_epoch=e), epoch_field_from=2,
    )


def list_offsets_answers(
    client: RawClient, broker: int, role: str, h: EpochHistory, current: int
) -> list[dict[str, Any]]:
    return probe(
        client, broker, role, "ListOffsets", 4, current,
        lambda v, e: rr.list_offsets(client, v, h.topic, 0, -1, current_epoch=e), epoch_field_from=4,
    )


def epoch_seen_by(raw: rr.RawConnector, broker: int, topic: str) -> dict[str, Any]:
    """The partition as `broker`'s own Metadata answer gives it (LeaderId, LeaderEpoch, IsrNodes)."""
    return rr.partition_metadata(raw(broker), topic)


def leader_and_follower(raw: rr.RawConnector, topic: str) -> tuple[int, int, int]:
    """(leader, an in-sync follower, epoch), where leader and follower agree on the epoch."""
    p = epoch_seen_by(raw, raw.cluster.running_brokers()[0], topic)
    p = epoch_seen_by(raw, p["LeaderId"], topic)
    follower = next(b for b in p["IsrNodes"] if b != p["LeaderId"])
    theirs = epoch_seen_by(raw, follower, topic)["LeaderEpoch"]
    assert theirs == p["LeaderEpoch"], (
        f"premise: leader {p['LeaderId']} is at epoch {p['LeaderEpoch']}, follower {follower} at {theirs}"
    )
    return p["LeaderId"], follower, p["LeaderEpoch"]
