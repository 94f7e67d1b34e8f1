"""The KIP-1094 guide's phase 3, on the client side: a group member whose metadata is behind the epoch of
the offset its group committed.

On a 3-replica partition: 20 records, a leader move, 10 more; the harness commits (25, the new epoch)
for the group outside any generation. Then `client` joins the group (no reset policy) through the
protocol proxy, whose Metadata answers show the partition one epoch behind until the client has been
answered its group's commit (the stale leader epoch the guide's Consumer B kept; a zombie leader at that
epoch would answer its fetch with OFFSET_OUT_OF_RANGE). Recorded with when: the OffsetFetch answers it
got, its Metadata requests and answers, and every Fetch of the partition it sent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from harness import confluent
from harness.clients import raw as rr
from harness.clients import transactions as tx
from harness.clients.history import produce
from harness.clients.kip320_releases import client_release
from harness.cluster.base import Cluster
from harness.errors import require_target
from harness.histories.client_reactions import METADATA, ClientRecord, Committed
from harness.histories.committed_refresh import CommitRead, CommittedRefreshRun
from harness.histories.observations import Body
from harness.nemesis.leadership import move_leader
from harness.protocol import errors
from harness.protocol.spec import ApiSpec
from harness.proxy.rules import OFFSET_FETCH, StaleLeaderEpoch
from harness.proxy.server import Proxy
from harness.scenarios.client_fetch_epochs import epochs_learned, fetches_sent
from harness.scenarios.client_reactions import at, names, read_through, sent_through

COMMITTED = 25


def _commits(response: Body, topic: str, tid: str) -> list[Body]:
    groups = response.get("Groups") or [response]
    return [p for g in groups for t in g.get("Topics") or () if names(t, topic, tid)
            for p in t.get("Partitions") or () if p.get("PartitionIndex") == 0]


@dataclass(eq=False)
class StaleUntilCommitRead(StaleLeaderEpoch):
    """StaleLeaderEpoch until an OffsetFetch has been answered through the proxy: the client's metadata
    is behind when it reads its group's commit however long joining the group takes (a number of stale
    answers ran out before a slow join read it), and true from then on, as a refresh must find it."""

    read: bool = field(default=False, init=False)

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == OFFSET_FETCH or (not self.read and super().acts_on_response(api_key, version))

    def edit_response(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        if api.key == OFFSET_FETCH:
            self.read = True
            return False
        return not self.read and super().edit_response(api, version, body)


def committed_epoch_refresh(cluster: Cluster, topic: str, client: str, group: str) -> CommittedRefreshRun:
    """See the module."""
    with confluent.producer({**cluster.client_config(), "acks": "all"}) as producer, \
            confluent.admin(cluster.client_config()) as admin, rr.RawConnector(cluster) as raw:
        produce(producer, topic, [f"before-{i}".encode() for i in range(20)])
        moved = move_leader(cluster, raw(cluster.running_brokers()[0]), admin, topic)
        after = produce(producer, topic, [f"after-{i}".encode() for i in range(10)]).acked
        any_broker = raw(cluster.running_brokers()[0], reconnect=True)
        tid = rr.topic_id(any_broker, topic)
        gcoord = raw(tx.coordinator_id(any_broker, group, 0), reconnect=True)
        committed = Committed(COMMITTED, moved.leader_epoch)
        version = gcoord.max_version("OffsetCommit")
        code = rr.offset_commit(gcoord, version, group, topic, tid, 0, COMMITTED, moved.leader_epoch, resend=True)
        require_target(code == 0, f"the group's commit of {committed} (OffsetCommit v{version}) was refused: "
                                  f"{errors.describe(code)}")
    written = tuple(ClientRecord(w.offset, w.value.decode()) for w in after if w.offset >= COMMITTED)
    with Proxy.for_cluster(cluster) as proxy:
        t0 = time.monotonic()
        rule = proxy.add(StaleUntilCommitRead(topic=topic, behind=1, count=None))
        got, incomplete, named = read_through(cluster, proxy, topic, client, written[-1].offset,
                                              f"subscribe {{name}} {{none}} {group}")
        reads = tuple(CommitRead(at(e.started + e.latency, t0), e.version, p.get("CommittedOffset", -1),
                                 p.get("CommittedLeaderEpoch", -1), errors.error_name(p.get("ErrorCode", 0)))
                      for e in sorted(proxy.recording.exchanges("OffsetFetch"), key=lambda e: e.started)
                      if e.response is not None and e.latency is not None
                      for p in _commits(e.response, topic, str(tid)))
        asked = tuple(at(e.started, t0) for e in sorted(proxy.recording.exchanges(METADATA), key=lambda e: e.started))
        learned, fetches = epochs_learned(proxy, topic, str(tid), t0), fetches_sent(proxy, topic, str(tid), t0)
        run = CommittedRefreshRun(client, committed, rule.fired, reads, asked, learned, fetches, written,
                                  tuple(got.reads), tuple(got.errors), incomplete, sent_through(proxy),
                                  client_release(client, named, cluster.java_clients))
    return run
