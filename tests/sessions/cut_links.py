"""Run as a script by tests/harness/test_link_faults.py: a local cluster with a cut link, held until killed.

Prints one JSON line once the cut is in force: the session id, the table, the cgroup root, what of
the session is on the machine, and the count of packets the nodes sent off loopback. With `close`,
it then heals, closes the cluster and prints what is left; otherwise it waits to be killed.
"""

from __future__ import annotations

import json
import sys
import time

from harness import session
from harness.cluster.local import LocalCluster, LocalClusterSpec
from harness.network.links import LinkFault, leftovers


def main(mode: str) -> None:
    cluster = LocalCluster(LocalClusterSpec(brokers=2))
    with cluster:
        assert cluster.links is not None, cluster.no_links
        cluster.cut_links([LinkFault(1, 2), LinkFault(2, 1000)])
        sid = session.current().id
        print(json.dumps({
            "session": sid, "table": cluster.links.table, "cgroups": str(cluster.links.cgroup_root),
            "in_force": cluster.links_in_force(), "present": leftovers(sid),
            "off_loopback": cluster.links.off_loopback_packets(),
        }), flush=True)
        if mode != "close":
            while True:
                time.sleep(1)
        cluster.heal_links()
    print(json.dumps({"left": leftovers(sid)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "hold")
