"""`--replay ID` (a pytest plugin `kcts replay` loads with `-p harness.proxy.replaying`): the session's
cluster behind the protocol proxy carrying the rules of that replay of harness/replays.toml."""

from __future__ import annotations

import pytest

from harness.cluster.base import Cluster
from harness.proxy.cluster import ProxiedCluster


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("kcts").addoption(
        "--replay", default=None, metavar="ID",
        help="run against the target seen through the protocol proxy with the rules of replay ID "
             "(harness/replays.toml); node control stays the target's own",
    )


def behind_replay(config: pytest.Config, cluster: Cluster) -> Cluster:
    """`cluster`, or with the `--replay` option (only where this plugin is loaded), the same cluster
    through the proxy with that replay's rules; not started either way."""
    replay_id = config.getoption("replay", default=None)
    if not replay_id:
        return cluster
    from harness.proxy.replays import load

    replays = load()
    if replay_id not in replays:
        raise pytest.UsageError(f"--replay {replay_id}: no such replay in harness/replays.toml; known: "
                                f"{', '.join(replays)}")
    replay = replays[replay_id]
    return ProxiedCluster(cluster, replay.make_rules(), f"{replay.id} ({replay.link})")
