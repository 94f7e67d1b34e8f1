"""What the group coordinator writes to `__consumer_offsets` for a plain OffsetCommit with a leader
epoch: at every OffsetCommit version from v6 (the first with CommittedLeaderEpoch), commit partition
0 of a topic to one group, then read the group's latest OffsetCommitValue for it back from the log
(decoded with the coordinator's own record schemas, as the KIP-1319 read-back does:
harness.scenarios.kip1319.persisted_offsets)."""

from __future__ import annotations

from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.cluster.base import Cluster
from harness.histories.offset_commits import SentCommit
from harness.histories.persisted_epochs import PersistedEpochs, PersistedRound
from harness.scenarios.kip1319 import persisted_offsets

FIRST_WITH_EPOCH = 6  # OffsetCommit v6 (KIP-320) carries CommittedLeaderEpoch


def persisted_commit_epochs(cluster: Cluster, topic: str, group: str) -> PersistedEpochs:
    with rr.RawConnector(cluster) as raw:
        # Reconnecting: the coordinator lookup (FindCoordinator) is asked again after a timeout.
        any_broker = raw(cluster.state.running_brokers()[0], reconnect=True)
        tid = rr.topic_id(any_broker, topic)
        gcoord = raw(tx.coordinator_id(any_broker, group, tx.GROUP_KEY))
        rounds: list[PersistedRound] = []
        for v in rr.versions(gcoord, "OffsetCommit", FIRST_WITH_EPOCH):
            # A different epoch and offset each version: a record left from the version before is seen.
            sent = SentCommit(300 + v, 40 + v, f"kcts persisted v{v}")
            code = rr.offset_commit(gcoord, v, group, topic, tid, 0, sent.offset, sent.epoch, sent.metadata)
            persisted, unreadable = persisted_offsets(raw, group, topic)
            if unreadable:
                return PersistedEpochs(topic, group, rounds, unreadable)
            found = next((p for p in persisted if p.partition == 0), None)
            rounds.append(PersistedRound(v, sent, code, found))
        return PersistedEpochs(topic, group, rounds, None)
