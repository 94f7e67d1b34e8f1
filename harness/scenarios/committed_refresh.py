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

from harness.clients.kip320_releases import client_release
from harness.cluster.base import Cluster
from harness.histories.client_reactions import METADATA
from harness.histories.committed_refresh import CommitFetched, CommittedRefreshRun
from harness.histories.observations import Body
from harness.protocol import errors
from harness.proxy.rules import StaleUntilCommitRead
from harness.proxy.server import Proxy
from harness.scenarios.client_fetch_epochs import epochs_learned, fetches_sent
from harness.scenarios.client_reactions import at, commit_ahead_of_a_move, names, read_through, sent_through


def _commits(response: Body, topic: str, tid: str) -> list[Body]:
    groups = response.get("Groups") or [response]
    return [p for g in groups for t in g.get("Topics") or () if names(t, topic, tid)
            for p in t.get("Partitions") or () if p.get("PartitionIndex") == 0]


def committed_epoch_refresh(cluster: Cluster, topic: str, client: str, group: str) -> CommittedRefreshRun:
    """See the module."""
    committed, written, tid = commit_ahead_of_a_move(cluster, topic, group)
    with Proxy.for_cluster(cluster) as proxy:
        t0 = time.monotonic()
        rule = proxy.add(StaleUntilCommitRead(topic=topic, behind=1, count=None))
        got, incomplete, named = read_through(cluster, proxy, topic, client, written[-1].offset,
                                              f"subscribe {{name}} {{none}} {group}")
        reads = tuple(CommitFetched(at(e.started + e.latency, t0), e.version, p.get("CommittedOffset", -1),
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
