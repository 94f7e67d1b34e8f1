"""KIP-320's zombie leader, made by cutting links: a leader cut off from the controller and the other
brokers goes on serving its clients; what it serves, what it keeps and what consumers do about it."""

from __future__ import annotations

import pytest

from fixtures.cluster import Cluster
from harness.checks.network_splits import (
    assert_truncated_to_the_new_leader,
    assert_zombie_refuses_the_new_epoch,
    assert_zombie_refuses_writes_at_the_new_epoch,
)
from harness.checks.produce_fencing import schema_evidence
from harness.checks.truncation import assert_resumed_at_divergence, assert_truncation_surfaced
from harness.histories import store
from harness.scenarios.network_splits import ZombieLeader
from harness.scenarios.truncation import NO_RESET
from harness.verdicts import not_supported, require_scene, require_target

pytestmark = [pytest.mark.partition, pytest.mark.needs_fault_control, pytest.mark.client_axis]


def _premise(zombie: ZombieLeader) -> None:
    """The cut-off broker is a zombie: it still sees itself leading at its old epoch and serves a Fetch
    at that epoch. A target whose cut-off leader steps down took no part in the scene."""
    p, e = zombie.probes, zombie.election
    require_target(p.view.get("LeaderId") == e.old_leader and p.view.get("LeaderEpoch") == e.epoch_before,
                   f"the cut-off broker {e.old_leader} did not stay a zombie: it no longer sees itself leading at "
                   f"epoch {e.epoch_before}; it said {p.view}")
    require_target(p.at_own_epoch is not None and p.at_own_epoch.error == "NONE",
                   f"the cut-off broker {e.old_leader} did not serve a Fetch at its own epoch {e.epoch_before} "
                   f"(it sees itself as {p.view}); it answered {p.at_own_epoch}")


@pytest.mark.promise("kip320.zombie.newer-epoch-refused")
def test_zombie_refuses_a_fetch_at_the_new_leaders_epoch(zombie: ZombieLeader) -> None:
    """KIP-320 "Replica Handling" and "Motivation": the cut-off leader still believes it leads at
    epoch N; a consumer that learned epoch N+1 fetches from it with CurrentLeaderEpoch N+1. At every
    Fetch version from v9, from offset 0 and from past the zombie's log end, the answer is
    UNKNOWN_LEADER_EPOCH (or FENCED_LEADER_EPOCH): never records and never OFFSET_OUT_OF_RANGE, which
    would send the consumer to its reset policy."""
    store.save("partition-zombie-fetches", {"view": zombie.probes.view, "own": zombie.probes.at_own_epoch,
                                            "new": zombie.probes.at_new_epoch})
    _premise(zombie)
    assert_zombie_refuses_the_new_epoch(zombie.probes.at_new_epoch, f"zombie {zombie.election.old_leader}",
                                        zombie.probes.fetch_advertised)


@pytest.mark.promise("kip359.produce.isolated-leader-refuses")
def test_zombie_refuses_a_write_at_the_new_leaders_epoch(zombie: ZombieLeader, cluster: Cluster) -> None:
    """KIP-359 "Motivation": with the leader epoch in Produce, "it makes it less likely that a write
    will be accepted by a stale leader". A producer that learned the new epoch writes (acks=1) to the
    cut-off leader, which still believes it leads at the old one: at every Produce version whose
    schema carries CurrentLeaderEpoch the answer is an epoch error and nothing is appended. A target
    without the field takes such writes as the zombie's own acks=1 writes show: "not supported",
    with its Produce schema and those writes as evidence."""
    p = zombie.probes
    store.save("partition-zombie-writes", {"fields": {str(v): f for v, f in p.produce_fields.items()},
                                           "advertised": list(p.produce_advertised), "acked": p.acked,
                                           "at_new_epoch": p.writes_at_new_epoch, "log": p.log})
    _premise(zombie)
    if not p.writes_at_new_epoch:
        not_supported("KIP-359 CurrentLeaderEpoch in Produce",
                      f"{schema_evidence(p.produce_fields, p.produce_advertised)}; the cut-off broker {p.zombie} "
                      f"took {len(p.acked)} of its acks=1 writes without it",
                      target=cluster.target, capability="produce-current-leader-epoch")
    assert_zombie_refuses_writes_at_the_new_epoch(p.writes_at_new_epoch, p.log, f"zombie {p.zombie}")


@pytest.mark.promise("kip320.replica.truncates-to-divergence")
def test_former_leader_truncates_what_only_it_held(zombie: ZombieLeader) -> None:
    """KIP-320 "Replica Handling" (with KIP-101's epoch-based truncation): reconnected, the former
    leader truncates its log to the divergence point and then holds exactly the new leader's log:
    the records it alone took (acks=1) before and while it was cut off are gone."""
    store.save("partition-zombie-logs", {
        "old": zombie.old_leader_log, "new": zombie.new_leader_log, "acked_by_zombie": zombie.probes.acked,
        "gone": zombie.only_the_zombie_held, "divergence": zombie.election.divergence_offset})
    e = zombie.election
    require_target(zombie.probes.acked, f"the zombie acknowledged none of the harness's acks=1 writes while cut off, "
                                        f"so it held nothing of its own to truncate ({zombie.evidence()})")
    require_scene(e.truncated, f"the forced unclean election diverged nothing: the new leader's log end "
                               f"{e.divergence_offset} is not below the old leader's {e.old_leader_leo_before} "
                               f"({zombie.evidence()})")
    gone = zombie.only_the_zombie_held
    assert set(a.value for a in zombie.probes.acked) <= set(gone), (
        f"the zombie's log while cut off ({len(zombie.probes.log)} records) lacks writes it acknowledged "
        f"{zombie.probes.acked} (Produce acks=1: the leader has appended the record to its log when it answers)")
    try:
        assert_truncated_to_the_new_leader(zombie.old_leader_log, zombie.new_leader_log, e.divergence_offset, gone)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {zombie.evidence()}") from None


@pytest.mark.parametrize("reset", ["earliest", "latest"])
@pytest.mark.parametrize("client", ["librdkafka", "java"])
@pytest.mark.promise("kip320.consumer.resets-to-divergence")
def test_consumer_served_by_the_zombie_resumes_at_the_divergence(
    zombie: ZombieLeader, client: str, reset: str
) -> None:
    """KIP-320 "Consumer Handling": a consumer that read records only the zombie held learns of the
    new epoch, finds the divergence with OffsetsForLeaderEpoch and resumes exactly there, reading
    every record the new leader wrote. What the zombie served before the consumer could know (its
    own acks=1 writes) is kept as evidence and not judged."""
    t = zombie.truncation
    name = f"{client}/{reset}"
    o = t.observed[name]
    store.save(f"partition-zombie-{client}-{reset}", {
        "reads": o.reads, "errors": o.errors, "zombie_reads": zombie.zombie_reads[name], "divergence": t.divergence,
        "position_before": t.position_before, "new_leader_writes": t.new_leader_writes})
    try:
        assert_resumed_at_divergence(client, o.reads, o.errors, t.divergence, t.position_before, t.new_leader_writes)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {zombie.evidence()}") from None


@pytest.mark.parametrize("client", ["librdkafka", "java"])
@pytest.mark.promise("kip320.consumer.raises-log-truncation")
def test_consumer_without_reset_policy_surfaces_the_zombies_truncation(zombie: ZombieLeader, client: str) -> None:
    """KIP-320 "Consumer Handling": with no reset policy, the truncation the zombie's replacement
    caused is raised to the application (LogTruncationException with the divergent offset; in
    librdkafka an _AUTO_OFFSET_RESET error naming it), and nothing past it is read."""
    t = zombie.truncation
    o = t.observed[f"{client}/{NO_RESET[client]}"]
    try:
        assert_truncation_surfaced(client, o.reads, o.errors, t.divergence)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  {zombie.evidence()}") from None

