"""An external target: checks without node control run, the others skip saying why, and the run
leaves nothing behind on a cluster that is not its own (the session's cluster, which the harness's
other live tests use too: what it holds before the run is what it holds after)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.clients.admin import admin_client
from harness.cluster.base import Cluster

pytestmark = pytest.mark.live
REPO = Path(__file__).resolve().parents[2]


def names_on(cluster: Cluster) -> tuple[set[str], set[str]]:
    with admin_client(cluster) as admin:
        topics = {t for t in admin.list_topics(timeout=10).topics if not t.startswith("__")}
        groups = {g.group_id for g in admin.list_consumer_groups().result(timeout=10).valid}
    return topics, groups


def test_external_run_moves_leaders_skips_fault_checks_and_leaves_no_topic_or_group(
    cluster: Cluster, tmp_path: Path
) -> None:
    before = names_on(cluster)
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--backend", "external", "--bootstrap-servers",
         cluster.bootstrap_servers, "-m", "smoke", "--reports-dir", str(tmp_path), "--run-id", "ext"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    checks = json.loads((tmp_path / "ext" / "results.json").read_text())["checks"]
    results = {c["nodeid"].split("::")[1]: c for c in checks}
    assert results["test_every_acknowledged_record_is_read_back_in_order"]["cell"] == "pass", results
    # A clean failover is a leader move where the nodes are not the harness's; an unclean election
    # needs nodes it can stop.
    assert results["test_clean_leader_failover_loses_no_acknowledged_record"]["cell"] == "pass", results
    unclean = results["test_unclean_election_loses_exactly_the_truncated_range"]
    assert unclean["reason"] == "needs fault control; the target is external", unclean
    after = names_on(cluster)
    assert after == before, f"the run left behind topics {after[0] - before[0]} and groups {after[1] - before[1]}"
