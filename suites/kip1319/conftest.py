"""Fixtures of the KIP-1319 checks: run names, the v6 gate, and the side clusters some checks need.

The side clusters (SASL + StandardAuthorizer, transaction.version=1, a broker without KIP-1319)
are one-broker local clusters of their own, started ahead of the first module that asks for them
(fixtures.side_clusters) and closed at that module's end. Their node logs go to the run's `nodes/<name>/` and into the
evidence of failing tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from fixtures.cluster import Cluster
from fixtures.side_clusters import PRE_KIP, TV1, side_cluster
from fixtures.topics import RunNames
from harness import verdicts
from harness.scenarios import kip1319

RequireV6 = kip1319.RequireV6


@pytest.fixture
def unique(run_names: RunNames) -> Callable[[str], str]:
    """`unique("txn")` -> a fresh name for a transactional id or group of this test.

    Names carry the run prefix and are deleted as groups at the end of a run on an external
    target (a transactional id that is no group is simply not found there).
    """
    return run_names.group


@pytest.fixture(scope="session")
def require_v6(cluster: Cluster) -> RequireV6:
    """`require_v6(what, on=target)` -> what `on` advertises for TxnOffsetCommit; the check ends as
    "not supported by this target" unless that includes v6 (KIP-1319), with the range as evidence."""

    def require(what: str, on: Cluster | None = None) -> kip1319.Advertised:
        target = on or cluster
        found = kip1319.advertised(target)
        if not found.supports(kip1319.KIP_VERSION):
            verdicts.not_supported(f"{what} (TxnOffsetCommit v{kip1319.KIP_VERSION}, KIP-1319)", found.describe(),
                                   target=target.target, capability="txn-offset-commit-v6")
        return found

    return require


@pytest.fixture(scope="module")
def sasl_cluster(request: pytest.FixtureRequest, require_v6: RequireV6) -> Cluster:
    """The session's SASL side cluster (fixtures.side_clusters.sasl_side_cluster). Only the v6
    authorization checks use it: a target without v6 starts none for them."""
    require_v6("TxnOffsetCommit v6 authorization checks")
    return request.getfixturevalue("sasl_side_cluster")


@pytest.fixture(scope="module")
def acls(sasl_cluster: Cluster) -> kip1319.AclSetup:
    """Topics and alice's ACLs on the SASL cluster, once per module."""
    return kip1319.acl_setup(sasl_cluster)


@pytest.fixture(scope="module")
def tv1_cluster(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[Cluster]:
    """The target's version, formatted with transaction.version=1 (no Transaction V2)."""
    features = kip1319.features(cluster)
    if not kip1319.speaks_transaction_version_1(features):
        verdicts.not_supported(f"the {kip1319.TRANSACTION_VERSION} feature (KIP-890)", features.describe(),
                               target=cluster.target, capability="transaction-version-2")
    with side_cluster(request, cluster, TV1) as side:
        yield side


@pytest.fixture(scope="module")
def pre_kip_cluster(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[Cluster]:
    """A broker of a release without KIP-1319: the session's own when it is that release already."""
    if cluster.target.version == kip1319.PRE_KIP_RELEASE:
        yield cluster
        return
    with side_cluster(request, cluster, PRE_KIP) as side:
        yield side
